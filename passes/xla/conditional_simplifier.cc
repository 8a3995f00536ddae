// conditional-simplifier (XLA's ConditionalSimplifier, its constant-predicate and single-branch
// rules): a conditional whose predicate or branch index is a constant, or that has one branch,
// always runs the same branch: it becomes a call of that branch on the branch's operand, which
// the inliner can then inline. XLA's semantics pick the last branch for an index out of range.
#include "passes/passes.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// The branch a conditional always takes, or -1 when it depends on run-time data.
int64_t FixedBranch(const Instruction& i) {
  const int64_t branches = static_cast<int64_t>(i.called_computations().size());
  if (i.opcode() != Opcode::kConditional || branches == 0 || i.operand_count() != branches + 1) return -1;
  const Instruction& sel = *i.operand(0);
  const bool pred = sel.shape().IsArray() && sel.shape().element_type() == PrimitiveType::kPred;
  if (!pred && branches == 1) return 0;
  if (sel.opcode() != Opcode::kConstant || !sel.has_literal() || sel.literal().elided() ||
      !sel.shape().IsArray() || sel.shape().ElementCount() != 1) {
    return -1;
  }
  const int64_t v = sel.literal().GetAsInt64(0);
  if (pred) return v != 0 ? 0 : 1;  // {true branch, false branch}
  return v >= 0 && v < branches ? v : branches - 1;
}

}  // namespace

std::unique_ptr<Pass> CreateConditionalSimplifier() {
  xla::Rule r;
  r.name = "fixed_branch";
  r.match = [](const Instruction& i) {
    const int64_t b = FixedBranch(i);
    return b >= 0 && i.called_computations()[b]->root() != nullptr &&
           i.called_computations()[b]->root()->shape() == i.shape();
  };
  r.apply = [](Instruction& i) {
    const int64_t b = FixedBranch(i);
    auto call = Instruction::Create(Opcode::kCall, i.shape(), {i.operand(b + 1)});
    call->mutable_called_computations() = {i.called_computations()[b]};
    return i.parent()->AddInstruction(std::move(call));
  };
  return xla::MakeRulePass("conditional-simplifier", {r});
}

}  // namespace hlox
