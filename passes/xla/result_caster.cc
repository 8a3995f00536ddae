// result-caster (XLA's ResultCaster): a dot or convolution whose result type is narrower than
// its operands' (f32 operands, bf16 result: the result type was given as the preferred element
// type) computes in the operands' type and converts the result once:
//   dot(a: f32, b: f32) -> bf16   =>   convert(dot(a, b) -> f32) -> bf16
// so the accumulation never happens in the narrow type, whatever the kernel supports. The
// operands' type is the wider of the two when they differ; only floating-point types. The
// default applies, as XLA does (the runtime's kernels accumulate in f32 already, so the values
// agree; the choice is whether the narrowing is a separate, fusible op).
#include <algorithm>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// The operands' (wider) type when it is wider than the result's, else nullopt.
std::optional<PrimitiveType> WideType(const Instruction& i) {
  if ((i.opcode() != Opcode::kDot && i.opcode() != Opcode::kConvolution) || i.operand_count() != 2 ||
      !i.shape().IsArray() || !IsFloatingPoint(i.shape().element_type())) {
    return std::nullopt;
  }
  const Shape& a = i.operand(0)->shape();
  const Shape& b = i.operand(1)->shape();
  if (!a.IsArray() || !b.IsArray() || !IsFloatingPoint(a.element_type()) || !IsFloatingPoint(b.element_type())) {
    return std::nullopt;
  }
  const PrimitiveType wide =
      PrimitiveBitWidth(a.element_type()) >= PrimitiveBitWidth(b.element_type()) ? a.element_type() : b.element_type();
  if (PrimitiveBitWidth(wide) <= PrimitiveBitWidth(i.shape().element_type())) return std::nullopt;
  return wide;
}

}  // namespace

std::unique_ptr<Pass> CreateResultCaster() {
  xla::Rule r;
  r.name = "narrow_result";
  r.match = [](const Instruction& i) { return WideType(i).has_value(); };
  r.apply = [](Instruction& i) {
    const Shape wide = simp::ShapeLike(i.shape(), *WideType(i), i.shape().dims());
    std::unique_ptr<Instruction> c = i.CloneWithOperands(wide, {i.operand(0), i.operand(1)});
    c->set_name("");
    Instruction* computed = i.parent()->AddInstruction(std::move(c));
    return simp::AddNew(i, Opcode::kConvert, i.shape(), {computed});
  };
  return xla::MakeRulePass("result-caster", {r});
}

}  // namespace hlox
