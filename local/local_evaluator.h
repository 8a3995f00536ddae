// In-process evaluation for searches run with --in-process: the agent's Evaluator and
// PairedMeasurer interfaces (agent/evaluator.h) implemented with the cost library, which runs the
// passes and the runtime in this process. The only library above agent/ that executes modules;
// the CLI wires LocalBackend() into search sessions and campaigns.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "agent/evaluator.h"

namespace hlox {

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


// Both of the above, for SessionOptions::in_process_backend.
InProcessBackend LocalBackend();

}  // namespace hlox
