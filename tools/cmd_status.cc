// hlox status --broker ADDR [--json] [--watch] [--curve-key FILE --broker-key FILE.pub]: the
// fleet at a glance, from the broker's control channel (answered ahead of every evaluation, so
// it is instant even when all workers are busy).
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "absl/strings/str_format.h"
#include "client/client.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

// "mixed builds: 2 (abc: 3 workers, def: 1 worker)\n" when the live workers (not "lost") run
// more than one build; "" otherwise. A worker that predates build ids counts as "unknown".
std::string MixedBuilds(const nlohmann::json& s) {
  std::map<std::string, int> builds;
  for (const auto& w : s.value("workers", nlohmann::json::array())) {
    if (w.value("state", "") == "lost") continue;
    std::string b = w.value("build", "");
    ++builds[b.empty() ? "unknown" : b];
  }
  if (builds.size() < 2) return "";
  std::string t = absl::StrFormat("mixed builds: %d (", builds.size());
  const char* sep = "";
  for (const auto& [b, n] : builds) {
    absl::StrAppendFormat(&t, "%s%s: %d worker%s", sep, b, n, n == 1 ? "" : "s");
    sep = ", ";
  }
  return t + ")\n";
}

std::string Table(const nlohmann::json& s) {
  std::string t;
  const auto& b = s["broker"];
  absl::StrAppendFormat(&t, "broker %s  up %.0fs  version %s  protocol %s  %s  build %s\n",
                        b["instance"].dump(), b["uptime_s"].get<double>(), b["version"].get<std::string>(),
                        b["protocol"].dump(), b["durable"].get<bool>() ? "durable" : "memory-only",
                        b.value("build", "unknown"));
  if (b.value("store_full", false) || !b.value("store_error", "").empty()) {
    absl::StrAppendFormat(&t, "STORE %s: %d finished results held unacknowledged (%s)\n",
                          b.value("store_full", false) ? "FULL, new jobs refused" : "FAILING",
                          b.value("uncommitted_results", int64_t{0}), b.value("store_error", ""));
  }
  absl::StrAppendFormat(&t, "\n%-24s %-12s %-14s %-7s %-9s %6s %6s %8s %7s %-8s %s\n", "WORKER", "HOST", "CLASS",
                        "ISA", "STATE", "DONE", "FAILED", "EVALS/S", "HB AGE", "VERSION", "BUILD");
  for (const auto& w : s["workers"]) {
    double up = std::max(1e-3, w["uptime_s"].get<double>());
    // "isa" is absent from older brokers' status and empty for workers that predate it.
    std::string isa = w.value("isa", "");
    if (isa.empty()) isa = "-";
    std::string build = w.value("build", "");
    if (build.empty()) build = "-";
    absl::StrAppendFormat(&t, "%-24s %-12s %-14s %-7s %-9s %6d %6d %8.2f %6.1fs %-8s %s\n", w["id"].get<std::string>(),
                          w["host"].get<std::string>(), w["hardware_class"].get<std::string>(), isa,
                          w["state"].get<std::string>(), w["jobs_done"].get<int64_t>(), w["jobs_failed"].get<int64_t>(),
                          w["jobs_done"].get<double>() / up, w["last_heartbeat_age_s"].get<double>(),
                          w["version"].get<std::string>(), build);
  }
  t += MixedBuilds(s);
  const auto& q = s["queues"];
  absl::StrAppendFormat(&t, "\nqueue: %d pending, %d in flight   throughput %.1f jobs/s   latency p50 %.4fs p99 %.4fs\n",
                        q["pending"].get<int64_t>(), q["in_flight"].get<int64_t>(),
                        s["throughput_jobs_per_s"].get<double>(),
                        s["latency_s"]["p50"].is_number() ? s["latency_s"]["p50"].get<double>() : 0.0,
                        s["latency_s"]["p99"].is_number() ? s["latency_s"]["p99"].get<double>() : 0.0);
  // "totals" and its counts come from the broker; an older broker may lack some of them.
  const nlohmann::json totals = s.value("totals", nlohmann::json::object());
  absl::StrAppendFormat(&t, "store: %d results, %d modules   completed %d since start, %d cache hits, %d requeued\n",
                        totals.value("stored_results", int64_t{0}), totals.value("modules", int64_t{0}),
                        totals.value("completed", int64_t{0}), totals.value("cache_hits", int64_t{0}),
                        totals.value("requeued", int64_t{0}));
  if (!q["campaigns"].empty()) {
    absl::StrAppendFormat(&t, "\n%-36s %8s %9s %8s\n", "CAMPAIGN", "PENDING", "IN FLIGHT", "DONE");
    for (auto it = q["campaigns"].begin(); it != q["campaigns"].end(); ++it) {
      absl::StrAppendFormat(&t, "%-36s %8d %9d %8d\n", it.key(), (*it)["pending"].get<int64_t>(),
                            (*it)["in_flight"].get<int64_t>(), (*it)["done"].get<int64_t>());
    }
  }
  return t;
}

}  // namespace

void RegisterStatus(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "show the fleet: workers, queues, throughput, latency");
  auto broker = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto watch = std::make_shared<bool>(false);
  auto interval = std::make_shared<double>(1.0);
  cmd->add_option("--broker", *broker, "broker address (its control address is derived)")->required();
  cmd->add_flag("--json", *json, "print the raw status JSON");
  cmd->add_flag("--watch", *watch, "refresh in place until interrupted");
  cmd->add_option("--interval", *interval, "seconds between refreshes with --watch")->capture_default_str();
  auto curve_key = std::make_shared<std::string>();
  auto broker_key = std::make_shared<std::string>();
  cmd->add_option("--curve-key", *curve_key, "own CURVE secret key file (for a secured broker)");
  cmd->add_option("--broker-key", *broker_key, "the broker's CURVE public key file (.pub)");
  cmd->callback([broker, json, watch, interval, curve_key, broker_key] {
    std::string control = proto::ControlAddressFor(*broker);
    absl::StatusOr<proto::CurveClientKeys> curve = proto::LoadCurveClientKeys(*curve_key, *broker_key);
    if (!curve.ok()) {
      std::cerr << "hlox status: " << curve.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    do {
      absl::StatusOr<std::string> s =
          client::ControlRequest(control, "status", "", std::chrono::milliseconds(3000), *curve);
      if (!s.ok()) {
        std::cerr << "hlox status: " << s.status().message() << "\n";
        ExitCode() = 1;
        return;
      }
      if (*json) {
        std::cout << *s << std::endl;
      } else {
        nlohmann::json j = nlohmann::json::parse(*s, nullptr, false);
        if (j.is_discarded()) {
          std::cerr << "hlox status: the broker sent malformed status JSON\n";
          ExitCode() = 1;
          return;
        }
        if (*watch) std::cout << "\x1b[H\x1b[2J";  // home + clear, like top
        std::cout << Table(j) << std::flush;
      }
      if (*watch) std::this_thread::sleep_for(std::chrono::duration<double>(*interval));
    } while (*watch);
  });
}

}  // namespace hlox::cli
