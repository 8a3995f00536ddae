// The embedded local mode: an in-process broker (on a thread) on an ipc:// address in a fresh
// temporary directory, plus N local worker processes (the hlox binary's `worker` subcommand),
// so `hlox search` / `hlox eval` work with no setup. Destroying the handle stops everything.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hlox::agent {

struct EmbeddedOptions {
  std::string hlox_binary;        // "" = /proc/self/exe (right when called from hlox itself)
  int threads = 1;                // runtime threads per evaluation in each worker
  std::string hardware_class = "local";
  std::string db_path;            // "" = memory-only broker
  std::vector<std::string> worker_args;  // extra worker flags (e.g. --test-mode echo)
};

class EmbeddedFleetHandle {
 public:
  virtual ~EmbeddedFleetHandle() = default;
  // Broker address for agent::Client, and its control address.
  virtual const std::string& address() const = 0;
  virtual const std::string& control_address() const = 0;
  // Process ids of the worker processes (tests kill them).
  virtual std::vector<int> worker_pids() const = 0;
};

struct EmbeddedFleet {
  std::string address;
  std::unique_ptr<EmbeddedFleetHandle> handle;  // stops broker and workers when destroyed
};

// Starts the broker thread and `workers` worker processes; returns once the broker is bound.
// Workers get SIGTERM when the calling thread exits (PR_SET_PDEATHSIG): call it from a thread
// that outlives the fleet (normally main). Workers register asynchronously; jobs wait in the
// queue until they do.
absl::StatusOr<EmbeddedFleet> StartEmbeddedFleet(int workers, const EmbeddedOptions& options = {});

}  // namespace hlox::agent
