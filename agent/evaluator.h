// Where search agents send candidates. An Evaluator turns a batch of pipeline decisions into
// result records: the fleet evaluator (fleet_evaluator.h) sends them through the broker, embedded
// or remote; the local library's LocalEvaluator (local/) runs them in this process. Agents never
// know which, and this library never executes a module itself.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/eval_options.h"
#include "cost/paired.h"
#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

// What a search minimises.
// kScratchpad: DRAM<->scratchpad traffic on the scratchpad target (cost/scratchpad.h).
enum class Objective { kMeasured, kRoofline, kOpCount, kScratchpad };
absl::StatusOr<Objective> ParseObjective(const std::string& name);  // measured|roofline|ops|scratchpad
const char* ObjectiveName(Objective objective);

// The cost of a record under `objective`; +infinity for anything but OK.
double RecordCost(const ResultRecord& record, Objective objective);

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // One record per candidate, in the same order. Never fails: problems are statuses in records.
  virtual std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) = 0;
  // Same, but the last `fresh` candidates are re-measurements (of the default, say): measured
  // anew even where an identical job was answered before. Default: plain Evaluate.
  virtual std::vector<ResultRecord> EvaluateFresh(const std::vector<PipelineDecisions>& batch, size_t fresh) {
    (void)fresh;
    return Evaluate(batch);
  }
  // How many candidates are worth submitting at once.
  virtual int parallelism() const { return 1; }
};

// One paired measurement a search asks for (its race and its fresh confirmation): a candidate
// against a baseline, each a pipeline with decisions on the search's module.
struct PairedRequest {
  std::string baseline_pipeline = "default";
  PipelineDecisions baseline;       // {}: the baseline pipeline's default policy
  std::string pipeline = "default";
  PipelineDecisions candidate;
  TimingProtocol protocol;
  uint64_t seed = 0;
};

// Who measured a search's verdicts: this process, or which worker of which class.
struct MeasuredBy {
  std::string where;                // "in-process" or "fleet" ("" before any measurement)
  std::string worker_id, hardware_class, host;
  int measurements = 0;             // successful paired measurements so far
};

// Where a search's verdicts are measured. LocalPairedMeasurer measures in this process;
// FleetEvaluator submits a paired job in the search's campaign, so a worker of the campaign's
// class measures it in its isolated child and this process never runs the module.
class PairedMeasurer {
 public:
  virtual ~PairedMeasurer() = default;
  // Candidate/baseline ratio with its interval (cost/paired.h). Errors: a pipeline that fails,
  // a candidate whose outputs are wrong (fleet: the worker validates), a run failure.
  virtual absl::StatusOr<PairedResult> MeasurePaired(const PairedRequest& request) = 0;
  // Where the successful measurements so far were taken (the last one's worker).
  const MeasuredBy& measured_by() const { return measured_by_; }

 protected:
  MeasuredBy measured_by_;
};

// How a session evaluates with --in-process. The agent library never runs a module: the local
// library (local/local_evaluator.h, LocalBackend()) supplies both, and the CLI wires it in.
struct InProcessBackend {
  std::function<std::unique_ptr<Evaluator>(const Module& module, const std::string& pipeline,
                                           const EvalOptions& options)>
      evaluator;
  std::function<std::unique_ptr<PairedMeasurer>(const Module& module, int threads)> measurer;
  explicit operator bool() const { return evaluator && measurer; }
};

}  // namespace hlox
