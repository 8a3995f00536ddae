// Where search agents send candidates. An Evaluator turns a batch of pipeline decisions into
// result records: LocalEvaluator runs them in this process; the fleet evaluator (fleet_evaluator.h)
// sends them through the broker, embedded or remote. Agents never know which.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/evaluate.h"
#include "cost/paired.h"
#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

// What a search minimises.
enum class Objective { kMeasured, kRoofline, kOpCount };
absl::StatusOr<Objective> ParseObjective(const std::string& name);  // measured|roofline|ops

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

// Evaluates in-process with EvaluateCandidate (validation on, measurement as `options` says).
class LocalEvaluator : public Evaluator {
 public:
  LocalEvaluator(const Module& module, std::string pipeline, EvalOptions options)
      : module_(module), pipeline_(std::move(pipeline)), options_(std::move(options)) {}
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override;

 private:
  const Module& module_;
  std::string pipeline_;
  EvalOptions options_;
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

// Measures in this process with MeasurePairedModules (cost/evaluate.h), building each distinct
// (pipeline, decisions) once. No validation: candidates come from the search's validated log.
class LocalPairedMeasurer : public PairedMeasurer {
 public:
  LocalPairedMeasurer(const Module& module, int threads) : module_(module), threads_(threads) {}
  absl::StatusOr<PairedResult> MeasurePaired(const PairedRequest& request) override;

 private:
  absl::StatusOr<const Module*> Built(const std::string& pipeline, const PipelineDecisions& decisions);
  const Module& module_;
  int threads_;
  std::map<std::pair<std::string, PipelineDecisions>, std::unique_ptr<Module>> built_;
};

}  // namespace hlox
