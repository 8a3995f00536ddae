// The rule-table pass shared by the XLA passes in this folder (rule_pass.h).
#include "passes/xla/rule_pass.h"

#include "common/status_macros.h"
#include "passes/site_util.h"

namespace hlox::xla {
namespace {

class RulePass : public Pass {
 public:
  RulePass(std::string name, std::vector<Rule> rules, RulePassOptions options)
      : name_(std::move(name)), rules_(std::move(rules)), options_(options) {}

  std::string_view name() const override { return name_; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation() && !options_.in_fusion_bodies) continue;
      const std::unordered_set<const Instruction*> ordered = ControlDepInstructions(*comp);
      for (const Instruction* i : comp->PostOrder()) {
        if (ordered.count(i)) continue;  // replacing it would drop an ordering edge
        for (const Rule& r : rules_) {
          if (!r.match(*i)) continue;
          sites.push_back(MakeSite(r.name, *i, {}, {"keep", "apply"}, r.default_choice));
          break;
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [this](const DecisionSite& site, int, const std::vector<Instruction*>& instrs,
                        InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* anchor = instrs[0];
      const Rule* rule = nullptr;
      for (const Rule& r : rules_) {
        if (r.name == site.rule) rule = &r;
      }
      if (rule == nullptr || HasControlDeps(*anchor) || !rule->match(*anchor)) return SiteOutcome::kStale;
      Instruction* replacement = rule->apply(*anchor);
      if (replacement == nullptr) return SiteOutcome::kStale;
      // The anchor goes even when it counts as having an effect (an opt-barrier).
      HLOX_RETURN_IF_ERROR(ReplaceAnchor(anchor, replacement, &index));
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }

 private:
  std::string name_;
  std::vector<Rule> rules_;
  RulePassOptions options_;
};

}  // namespace

std::unique_ptr<Pass> MakeRulePass(std::string name, std::vector<Rule> rules, RulePassOptions options) {
  return std::make_unique<RulePass>(std::move(name), std::move(rules), options);
}

}  // namespace hlox::xla
