// simplify-fp-conversions (XLA's SimplifyFPConversions): a chain of two or more converts to
// floating-point types becomes one convert from the chain's input to its final type, or the
// input itself when the types match:
//   convert_f32(convert_bf16(x_f32))            -> x_f32
//   convert_bf16(convert_f32(x_f16))            -> convert_bf16(x_f16)
// Two kinds of site:
//   exact_chain     every intermediate type holds all values of the input type exactly, so the
//                   chain rounds once, where the single convert rounds: same bits. Default apply.
//   rounding_chain  an intermediate type rounds (f32 -> bf16 -> f32): removing it keeps excess
//                   precision. XLA does this only when excess precision is allowed
//                   (xla_allow_excess_precision, on by default); hlox validates every candidate
//                   against the unoptimized outputs, which keep that rounding, so the default is
//                   keep (an f32 result differs by up to bf16's 2^-8 relative step, far past the
//                   f32 tolerance).
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool IsFloatConvert(const Instruction& c) {
  return c.opcode() == Opcode::kConvert && c.operand_count() == 1 && c.shape().IsArray() &&
         IsFloatingPoint(c.shape().element_type());
}

// The chain's input (below every convert of the chain), or nullptr when `c` heads no chain of
// at least two float converts. `types` gets the intermediate types, outermost first.
const Instruction* ChainInput(const Instruction& c, std::vector<PrimitiveType>* types) {
  if (!IsFloatConvert(c) || !IsFloatConvert(*c.operand(0))) return nullptr;
  const Instruction* x = c.operand(0);
  while (IsFloatConvert(*x)) {
    if (types != nullptr) types->push_back(x->shape().element_type());
    x = x->operand(0);
  }
  return x->shape().IsArray() ? x : nullptr;
}

// True when type `t` represents every value of type `src` exactly.
bool Holds(PrimitiveType t, PrimitiveType src) {
  if (t == src) return true;
  if (!IsFloatingPoint(src) || PrimitiveBitWidth(t) <= PrimitiveBitWidth(src)) return false;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  return PrimitiveBitWidth(src) == 8 && (t == PrimitiveType::kF16 || t == PrimitiveType::kBF16);
}

// True when `c` heads a chain that can collapse (an input of the final type must also have the
// final layout to stand in for it).
bool Collapsible(const Instruction& c) {
  const Instruction* x = ChainInput(c, nullptr);
  return x != nullptr && (x->shape().element_type() != c.shape().element_type() || simp::CanReplaceWith(c, *x));
}

bool Exact(const Instruction& c) {
  std::vector<PrimitiveType> types;
  const Instruction* x = ChainInput(c, &types);
  if (x == nullptr || !Collapsible(c)) return false;
  for (PrimitiveType t : types) {
    if (!Holds(t, x->shape().element_type())) return false;
  }
  return true;
}

Instruction* Collapse(Instruction& c) {
  Instruction* x = c.operand(0);
  while (IsFloatConvert(*x)) x = x->operand(0);
  if (x->shape().element_type() == c.shape().element_type()) return x;
  return simp::AddNew(c, Opcode::kConvert, c.shape(), {x});
}

}  // namespace

std::unique_ptr<Pass> CreateSimplifyFpConversions() {
  xla::Rule exact{"exact_chain", [](const Instruction& i) { return Exact(i); },
                  [](Instruction& i) { return Collapse(i); }, 1};
  xla::Rule rounding{"rounding_chain", [](const Instruction& i) { return Collapsible(i); },
                     [](Instruction& i) { return Collapse(i); }, 0};
  return xla::MakeRulePass("simplify-fp-conversions", {exact, rounding});
}

}  // namespace hlox
