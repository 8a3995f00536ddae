// Helpers for the service tests: child processes of the built hlox binary (broker, workers),
// free loopback ports, tiny HLO modules, and collecting results from an client::Client.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"

namespace hlox::testing {

// A child process; killed with SIGKILL (if still running) when destroyed.
class Process {
 public:
  // Starts `argv` (argv[0] a path) with extra environment entries "K=V".
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
  ~Process();
  int pid() const { return pid_; }
  void Kill(int sig = 9);
  // Waits up to `timeout` for exit; returns the wait status or -1 on timeout.
  int Wait(std::chrono::milliseconds timeout);
  bool Running();

 private:
  int pid_ = -1;
  bool reaped_ = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (and its +1 for the control socket).
int FreePortPair();
std::string TcpAddress(int port);

std::unique_ptr<Process> StartBroker(const std::string& addr, const std::string& db = "",
                                     const std::vector<std::string>& extra = {});
std::unique_ptr<Process> StartWorker(const std::string& addr, const std::string& id,
                                     const std::vector<std::string>& extra = {},
                                     const std::vector<std::string>& env = {});

// f32[4] add of two parameters; `variant` changes the module name (and so the hash).
std::string AddModule(const std::string& variant = "add");
// A module whose root is the test-only custom call `target` ("__hlox$abort" / "__hlox$hang").
std::string CustomCallModule(const std::string& target);

// Waits until `n` results arrived or `timeout` passed; results keyed by job id. Counts
// duplicates (a result for an id already seen) in *duplicates.
std::map<std::string, client::JobResult> Collect(client::Client& c, size_t n,
                                                std::chrono::milliseconds timeout,
                                                int* duplicates);

// Polls the broker's control channel until `workers` workers are registered or timeout.
bool WaitForWorkers(const std::string& control_addr, int workers,
                    std::chrono::milliseconds timeout);

}  // namespace hlox::testing
