// logistic-expander (XLA's LogisticExpander): logistic(x) -> 1 / (1 + exp(-x)) (half types
// through f32), which XLA's CPU pipeline does so the expansion fuses with its neighbours. The
// default policy is to keep: hlox's runtime has a vectorized logistic, and the expansion is one
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
    // Half-precision values are expanded in f32 and rounded once at the end, as the logistic
    // kernel does: four f16 roundings in a row drift by several percent through a deep model.
    const PrimitiveType t = i.shape().element_type();
    const bool narrow = PrimitiveBitWidth(t) < 32;
    const Shape s = narrow ? simp::ShapeLike(i.shape(), PrimitiveType::kF32, i.shape().dims()) : i.shape();
    Instruction* x = i.operand(0);
    if (narrow) x = simp::AddNew(i, Opcode::kConvert, s, {x});
    Instruction* neg = simp::AddNew(i, Opcode::kNegate, s, {x});
    Instruction* e = simp::AddNew(i, Opcode::kExp, s, {neg});
    Instruction* den = simp::AddNew(i, Opcode::kAdd, s, {simp::AddFilled(i, s, 1.0), e});
    Instruction* out = simp::AddNew(i, Opcode::kDivide, s, {simp::AddFilled(i, s, 1.0), den});
    return narrow ? simp::AddNew(i, Opcode::kConvert, i.shape(), {out}) : out;
  };
  return xla::MakeRulePass("logistic-expander", {r});
}

}  // namespace hlox
