#include "local/local_evaluator.h"

#include "common/status_macros.h"
#include "cost/evaluate.h"
#include "cost/paired.h"
#include "cost/provenance.h"
#include "passes/pipeline.h"

namespace hlox {

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

InProcessBackend LocalBackend() {
  InProcessBackend b;
  b.evaluator = [](const Module& module, const std::string& pipeline, const EvalOptions& options) {
    return std::unique_ptr<Evaluator>(std::make_unique<LocalEvaluator>(module, pipeline, options));
  };
  b.measurer = [](const Module& module, int threads) {
    return std::unique_ptr<PairedMeasurer>(std::make_unique<LocalPairedMeasurer>(module, threads));
  };
  return b;
}

}  // namespace hlox
