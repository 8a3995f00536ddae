// An Evaluator that sends candidates through the broker (a remote fleet, or the embedded one
// that `hlox search` starts when no --broker is given) with the agent client library.
#pragma once

#include <memory>
#include <string>

#include "agent/client.h"
#include "agent/evaluator.h"

namespace hlox {

class FleetEvaluator : public Evaluator {
 public:
  // `parallelism`: candidates per batch worth submitting (about twice the workers).
  FleetEvaluator(std::unique_ptr<agent::Client> client, const std::string& module_text, std::string pipeline,
                 std::string campaign, int parallelism);
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override;
  // The last `fresh` jobs bypass the broker's result cache.
  std::vector<ResultRecord> EvaluateFresh(const std::vector<PipelineDecisions>& batch, size_t fresh) override;
  int parallelism() const override { return parallelism_; }

 private:
  std::unique_ptr<agent::Client> client_;
  std::shared_ptr<const std::string> module_text_;
  std::string pipeline_, campaign_;
  int parallelism_;
  int64_t next_id_ = 0;
};

}  // namespace hlox
