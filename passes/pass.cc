// Shared parts of the pass API: the default-policy run, decision validation and the
// INVALID_DECISIONS status marker.
#include "passes/pass.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace hlox {
namespace {
constexpr char kKindPayload[] = "hlox.status_kind";
constexpr char kInvalidDecisions[] = "INVALID_DECISIONS";
}  // namespace

absl::StatusOr<ApplyReport> Pass::Run(Module& module) {
  HLOX_ASSIGN_OR_RETURN(std::vector<DecisionSite> sites, FindSites(module));
  return Apply(module, sites, DefaultDecisions(sites));
}

absl::Status InvalidDecisionsError(std::string_view message) {
  absl::Status s = absl::InvalidArgumentError(absl::StrCat("invalid decisions: ", std::string(message)));
  s.SetPayload(kKindPayload, absl::Cord(kInvalidDecisions));
  return s;
}

bool IsInvalidDecisions(const absl::Status& status) {
  auto p = status.GetPayload(kKindPayload);
  return p.has_value() && *p == kInvalidDecisions;
}

absl::Status ValidateDecisions(const std::vector<DecisionSite>& sites, const DecisionVector& decisions) {
  if (decisions.size() != sites.size()) {
    return InvalidDecisionsError(absl::StrCat("expected ", sites.size(), " decisions, got ",
                                              decisions.size()));
  }
  for (size_t i = 0; i < sites.size(); ++i) {
    int64_t n = static_cast<int64_t>(sites[i].choices.size());
    if (decisions[i] < 0 || decisions[i] >= n) {
      return InvalidDecisionsError(absl::StrCat("site ", i, " (", sites[i].id, ") has ", n,
                                                " choices; got choice ", decisions[i]));
    }
  }
  return absl::OkStatus();
}

DecisionVector DefaultDecisions(const std::vector<DecisionSite>& sites) {
  DecisionVector d;
  d.reserve(sites.size());
  for (const DecisionSite& s : sites) d.push_back(s.default_choice);
  return d;
}

DecisionVector ApplyAllDecisions(const std::vector<DecisionSite>& sites) {
  DecisionVector d;
  d.reserve(sites.size());
  for (const DecisionSite& s : sites) d.push_back(s.choices.size() > 1 ? 1 : 0);
  return d;
}

}  // namespace hlox
