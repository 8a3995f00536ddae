// The space a search agent explores: one decision point of a pipeline (an invocation such as
// "fusion#0") reached with default decisions for every earlier invocation, its sites and the
// default-policy vector. A candidate is a decision vector for that invocation.
#pragma once

#include <memory>
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
  std::string key;              // the invocation searched ("fusion#0"; joint: "fusion#0+codegen#0")
  std::vector<DecisionSite> sites;
  DecisionVector defaults;
  GraphFeatures features;       // of the module at this decision point (for learned models)

  // A joint space (several decision points searched together, Xtat-style): each part is one
  // invocation and owns sites [begin, end) of `sites`, as listed with default decisions before
  // it. A later part's sites depend on earlier choices (fusion decides which fusions codegen
  // tunes), so Decisions() re-lists them per candidate: a re-listed site takes the candidate's
  // choice of the site with the same id when that choice name exists there, else its default.
  struct Part {
    std::string key;
    int64_t begin = 0, end = 0;
  };
  std::vector<Part> parts;                 // empty: one decision point (`key`)
  std::shared_ptr<const Module> module;    // the module searched (joint spaces re-list on it)

  int64_t size() const { return static_cast<int64_t>(sites.size()); }
  bool joint() const { return !parts.empty(); }
  // The pipeline decisions that evaluate `v` at this decision point (joint: at every part,
  // with the invocations between parts at their defaults).
  PipelineDecisions Decisions(const DecisionVector& v) const;
};

// Walks the pipeline's decision points with default decisions and returns the one whose key
// starts with `key_hint` (e.g. "fusion" or "fusion#0"); with an empty hint, the first point
// whose key starts with "fusion", else the point with the most sites. A hint of several
// prefixes joined by '+' ("fusion+codegen") builds a joint space of the first point matching
// each, in pipeline order. NotFound when the pipeline exposes no sites at all or no point
// matches.
absl::StatusOr<SearchSpace> BuildSearchSpace(const Module& module, const std::string& pipeline,
                                             const std::string& key_hint = "");

}  // namespace hlox
