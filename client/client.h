// The agent client library: how a search algorithm talks to the broker. Submit queues a job and
// returns at once (it blocks only while max_in_flight jobs are unfinished, which is the
// back-pressure); results are handed out exactly once per job by Next/Poll. The calling thread
// does the socket I/O itself while it is inside Submit/Next/Poll and nobody else is on the
// socket (no thread hand-off on the hot path); a background thread heartbeats, sends and
// collects results while the caller is away. When the broker restarts (its instance id changes) or goes
// silent, every unfinished job is resubmitted; job ids make that idempotent. A job the broker
// refuses for good (bad module, over a limit) comes back as a RUN_ERROR result, so every
// submitted job yields exactly one result.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/decisions.h"
#include "cost/result.h"
#include "protocol/curve.h"
#include "protocol/protocol.h"

namespace hlox::client {

struct ClientOptions {
  std::string identity;           // "" = agent-<random>; keep it stable to resume after a crash
  size_t max_in_flight = 20000;   // Submit blocks while this many jobs are unfinished
  int heartbeat_ms = 250;
  int liveness = 4;               // silent intervals before reconnecting and resubmitting
  int full_backoff_ms = 50;       // wait after the broker says FULL
  int store_full_backoff_ms = 1000;  // wait after the broker says STORE_FULL (its disk is full)
  proto::CurveClientKeys curve;   // CURVE keys for a secured broker (default: off)
  // Reach an embedded fleet of this process through its broker's inproc:// endpoint
  // (client/embedded.h) instead of its ipc:// address; false = always the address given.
  bool local_inproc = true;
};

struct JobSpec {
  std::string id;                 // "" = generated; unique per job (resubmitting is idempotent)
  std::string campaign;
  std::shared_ptr<const std::string> module_text;  // HLO text (sent once per broker)
  std::string module_hash;        // "" = computed from module_text
  std::string pipeline = "default";
  PipelineDecisions decisions;
  std::string hardware_class;     // "" = whatever class the campaign gets pinned to; "cpu-avx2"
                                  // = that class and level; "cpu" = that class at any level
  uint32_t queue_timeout_ms = 0;  // 0 = none
  uint32_t run_timeout_ms = 0;    // 0 = broker default
  bool use_cache = true;          // paired jobs are never cached, whatever this says
  std::string kind = proto::kKindEvaluate;  // proto::kKind*: an evaluation, sites, or a paired verdict
  proto::PairedSpec paired;       // kind "paired": the baseline and the timing protocol
};

struct JobResult {
  std::string job_id;
  ResultRecord record;
  uint32_t attempts = 0;
  bool cached = false;
};

class Client {
 public:
  // Connects (asynchronously) to the broker at `address` and starts the I/O thread.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(const std::string& address,
                                                         ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Queues `job`; returns its id. Blocks while max_in_flight jobs are unfinished.
  // InvalidArgument without module text, for an unknown kind, or for a duplicate id still in
  // flight.
  absl::StatusOr<std::string> Submit(JobSpec job);
  // The next result, waiting up to `timeout`; nullopt if none arrived in time.
  std::optional<JobResult> Next(std::chrono::milliseconds timeout);
  // Every result available now (may be empty).
  std::vector<JobResult> Poll();
  // Jobs submitted whose result has not been handed out yet.
  size_t unfinished() const;
  // Times the client resubmitted its unfinished jobs (broker restart or silence).
  int64_t resubmissions() const;

  class Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Sends one control op ("status", "drain", "cancel", "shutdown") to a broker's control address
// and waits up to `timeout` for the reply. Returns the status JSON for "status", else the
// broker's message; an error when the broker refuses or does not answer. `curve`: keys for a
// secured broker (a refused key looks like no answer).
absl::StatusOr<std::string> ControlRequest(const std::string& control_address,
                                           const std::string& op, const std::string& target = "",
                                           std::chrono::milliseconds timeout =
                                               std::chrono::milliseconds(3000),
                                           const proto::CurveClientKeys& curve = {});

// Asks the fleet at `address` for the decision points of `module_text` under `pipeline` given
// `decisions` (a "sites" job, docs/PROTOCOL.md) and waits up to `timeout`. Returns the record:
// OK with `sites` (a JSON array of decision points), or INVALID_DECISIONS / RUN_ERROR with the
// reason; an error status when no answer came in time.
absl::StatusOr<ResultRecord> RequestSites(const std::string& address, std::string module_text,
                                          const std::string& pipeline,
                                          const PipelineDecisions& decisions,
                                          std::chrono::milliseconds timeout =
                                              std::chrono::milliseconds(60000),
                                          ClientOptions options = {});

}  // namespace hlox::client
