// operand-upcaster (XLA's OperandUpcaster): a dot or convolution whose result type is wider
// than an operand's (bf16/f16 operands, f32 result) gets an explicit convert of that operand
// to the result type. The arithmetic is the same (hlox widens such operands on load anyway);
// the choice is where the widening happens: once, materialized, or inside the kernel.
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// The operand index that needs widening, or -1.
int NarrowOperand(const Instruction& i) {
  if ((i.opcode() != Opcode::kDot && i.opcode() != Opcode::kConvolution) || i.operand_count() != 2 ||
      !i.shape().IsArray() || !IsFloatingPoint(i.shape().element_type())) {
    return -1;
  }
  const int out_bits = PrimitiveBitWidth(i.shape().element_type());
  for (int k = 0; k < 2; ++k) {
    const Shape& s = i.operand(k)->shape();
    if (s.IsArray() && IsFloatingPoint(s.element_type()) && PrimitiveBitWidth(s.element_type()) < out_bits) return k;
  }
  return -1;
}

}  // namespace

std::unique_ptr<Pass> CreateOperandUpcaster() {
  xla::Rule r;
  r.name = "narrow_operand";
  r.match = [](const Instruction& i) { return NarrowOperand(i) >= 0; };
  r.apply = [](Instruction& i) {
    std::vector<Instruction*> ops = {i.operand(0), i.operand(1)};
    for (int k = 0; k < 2; ++k) {
      const Shape& s = ops[k]->shape();
      if (IsFloatingPoint(s.element_type()) &&
          PrimitiveBitWidth(s.element_type()) < PrimitiveBitWidth(i.shape().element_type())) {
        ops[k] = simp::AddNew(i, Opcode::kConvert, simp::ShapeLike(s, i.shape().element_type(), s.dims()), {ops[k]});
      }
    }
    std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
    c->set_name("");
    return i.parent()->AddInstruction(std::move(c));
  };
  return xla::MakeRulePass("operand-upcaster", {r});
}

}  // namespace hlox
