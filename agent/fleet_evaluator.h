// An Evaluator that sends candidates through the broker (a remote fleet, or the embedded one
// that `hlox search`, `campaign` and `eval` start when no --broker is given) with the agent
// client library, and ConnectFleet, which makes that connection for every command.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "agent/evaluator.h"
#include "client/client.h"
#include "client/embedded.h"

namespace hlox {

// Where candidates go: a broker address (a remote fleet), or, when `broker` is empty, an embedded
// fleet of `workers` local worker processes (0 = one per core at `threads` runtime threads each).
struct FleetTarget {
  std::string broker;
  std::string curve_key, broker_key;  // CURVE key files for a secured remote broker ("" = off)
  int workers = 0;
  int threads = 1;
  std::string db_path;                // embedded broker's store ("" = memory only)
};

// A client connected to the target and, in the embedded mode, the fleet it talks to.
struct FleetConnection {
  std::optional<client::EmbeddedFleet> fleet;  // stops broker and workers when destroyed
  std::string address;                        // the broker address the client uses
  std::unique_ptr<client::Client> client;
  int workers = 1;                            // embedded workers started, or the requested count
};

// Starts the embedded fleet when no broker is given, loads CURVE keys for a remote one, and
// connects a client. Errors: unreadable keys, a fleet that cannot start, a bad address.
absl::StatusOr<FleetConnection> ConnectFleet(const FleetTarget& target);

// Evaluates candidates and measures verdicts (PairedMeasurer) through the broker: a paired
// request becomes a paired job of the campaign (never cached), measured by a worker of the
// campaign's class.
class FleetEvaluator : public Evaluator, public PairedMeasurer {
 public:
  // `parallelism`: candidates per batch worth submitting (about twice the workers).
  FleetEvaluator(std::unique_ptr<client::Client> client, const std::string& module_text, std::string pipeline,
                 std::string campaign, int parallelism);
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override;
  // The last `fresh` jobs bypass the broker's result cache.
  std::vector<ResultRecord> EvaluateFresh(const std::vector<PipelineDecisions>& batch, size_t fresh) override;
  int parallelism() const override { return parallelism_; }
  // Submits a paired job and waits for its record. Errors: the record's status and message
  // (INVALID_DECISIONS, WRONG_OUTPUT, RUN_ERROR, TIMEOUT, ...), or an OK record without figures.
  absl::StatusOr<PairedResult> MeasurePaired(const PairedRequest& request) override;

 private:
  // Submits `jobs` and waits for exactly one record each, in order.
  std::vector<ResultRecord> RunJobs(std::vector<client::JobSpec> jobs);

  std::unique_ptr<client::Client> client_;
  std::shared_ptr<const std::string> module_text_;
  std::string pipeline_, campaign_;
  int parallelism_;
  int64_t next_id_ = 0;
};

}  // namespace hlox
