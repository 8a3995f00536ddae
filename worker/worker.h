// The hlox worker: registers with the broker (capabilities and hardware class), heartbeats from
// its I/O thread, which never runs an evaluation, keeps a module cache (asking the broker for a
// module it lacks), evaluates jobs on an executor thread (each in a forked child by default) and
// replies with the full result record. Reconnects and re-registers when the broker goes silent
// or restarts. RunSupervised restarts a worker process that crashed.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlox::worker {

inline constexpr int kWorkerHeartbeatMs = 250;   // must match the broker's interval
inline constexpr int kWorkerLiveness = 4;        // silent broker intervals before reconnecting
inline constexpr size_t kModuleCacheBytes = 512u << 20;

struct WorkerOptions {
  std::string broker;                 // e.g. tcp://127.0.0.1:5555 or ipc:///tmp/x
  std::string worker_id;              // "" = host-pid-random
  std::string hardware_class = "cpu";  // registered as "<class>-<isa>" (ApplyIsaAndResolveClass)
  std::string isa;                    // "" = ActiveIsa(); else run kernels at this level
  int threads = 1;                    // runtime threads per evaluation
  int credit = 2;                     // jobs outstanding at once (one runs, one waits)
  bool fork = true;                   // evaluate in a child process
  bool fresh_child = false;           // a new child per job instead of a warm one per module
  std::string test_mode;              // "" | "echo" | "sleep-<ms>" | "sleep-<ms>-serial"
  int heartbeat_ms = kWorkerHeartbeatMs;
  int liveness = kWorkerLiveness;
  std::string curve_key_file;         // own CURVE secret key file ("" = CURVE off)
  std::string broker_key_file;        // the broker's CURVE public key file
  int cpu_latency_us = -1;            // >= 0: hold this PM QoS CPU wake-up limit (common/cpu_latency.h)
  // Per-job budget (job_limits.h): memory in MiB (0 = DefaultJobMemoryBytes(), < 0 = none) and
  // a time cap in seconds over each job's own run timeout (0 = none).
  int64_t job_memory_mb = 0;
  int64_t job_time_s = 0;
};

// The memory budget in bytes `options` gives each job: job_memory_mb MiB, the machine's default
// share when 0 (cost/evaluate_memory.h DefaultJobMemoryBytes), 0 (no budget) when negative.
int64_t JobMemoryBudgetBytes(const WorkerOptions& options);

// Makes `options.isa` (when set) the active ISA level and returns the class the worker
// registers under: proto::EffectiveHardwareClass(options.hardware_class, ActiveIsa()). Errors
// name an unknown level, one this CPU lacks, or a class that names another level.
absl::StatusOr<std::string> ApplyIsaAndResolveClass(const WorkerOptions& options);

// Exit status of a worker the broker refused for its protocol version: restarting the same
// build cannot help, so RunSupervised does not restart it.
inline constexpr int kExitRefused = 3;

// Serves jobs until the broker sends DISCONNECT, `stop` becomes true, or a fatal error.
// Registers under ApplyIsaAndResolveClass(options), reporting its CPU model, ISA level, protocol
// version and build id. FailedPrecondition (exactly) when the broker speaks another protocol or
// refused this worker's (BAD_VERSION); the worker then stops instead of reconnecting.
absl::Status RunWorker(const WorkerOptions& options, std::atomic<bool>* stop = nullptr);

// Runs `argv` (a worker command line) as a child process and restarts it whenever it dies
// abnormally, with a short backoff; returns when it exits with status 0 or on SIGTERM/SIGINT.
int RunSupervised(const std::vector<std::string>& argv);

}  // namespace hlox::worker
