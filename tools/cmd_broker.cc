// hlox broker --bind ADDR --db PATH [--curve-secret FILE --allow DIR | --insecure]
// [--metrics HOST:PORT [--metrics-token-file FILE]]: serves agents and workers until a control
// "shutdown"; SIGHUP re-reads the allow folder.
#include <csignal>
#include <iostream>

#include "broker/broker.h"
#include "monitor/http_monitor.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

broker::Broker* g_broker = nullptr;
void OnSignal(int) {
  if (g_broker) g_broker->Stop();
}
void OnHangup(int) {
  if (g_broker) g_broker->RequestReload();
}

}  // namespace

void RegisterBroker(CLI::App& app) {
  auto opts = std::make_shared<broker::BrokerOptions>();
  auto* cmd = app.add_subcommand("broker", "run the job broker (agents and workers connect to it)");
  cmd->add_option("--bind", opts->bind, "address for agents and workers (tcp://HOST:PORT, ipc://PATH)")
      ->capture_default_str();
  cmd->add_option("--control", opts->control_bind,
                  "control address (default: tcp port + 1, or the ipc path + .ctl)");
  cmd->add_option("--db", opts->db_path, "SQLite file for durable results (default: memory only)");
  auto db_max_mb = std::make_shared<uint64_t>(0);
  cmd->add_option("--db-max-mb", *db_max_mb,
                  "cap the --db file at this many MiB: beyond it the broker behaves as on a full "
                  "disk (holds results, SUBMIT gets STORE_FULL); default: no cap");
  cmd->add_option("--heartbeat-ms", opts->heartbeat_ms, "heartbeat interval")->capture_default_str();
  cmd->add_option("--poison", opts->poison_crashes, "crashed workers before a job is POISON")
      ->capture_default_str();
  cmd->add_option("--max-pending", opts->max_pending, "queued jobs before SUBMIT gets FULL")
      ->capture_default_str();
  auto result_mb = std::make_shared<size_t>(opts->result_memory_bytes >> 20);
  cmd->add_option("--result-memory-mb", *result_mb,
                  "MiB of finished result records kept in memory with --db; older ones are read "
                  "back from the database when needed")
      ->capture_default_str();
  cmd->add_option("--curve-secret", opts->curve_secret_file,
                  "broker's CURVE secret key file (hlox keygen); encrypts and authenticates all traffic");
  cmd->add_option("--allow", opts->allow_dir,
                  "folder of *.pub keys let in: worker/, agent/ and admin/ subfolders give the "
                  "role, keys directly in it are worker+agent; SIGHUP re-reads it");
  cmd->add_flag("--insecure", opts->insecure, "allow a non-loopback --bind without CURVE keys");
  auto metrics = std::make_shared<std::string>();
  cmd->add_option("--metrics", *metrics,
                  "serve /metrics (Prometheus), /status.json and a dashboard on HOST:PORT, e.g. "
                  "127.0.0.1:7557 (loopback only unless --metrics-token-file is given)");
  auto token_file = std::make_shared<std::string>();
  cmd->add_option("--metrics-token-file", *token_file,
                  "file holding a bearer token every --metrics request must send "
                  "(Authorization: Bearer TOKEN); required for a non-loopback --metrics");
  cmd->callback([opts, metrics, result_mb, token_file, db_max_mb] {
    opts->result_memory_bytes = *result_mb << 20;
    opts->db_max_bytes = *db_max_mb << 20;
    std::string token;
    if (!token_file->empty()) {
      absl::StatusOr<std::string> t = monitor::ReadMetricsToken(*token_file);
      if (!t.ok() || metrics->empty()) {
        std::cerr << "hlox broker: "
                  << (t.ok() ? "--metrics-token-file needs --metrics" : std::string(t.status().message()))
                  << "\n";
        ExitCode() = 1;
        return;
      }
      token = *t;
    }
    auto b = broker::Broker::Create(*opts);
    if (!b.ok()) {
      std::cerr << "hlox broker: " << b.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    std::unique_ptr<monitor::HttpMonitor> http;
    if (!metrics->empty()) {
      auto m = monitor::HttpMonitor::Start(
          {*metrics, (*b)->control_address(), (*b)->self_keys(), token});
      if (!m.ok()) {
        std::cerr << "hlox broker: " << m.status().message() << "\n";
        ExitCode() = 1;
        return;
      }
      http = std::move(*m);
    }
    g_broker = b->get();
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGINT, OnSignal);
    std::signal(SIGHUP, OnHangup);
    absl::Status st = (*b)->Run();
    g_broker = nullptr;
    if (!st.ok()) {
      std::cerr << "hlox broker: " << st.message() << "\n";
      ExitCode() = 1;
    }
  });
}

}  // namespace hlox::cli
