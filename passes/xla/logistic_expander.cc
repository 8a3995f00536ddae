// logistic-expander (XLA's LogisticExpander): logistic(x) -> 1 / (1 + exp(-x)) in x's floating
// type, which XLA's CPU pipeline does so the expansion fuses with its neighbours. The default
// policy is to keep: hlox's runtime has a vectorized logistic, and the expansion is one
// division and one exponential per element (see docs/DECISIONS.md).
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateLogisticExpander() {
  xla::Rule r;
  r.name = "logistic";
  r.default_choice = 0;
  r.match = [](const Instruction& i) {
    return i.opcode() == Opcode::kLogistic && i.shape().IsArray() && IsFloatingPoint(i.shape().element_type());
  };
  r.apply = [](Instruction& i) {
    const Shape& s = i.shape();
    Instruction* neg = simp::AddNew(i, Opcode::kNegate, s, {i.operand(0)});
    Instruction* e = simp::AddNew(i, Opcode::kExp, s, {neg});
    Instruction* one = simp::AddFilled(i, s, 1.0);
    Instruction* den = simp::AddNew(i, Opcode::kAdd, s, {one, e});
    return simp::AddNew(i, Opcode::kDivide, s, {simp::AddFilled(i, s, 1.0), den});
  };
  return xla::MakeRulePass("logistic-expander", {r});
}

}  // namespace hlox
