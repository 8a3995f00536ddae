// Call inlining as decisions: one site per `call` instruction. Choice 1 replaces the call by a
// copy of its callee's body (parameters wired to the call's operands). Sites are listed callees
// first, so nested calls inline bottom-up. Computations left unreachable are removed.
#include "absl/strings/str_cat.h"
#include "passes/module_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

bool Inlinable(const Instruction& i) {
  if (i.opcode() != Opcode::kCall || i.called_computations().size() != 1) return false;
  const Computation* callee = i.to_apply();
  return callee->root() != nullptr && callee->parameter_count() == i.operand_count() &&
         i.control_predecessors().empty();
}

class InlinerPass : public Pass {
 public:
  std::string_view name() const override { return "inline"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      for (const Instruction* i : comp->PostOrder()) {
        if (Inlinable(*i)) sites.push_back(MakeSite("inline_call", *i));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* call = instrs[0];
      if (!Inlinable(*call)) return SiteOutcome::kStale;
      Computation* caller = call->parent();
      Instruction* result = InlineComputationBody(*call->to_apply(), call->operands(), *caller);
      if (result->shape() != call->shape() && call->IsRoot()) {
        // Keep the caller's signature exact: a copy restores the call's layout.
        std::unique_ptr<Instruction> copy = Instruction::Create(Opcode::kCopy, call->shape(), {result});
        result = caller->AddInstruction(std::move(copy));
      }
      call->ReplaceAllUsesWith(result);
      index.Forget(call);
      caller->RemoveInstruction(call);
      for (const auto& i : caller->instructions()) index.Add(i.get());
      return SiteOutcome::kApplied;
    };
    absl::StatusOr<ApplyReport> report = ApplySitesInOrder(module, sites, decisions, apply);
    if (!report.ok()) return report;
    int removed = module.RemoveUnreachableComputations();
    if (removed > 0) report->changes.push_back(absl::StrCat("removed ", removed, " inlined computations"));
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateCallInliner() { return std::make_unique<InlinerPass>(); }

}  // namespace hlox
