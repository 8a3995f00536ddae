// The "order" pipeline's pass: a pass sequence as decision sites (passes/pass_order.h).
//
// Why sites and not a separate agent: written as one decision vector, an ordering is a
// candidate like any other, so every search agent (evolution, guided, annealing, ...), the
// fleet's workers, the measured and op-count objectives, the race and the paired verdict
// work on pass orders unchanged, and a worker builds the candidate from its decisions alone.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/pass_order.h"

namespace hlox {
namespace {

constexpr const char* kSkip = "skip";

// The slot choices: "skip", then every menu item but "stop", in menu order.
std::vector<std::string> SlotChoices() {
  std::vector<std::string> choices = {kSkip};
  for (const std::string& item : PassOrderMenu()) {
    if (item != "stop") choices.push_back(item);
  }
  return choices;
}

class PassOrderSlots : public Pass {
 public:
  std::string_view name() const override { return "pass-order"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    HLOX_ASSIGN_OR_RETURN(std::vector<std::string> sequence, DefaultPassSequence(module));
    const std::vector<std::string> choices = SlotChoices();
    std::vector<DecisionSite> sites;
    const size_t n = sequence.size();
    auto add = [&](const std::string& rule, const std::string& item) {
      DecisionSite s;
      s.id = absl::StrCat("slot", sites.size());
      s.rule = rule;
      s.choices = choices;
      s.default_choice = static_cast<int>(std::find(choices.begin(), choices.end(), item) - choices.begin());
      // Where in the sequence the slot sits (0..1), and whether it holds a default pass.
      s.features = {static_cast<float>(sites.size()) / static_cast<float>(2 * n + 1),
                    rule == "pass_slot" ? 1.0f : 0.0f};
      sites.push_back(std::move(s));
    };
    for (const std::string& item : sequence) {
      add("free_slot", kSkip);
      add("pass_slot", item);
    }
    add("free_slot", kSkip);
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
    ApplyReport report;
    for (size_t i = 0; i < sites.size(); ++i) {
      if (decisions[i] == 0) continue;
      const std::string& item = sites[i].choices[decisions[i]];
      HLOX_ASSIGN_OR_RETURN(ApplyReport step, ApplyPassOrderItem(module, item));
      ++report.applied;
      report.changes.push_back(absl::StrCat(sites[i].id, ": ", item, " (", step.applied, " rewrites)"));
    }
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreatePassOrderSlots() { return std::make_unique<PassOrderSlots>(); }

}  // namespace hlox
