// Helpers shared by the service benchmarks: where the hlox binary is, a broker on a thread of
// this process with real `hlox worker` processes around it, no-op job specs and percentiles.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "broker/broker.h"
#include "client/client.h"
#include "nlohmann/json.hpp"

namespace hlox::bench {

using Clock = std::chrono::steady_clock;

// The hlox binary: $HLOX_BIN, else `hlox` next to this executable.
inline std::string HloxPath() {
  if (const char* e = std::getenv("HLOX_BIN")) return e;
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  std::string self(buf, n > 0 ? size_t(n) : 0);
  return self.substr(0, self.rfind('/')) + "/hlox";
}

// Starts `hlox SUBCOMMAND FLAG addr` followed by `args` as its own process; returns its pid.
inline pid_t SpawnHlox(const char* subcommand, const char* flag, const std::string& addr,
                       std::vector<std::string> args) {
  std::string exe = HloxPath();
  args.insert(args.begin(), {exe, subcommand, flag, addr});
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

// Starts `hlox worker` with `args` after the broker address; returns its pid.
inline pid_t SpawnWorker(const std::string& addr, std::vector<std::string> args) {
  return SpawnHlox("worker", "--broker", addr, std::move(args));
}

// Starts `hlox broker --bind addr` (plus `extra` flags) as its own process; returns its pid.
inline pid_t SpawnBroker(const std::string& addr, std::vector<std::string> extra = {}) {
  return SpawnHlox("broker", "--bind", addr, std::move(extra));
}

// Registered workers not lost, from the broker's status (-1 when it does not answer);
// `lost` (optional) gets totals.lost_workers.
inline int LiveWorkers(const std::string& control, int64_t* lost = nullptr) {
  auto st = client::ControlRequest(control, "status", "", std::chrono::milliseconds(5000));
  if (!st.ok()) return -1;
  auto j = nlohmann::json::parse(*st, nullptr, false);
  if (j.is_discarded()) return -1;
  int n = 0;
  for (auto& w : j["workers"]) n += w["state"] != "lost";
  if (lost) *lost = j["totals"]["lost_workers"].get<int64_t>();
  return n;
}

// A broker on a thread of this process plus worker processes; the destructor stops all.
struct Fleet {
  std::unique_ptr<broker::Broker> b;
  std::thread t;
  std::vector<pid_t> pids;
  ~Fleet() {
    for (pid_t p : pids) ::kill(p, SIGKILL);
    for (pid_t p : pids) ::waitpid(p, nullptr, 0);
    if (b) b->Stop();
    if (t.joinable()) t.join();
  }
};

// Broker at `addr` with `workers` workers in test mode `mode` ("" = real evaluations) and
// `credit` (and `extra` worker flags), reading DONEs with `reader` (null: the broker's own scan);
// waits until they have registered (polls the status).
inline std::unique_ptr<Fleet> StartFleet(const std::string& addr, int workers,
                                         const std::string& mode, int credit,
                                         broker::BrokerOptions o = {},
                                         const std::vector<std::string>& extra = {},
                                         std::unique_ptr<broker::DoneReader> reader = nullptr) {
  auto f = std::make_unique<Fleet>();
  o.bind = addr;
  f->b = std::move(*broker::Broker::Create(o, std::move(reader)));
  f->t = std::thread([p = f->b.get()] {
    ::pthread_setname_np(::pthread_self(), "bench-broker");  // for perf/top -H
    (void)p->Run();
  });
  for (int i = 0; i < workers; ++i) {
    std::vector<std::string> args = {"--id", "bw" + std::to_string(i), "--credit",
                                     std::to_string(credit)};
    if (!mode.empty()) args.insert(args.end(), {"--test-mode", mode});
    args.insert(args.end(), extra.begin(), extra.end());
    f->pids.push_back(SpawnWorker(addr, args));
  }
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && LiveWorkers(f->b->control_address()) < workers) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return f;
}

// An `hlox broker` process at `addr` with `workers` worker processes in test mode `mode` and
// `credit`; waits until they have registered. The destructor kills them all.
struct ProcessFleet {
  std::vector<pid_t> pids;  // broker first
  ~ProcessFleet() {
    for (auto it = pids.rbegin(); it != pids.rend(); ++it) ::kill(*it, SIGKILL);
    for (pid_t p : pids) ::waitpid(p, nullptr, 0);
  }
};
inline std::unique_ptr<ProcessFleet> StartProcessFleet(const std::string& addr, int workers,
                                                       const std::string& mode, int credit) {
  auto f = std::make_unique<ProcessFleet>();
  f->pids.push_back(SpawnBroker(addr));
  const std::string control = proto::ControlAddressFor(addr);
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (Clock::now() < deadline && LiveWorkers(control) < 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (int i = 0; i < workers; ++i) {
    f->pids.push_back(SpawnWorker(addr, {"--id", "pw" + std::to_string(i), "--credit",
                                         std::to_string(credit), "--test-mode", mode}));
  }
  while (Clock::now() < deadline && LiveWorkers(control) < workers) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return f;
}

// A job that every mode accepts; caching off so each one really runs.
inline client::JobSpec NoopJob(std::shared_ptr<const std::string> text) {
  client::JobSpec j;
  j.module_text = std::move(text);
  j.pipeline = "none";
  j.use_cache = false;
  return j;
}

// utime + stime of process `pid` (all its threads), in seconds; 0 when unreadable.
inline double ProcessCpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t p = s.rfind(')');
  if (p == std::string::npos) return 0;
  std::vector<std::string> fields;
  size_t i = p + 2;
  while (i < s.size()) {
    size_t j = s.find(' ', i);
    fields.push_back(s.substr(i, j - i));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  // After the ')' field 3 (state) is index 0: utime is field 14 (index 11), stime 15 (12).
  if (fields.size() < 13) return 0;
  return double(std::stoull(fields[11]) + std::stoull(fields[12])) / double(sysconf(_SC_CLK_TCK));
}

// CPU seconds consumed so far by thread `t` (running); 0 when unavailable.
inline double ThreadCpuSeconds(std::thread& t) {
  clockid_t cid;
  timespec ts{};
  if (pthread_getcpuclockid(t.native_handle(), &cid) != 0 || clock_gettime(cid, &ts) != 0) return 0;
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Voluntary context switches of all threads of process `pid` so far: each is a sleep (in poll,
// a futex, a read) that a wake-up ended. 0 when unreadable.
inline int64_t ProcessWakeups(pid_t pid) {
  int64_t n = 0;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(
           "/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream f(t.path() / "status");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) n += std::atoll(line.c_str() + 24);
    }
  }
  return n;
}

// The q-quantile (0..1) of `v` (sorted in place).
inline double Quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace hlox::bench
