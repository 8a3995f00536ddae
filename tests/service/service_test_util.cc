// Process, port and module helpers for the service tests; see service_test_util.h.
#include "tests/service/service_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>
#include <thread>

#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace hlox::testing {

Process::Process(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  pid_ = ::fork();
  if (pid_ == 0) {
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

Process::~Process() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
  }
}

void Process::Kill(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

int Process::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      reaped_ = true;
      return st;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

bool Process::Running() {
  if (reaped_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) == pid_) {
    reaped_ = true;
    return false;
  }
  return true;
}

namespace {

bool CanBind(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  ::close(s);
  return ok;
}

}  // namespace

int FreePortPair() {
  // Below Linux's ephemeral range (32768 and up by default): a port the kernel hands out for
  // bind(0) can be taken a moment later as the local port of another test's outgoing connection.
  static std::mt19937 rng(static_cast<uint32_t>(::getpid()) * 2654435761u ^
                          static_cast<uint32_t>(std::random_device{}()));
  std::uniform_int_distribution<int> pick(20000, 32700);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int port = pick(rng);
    if (CanBind(port) && CanBind(port + 1)) return port;
  }
  return 0;
}

std::string TcpAddress(int port) { return "tcp://127.0.0.1:" + std::to_string(port); }

std::unique_ptr<Process> StartBroker(const std::string& addr, const std::string& db,
                                     const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {HloxBinary(), "broker", "--bind", addr};
  if (!db.empty()) { argv.push_back("--db"); argv.push_back(db); }
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(argv);
}

std::unique_ptr<Process> StartWorker(const std::string& addr, const std::string& id,
                                     const std::vector<std::string>& extra,
                                     const std::vector<std::string>& env) {
  std::vector<std::string> argv = {HloxBinary(), "worker", "--broker", addr, "--id", id};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Process>(argv, env);
}

std::string AddModule(const std::string& variant) {
  return "HloModule " + variant +
         "\n\nENTRY main {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
         "  ROOT c = f32[4] add(a, b)\n}\n";
}

std::string CustomCallModule(const std::string& target) {
  return "HloModule cc\n\nENTRY main {\n  a = f32[4] parameter(0)\n"
         "  ROOT c = f32[4] custom-call(a), custom_call_target=\"" + target + "\"\n}\n";
}

std::map<std::string, client::JobResult> Collect(client::Client& c, size_t n,
                                                std::chrono::milliseconds timeout,
                                                int* duplicates) {
  std::map<std::string, client::JobResult> out;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
    auto r = c.Next(std::chrono::milliseconds(50));
    if (!r) continue;
    if (out.count(r->job_id) && duplicates) ++*duplicates;
    out[r->job_id] = std::move(*r);
  }
  return out;
}

bool WaitForWorkers(const std::string& control_addr, int workers,
                    std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto s = client::ControlRequest(control_addr, "status", "", std::chrono::milliseconds(500));
    if (s.ok()) {
      auto j = nlohmann::json::parse(*s, nullptr, false);
      if (!j.is_discarded() && j["workers"].size() >= static_cast<size_t>(workers)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace hlox::testing
