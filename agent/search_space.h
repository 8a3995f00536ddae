// The space a search agent explores: one decision point of a pipeline (an invocation such as
// "fusion#0") reached with default decisions for every earlier invocation, its sites and the
// default-policy vector. A candidate is a decision vector for that invocation.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/features.h"
#include "passes/pass.h"

namespace hlox {

struct SearchSpace {
  std::string pipeline;
  PipelineDecisions fixed;      // default vectors of the invocations before `key`
  std::string key;              // the invocation searched
  std::vector<DecisionSite> sites;
  DecisionVector defaults;
  GraphFeatures features;       // of the module at this decision point (for learned models)

  int64_t size() const { return static_cast<int64_t>(sites.size()); }
  // The pipeline decisions that evaluate `v` at this decision point.
  PipelineDecisions Decisions(const DecisionVector& v) const;
};

// Walks the pipeline's decision points with default decisions and returns the one whose key
// starts with `key_hint` (e.g. "fusion" or "fusion#0"); with an empty hint, the first point
// whose key starts with "fusion", else the point with the most sites. NotFound when the
// pipeline exposes no sites at all.
absl::StatusOr<SearchSpace> BuildSearchSpace(const Module& module, const std::string& pipeline,
                                             const std::string& key_hint = "");

}  // namespace hlox
