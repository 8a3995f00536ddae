// Dead code elimination as decisions: one site per dead instruction (not reachable backwards
// from its computation's root, a side-effecting instruction or a control edge). Sites are
// listed users-first so applying all of them removes whole dead chains; removing an
// instruction whose user was kept is stale. Unreachable computations are removed at the end
// of every Apply (that never changes results, so it is not a decision).
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

// Instructions of `comp` that contribute nothing: not live from root/side effects/control.
std::vector<const Instruction*> DeadInstructions(const Computation& comp) {
  std::unordered_set<const Instruction*> live;
  std::vector<const Instruction*> stack;
  auto mark = [&](const Instruction* i) {
    if (live.insert(i).second) stack.push_back(i);
  };
  if (comp.root()) mark(comp.root());
  for (const auto& i : comp.instructions()) {
    if (i->opcode() == Opcode::kParameter || HasSideEffect(*i)) mark(i.get());
    for (const Instruction* p : i->control_predecessors()) {
      mark(p);
      mark(i.get());
    }
  }
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* op : i->operands()) mark(op);
  }
  std::vector<Instruction*> post = comp.PostOrder();
  std::vector<const Instruction*> dead;
  for (auto it = post.rbegin(); it != post.rend(); ++it) {  // users before operands
    if (!live.count(*it)) dead.push_back(*it);
  }
  return dead;
}

class DcePass : public Pass {
 public:
  std::string_view name() const override { return "dce"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      for (const Instruction* i : DeadInstructions(*comp)) sites.push_back(MakeSite("dead", *i));
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* i = instrs[0];
      if (i->user_count() != 0 || i->IsRoot()) return SiteOutcome::kStale;
      Computation* comp = i->parent();
      index.Forget(i);
      if (!comp->RemoveInstruction(i)) {
        index.Add(i);
        return SiteOutcome::kStale;
      }
      return SiteOutcome::kApplied;
    };
    absl::StatusOr<ApplyReport> report = ApplySitesInOrder(module, sites, decisions, apply);
    if (!report.ok()) return report;
    int removed = module.RemoveUnreachableComputations();
    if (removed > 0) {
      report->changes.push_back(absl::StrCat("removed ", removed, " unreachable computations"));
    }
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDce() { return std::make_unique<DcePass>(); }

}  // namespace hlox
