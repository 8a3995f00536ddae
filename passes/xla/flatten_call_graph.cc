// flatten-call-graph (XLA's FlattenCallGraph): a computation that control flow (call, while,
// conditional) runs from more than one place gets one copy per place, so that each call site
// owns its callee and passes that rewrite a callee (while-loop-invariant-code-motion changing a
// loop's state, a later inliner) need not worry about the other callers.
//
// A site is one role of one control-flow instruction: the callee of a call, the condition or the
// body of a while, the branches of a conditional. It is offered when a computation in that role
// is also referenced from anywhere else, except at the first such reference (callers first, the
// entry's first), which keeps the original. Applying gives every computation in the role that
// is still referenced elsewhere a fresh copy, together with the computations it runs through
// control flow and its fusion bodies (so the copy is flat too); reducers and other applied
// computations stay shared, as in XLA. Computations left without callers are removed. The
// default applies (XLA always flattens). Nothing is computed differently; only the module grows.
#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "passes/module_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

// The rule of the role that `slot` of a control-flow instruction plays, or "" when the
// instruction does not run its callees as control flow.
std::string RoleRule(const Instruction& i, size_t slot) {
  switch (i.opcode()) {
    case Opcode::kCall:
      return "shared_call";
    case Opcode::kWhile:
      return slot == 0 ? "shared_condition" : "shared_body";
    case Opcode::kConditional:
      return "shared_branch";
    default:
      return "";
  }
}

bool RunsAsControlFlowOrFusion(Opcode op) {
  return op == Opcode::kCall || op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kFusion;
}

struct Reference {
  const Instruction* caller;
  size_t slot;
};

// Every reference to every computation, callers' computations entry first.
std::vector<Reference> AllReferences(const Module& module) {
  std::vector<Reference> refs;
  std::vector<Computation*> order = module.PostOrderComputations();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (const Instruction* i : (*it)->PostOrder()) {
      for (size_t s = 0; s < i->called_computations().size(); ++s) refs.push_back({i, s});
    }
  }
  return refs;
}

// Number of references to `c` other than slot `slot` of `caller`.
int64_t OtherReferences(const std::vector<Reference>& refs, const Computation* c, const Instruction* caller,
                        size_t slot) {
  int64_t n = 0;
  for (const Reference& r : refs) {
    if (r.caller->called_computations()[r.slot] == c && !(r.caller == caller && r.slot == slot)) ++n;
  }
  return n;
}

// Copies `c` with everything it runs through control flow or fusion; other callees are shared.
Computation* CloneFlat(Module& module, Computation* c) {
  std::unordered_set<const Computation*> closure;
  std::vector<Computation*> work{c};
  while (!work.empty()) {
    Computation* x = work.back();
    work.pop_back();
    if (!closure.insert(x).second) continue;
    for (const auto& i : x->instructions()) {
      if (!RunsAsControlFlowOrFusion(i->opcode())) continue;
      for (Computation* callee : i->called_computations()) work.push_back(callee);
    }
  }
  ComputationMap map;
  for (const auto& other : module.computations()) {
    if (!closure.count(other.get())) map[other.get()] = other.get();
  }
  return CopyComputationInto(*c, module, map);
}

class FlattenCallGraph : public Pass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    const std::vector<Reference> refs = AllReferences(module);
    std::unordered_set<const Computation*> first_seen;
    std::unordered_set<std::string> offered;  // site ids, one per (caller, role)
    for (const Reference& r : refs) {
      const Computation* c = r.caller->called_computations()[r.slot];
      const bool first = first_seen.insert(c).second;
      const std::string rule = RoleRule(*r.caller, r.slot);
      if (first || rule.empty() || r.caller->parent()->is_fusion_computation()) continue;
      DecisionSite site = MakeSite(rule, *r.caller);
      if (!offered.insert(site.id).second) continue;
      site.features.push_back(static_cast<float>(c->instruction_count()));
      sites.push_back(std::move(site));
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [&module](const DecisionSite& site, int, const std::vector<Instruction*>& instrs,
                           InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* caller = instrs[0];
      bool cloned = false;
      for (size_t s = 0; s < caller->called_computations().size(); ++s) {
        if (RoleRule(*caller, s) != site.rule) continue;
        Computation* c = caller->called_computations()[s];
        if (OtherReferences(AllReferences(module), c, caller, s) == 0) continue;
        Computation* copy = CloneFlat(module, c);
        for (const auto& i : copy->instructions()) index.Add(i.get());
        caller->mutable_called_computations()[s] = copy;
        cloned = true;
      }
      return cloned ? SiteOutcome::kApplied : SiteOutcome::kStale;
    };
    absl::StatusOr<ApplyReport> report = ApplySitesInOrder(module, sites, decisions, apply);
    if (!report.ok() || !report->changed()) return report;
    const int removed = module.RemoveUnreachableComputations();
    if (removed > 0) report->changes.push_back(absl::StrCat("removed ", removed, " computations left without callers"));
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateFlattenCallGraph() { return std::make_unique<FlattenCallGraph>(); }

}  // namespace hlox
