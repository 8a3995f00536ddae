// Local evaluation and the paired final verdict.
#include "agent/evaluator.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {

absl::StatusOr<Objective> ParseObjective(const std::string& name) {
  if (name == "measured") return Objective::kMeasured;
  if (name == "roofline") return Objective::kRoofline;
  if (name == "ops") return Objective::kOpCount;
  return absl::InvalidArgumentError(absl::StrCat("unknown objective '", name, "' (measured, roofline, ops)"));
}

double RecordCost(const ResultRecord& record, Objective objective) {
  if (record.status != JobStatus::kOk) return std::numeric_limits<double>::infinity();
  switch (objective) {
    case Objective::kMeasured:
      return record.cost.samples.empty() ? std::numeric_limits<double>::infinity() : record.cost.median;
    case Objective::kRoofline: return record.analytical.roofline_seconds;
    case Objective::kOpCount: return static_cast<double>(record.analytical.op_count);
  }
  return std::numeric_limits<double>::infinity();
}

std::vector<ResultRecord> LocalEvaluator::Evaluate(const std::vector<PipelineDecisions>& batch) {
  std::vector<ResultRecord> out;
  out.reserve(batch.size());
  for (const PipelineDecisions& d : batch) out.push_back(EvaluateCandidate(module_, pipeline_, d, options_));
  return out;
}

absl::StatusOr<PairedResult> PairedModules(const Module& baseline, const Module& candidate,
                                           const TimingProtocol& protocol, int threads, uint64_t seed) {
  EvalOptions o;
  o.protocol = protocol;
  o.threads = threads;
  o.seed = seed;
  return MeasurePairedModules(baseline, candidate, o);
}

absl::StatusOr<PairedResult> PairedVerdict(const Module& module, const std::string& pipeline,
                                           const PipelineDecisions& baseline,
                                           const PipelineDecisions& candidate,
                                           const TimingProtocol& protocol, int threads, uint64_t seed) {
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> base_mod, RunPipeline(module, pipeline, baseline));
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> cand_mod, RunPipeline(module, pipeline, candidate));
  return PairedModules(*base_mod, *cand_mod, protocol, threads, seed);
}

}  // namespace hlox
