// Building a search space from a pipeline's sequence of decision points.
#include "agent/search_space.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/features.h"
#include "passes/pipeline.h"

namespace hlox {

PipelineDecisions SearchSpace::Decisions(const DecisionVector& v) const {
  PipelineDecisions d = fixed;
  d[key] = v;
  return d;
}

absl::StatusOr<SearchSpace> BuildSearchSpace(const Module& module, const std::string& pipeline,
                                             const std::string& key_hint) {
  PipelineDecisions decided;
  std::optional<SearchSpace> largest;
  // Each iteration decides one more invocation with its defaults; the cap guards fixpoints.
  for (int step = 0; step < 256; ++step) {
    HLOX_ASSIGN_OR_RETURN(std::optional<DecisionPoint> point, NextDecisionPoint(module, pipeline, decided));
    if (!point) break;
    SearchSpace space;
    space.pipeline = pipeline;
    space.fixed = decided;
    space.key = point->key;
    space.sites = point->sites;
    space.defaults = DefaultDecisions(point->sites);
    space.features = ExtractGraphFeatures(*point->module, point->sites);
    bool wanted = key_hint.empty() ? absl::StartsWith(space.key, "fusion")
                                   : absl::StartsWith(space.key, key_hint);
    if (wanted) return space;
    if (!largest || space.size() > largest->size()) largest = space;
    decided[point->key] = space.defaults;
  }
  if (!key_hint.empty()) {
    return absl::NotFoundError(absl::StrCat("pipeline ", pipeline, " has no decision point matching '",
                                            key_hint, "'"));
  }
  if (!largest) return absl::NotFoundError(absl::StrCat("pipeline ", pipeline, " exposes no decision sites"));
  return *largest;
}

}  // namespace hlox
