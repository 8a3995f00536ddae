// The decision-exposing pass API. A pass splits finding from applying: FindSites lists every
// legal rewrite it could make on a module, as plain data; Apply takes one choice per site.
// Run = FindSites, then the pass's default policy. Everything is deterministic: the same module
// and decisions give the same printed module on every machine.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/decisions.h"
#include "ir/module.h"

namespace hlox {

// One legal rewrite a pass could make.
struct DecisionSite {
  std::string id;                          // stable: same module text -> same ids
  std::string rule;                        // rule or site kind, e.g. "add_zero", "fuse_producer"
  std::vector<std::string> instructions;   // names of the instructions involved (first = anchor)
  std::string computation;                 // computation holding the anchor
  std::vector<std::string> choices;        // choice names; choice 0 is always "keep" (no rewrite)
  int default_choice = 0;                  // what the pass's own heuristic picks
  std::vector<float> features;             // numeric features for learning agents
};

// What Apply did.
struct ApplyReport {
  int64_t applied = 0;                     // sites whose non-keep choice was applied
  std::vector<std::string> stale;          // sites skipped because an earlier choice removed them
  std::vector<std::string> changes;        // one human-readable line per applied rewrite
  bool changed() const { return applied > 0; }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Every legal site on `module`, in a deterministic order.
  virtual absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) = 0;
  // Applies `decisions` (one per site of `sites`, which FindSites returned for this module).
  // Sites are applied in order; a site made stale by an earlier choice is skipped and reported.
  virtual absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                            const DecisionVector& decisions) = 0;
  // FindSites then the default policy.
  absl::StatusOr<ApplyReport> Run(Module& module);
};

// INVALID_DECISIONS errors: an InvalidArgument status carrying a payload that marks it, so
// services report it as that job status and not as a run error.
absl::Status InvalidDecisionsError(std::string_view message);
bool IsInvalidDecisions(const absl::Status& status);
// Checks a decision vector against sites: length, and each choice in range.
absl::Status ValidateDecisions(const std::vector<DecisionSite>& sites, const DecisionVector& decisions);
// The default-policy vector for `sites`.
DecisionVector DefaultDecisions(const std::vector<DecisionSite>& sites);
// Choice 1 wherever a site has one, else 0 (the "all-fuse" vector for fusion passes).
DecisionVector ApplyAllDecisions(const std::vector<DecisionSite>& sites);

}  // namespace hlox
