// Local evaluation and local paired measurement.
#include "agent/evaluator.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cost/provenance.h"
#include "passes/pipeline.h"

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

absl::StatusOr<const Module*> LocalPairedMeasurer::Built(const std::string& pipeline,
                                                        const PipelineDecisions& decisions) {
  auto key = std::make_pair(pipeline, decisions);
  auto it = built_.find(key);
  if (it == built_.end()) {
    HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> m, RunPipeline(module_, pipeline, decisions));
    it = built_.emplace(std::move(key), std::move(m)).first;
  }
  return it->second.get();
}

absl::StatusOr<PairedResult> LocalPairedMeasurer::MeasurePaired(const PairedRequest& q) {
  HLOX_ASSIGN_OR_RETURN(const Module* base, Built(q.baseline_pipeline, q.baseline));
  HLOX_ASSIGN_OR_RETURN(const Module* cand, Built(q.pipeline, q.candidate));
  EvalOptions o;
  o.protocol = q.protocol;
  o.threads = threads_;
  o.seed = q.seed;
  HLOX_ASSIGN_OR_RETURN(PairedResult r, MeasurePairedModules(*base, *cand, o));
  if (measured_by_.measurements++ == 0) {
    measured_by_.where = "in-process";
    measured_by_.host = MachineProvenance().host;
  }
  return r;
}

}  // namespace hlox
