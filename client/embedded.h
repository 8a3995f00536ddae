// The embedded local mode: an in-process broker (on a thread) on an ipc:// address in a fresh
// temporary directory, plus N local worker processes (the hlox binary's `worker` subcommand),
// so `hlox search` / `hlox eval` work with no setup. Destroying the handle stops everything.
// An client::Client in the same process that connects to the fleet's ipc address is put on an
// inproc:// endpoint of the same broker socket instead (LocalEndpointFor): its messages reach
// the broker thread without ZeroMQ's I/O threads or the kernel in between.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace zmq {
class context_t;
}

namespace hlox::client {

struct EmbeddedOptions {
  std::string hlox_binary;        // "" = /proc/self/exe (right when called from hlox itself)
  int threads = 1;                // runtime threads per evaluation in each worker
  std::string hardware_class = "local";  // workers register under it plus the ISA level
  std::string db_path;            // "" = memory-only broker
  std::vector<std::string> worker_args;  // extra worker flags (e.g. --test-mode echo)
};

class EmbeddedFleetHandle {
 public:
  virtual ~EmbeddedFleetHandle() = default;
  // Broker address for client::Client, and its control address.
  virtual const std::string& address() const = 0;
  virtual const std::string& control_address() const = 0;
  // Process ids of the worker processes (tests kill them).
  virtual std::vector<int> worker_pids() const = 0;
};

struct EmbeddedFleet {
  std::string address;
  // The class every worker registers under: options' class plus this process's active ISA
  // level ("local-avx2"), which the workers run at. An agent that pins jobs pins this one.
  std::string hardware_class;
  std::unique_ptr<EmbeddedFleetHandle> handle;  // stops broker and workers when destroyed
};

// Starts the broker thread and `workers` worker processes; returns once the broker is bound.
// Workers get SIGTERM when the calling thread exits (PR_SET_PDEATHSIG): call it from a thread
// that outlives the fleet (normally main). Workers register asynchronously; jobs wait in the
// queue until they do. Workers run at this process's active ISA level (ActiveIsa()).
absl::StatusOr<EmbeddedFleet> StartEmbeddedFleet(int workers, const EmbeddedOptions& options = {});

// For `address` of a live embedded fleet of this process: its broker's inproc:// endpoint and
// the ZeroMQ context it lives in (a socket must be made in that context to reach it). Empty
// endpoint and null context for any other address.
struct LocalEndpoint {
  std::string inproc;
  std::shared_ptr<zmq::context_t> context;
};
LocalEndpoint LocalEndpointFor(const std::string& address);

}  // namespace hlox::client
