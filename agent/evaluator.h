// Where search agents send candidates. An Evaluator turns a batch of pipeline decisions into
// result records: LocalEvaluator runs them in this process; the fleet evaluator (fleet_evaluator.h)
// sends them through the broker, embedded or remote. Agents never know which.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
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

// Paired measurement of two modules with the same parameters on this machine.
absl::StatusOr<PairedResult> PairedModules(const Module& baseline, const Module& candidate,
                                           const TimingProtocol& protocol, int threads, uint64_t seed);
// The final verdict of a search: baseline and candidate decisions run through the pipeline,
// then measured interleaved on this machine (cost/paired.h). Errors: pipeline or run failures.
absl::StatusOr<PairedResult> PairedVerdict(const Module& module, const std::string& pipeline,
                                           const PipelineDecisions& baseline,
                                           const PipelineDecisions& candidate,
                                           const TimingProtocol& protocol, int threads, uint64_t seed);

}  // namespace hlox
