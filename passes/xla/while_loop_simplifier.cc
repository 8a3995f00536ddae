// while-loop-simplifier (XLA's WhileLoopSimplifier, its zero-trip rule): a while loop whose
// condition is the constant false never runs its body: the loop's value is its initial value.
// Loops with side effects in their body or condition are left alone.
#include "passes/passes.h"
#include "passes/site_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool ConstantFalse(const Computation* c) {
  const Instruction* root = c == nullptr ? nullptr : c->root();
  return root != nullptr && root->opcode() == Opcode::kConstant && root->has_literal() &&
         !root->literal().elided() && root->shape().IsArray() &&
         root->shape().element_type() == PrimitiveType::kPred && root->shape().ElementCount() == 1 &&
         root->literal().GetAsInt64(0) == 0;
}

}  // namespace

std::unique_ptr<Pass> CreateWhileLoopSimplifier() {
  xla::Rule r;
  r.name = "zero_trip";
  r.match = [](const Instruction& i) {
    return i.opcode() == Opcode::kWhile && i.operand_count() == 1 && i.called_computations().size() == 2 &&
           ConstantFalse(i.called_computations()[0]) && !HasSideEffect(i) && i.operand(0)->shape() == i.shape();
  };
  r.apply = [](Instruction& i) { return i.operand(0); };
  return xla::MakeRulePass("while-loop-simplifier", {r});
}

}  // namespace hlox
