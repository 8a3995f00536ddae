// Convert chains. A convert to the same type is a no-op; convert(convert(x)) folds into one
// convert when the first step is lossless (every value of the source type is exactly
// representable in the middle type), because then the second step sees x's exact value.
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

using PT = PrimitiveType;

// Significand bits (with the implicit one) of the float types we reason about; 0 otherwise.
int MantissaDigits(PT t) {
  switch (t) {
    case PT::kF16: return 11;
    case PT::kBF16: return 8;
    case PT::kF32: return 24;
    case PT::kF64: return 53;
    default: return 0;
  }
}

// True when every value of `from` converts exactly (and back) through `to`.
bool Lossless(PT from, PT to) {
  if (from == to) return true;
  if (IsComplex(from) || IsComplex(to) || IsPred(to)) return false;
  if (IsPred(from)) return true;
  int fb = PrimitiveBitWidth(from), tb = PrimitiveBitWidth(to);
  if (IsSignedInt(from)) {
    if (IsSignedInt(to)) return tb >= fb;
    if (IsFloatingPoint(to)) return MantissaDigits(to) >= fb - 1;
    return false;
  }
  if (IsUnsignedInt(from)) {
    if (IsUnsignedInt(to)) return tb >= fb;
    if (IsSignedInt(to)) return tb > fb;
    if (IsFloatingPoint(to)) return MantissaDigits(to) >= fb;
    return false;
  }
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    if (from == PT::kF16) return to == PT::kF32 || to == PT::kF64;
    if (from == PT::kBF16) return to == PT::kF32 || to == PT::kF64;
    if (from == PT::kF32) return to == PT::kF64;
    if (from == PT::kF8E5M2 || from == PT::kF8E4M3FN) {
      return to == PT::kF16 || to == PT::kF32 || to == PT::kF64;
    }
  }
  return false;
}

// convert(x) -> x when x already has the type (and layout)
bool MatchConvertNoop(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kConvert && i.operand_count() == 1 && CanReplaceWith(i, *i.operand(0));
}
Instruction* ApplyConvertNoop(Instruction& i) { return i.operand(0); }

// convert<C>(convert<B>(x: A)) -> convert<C>(x) when A -> B is lossless (x itself when C = A)
bool MatchConvertConvert(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kConvert || i.operand_count() != 1) return false;
  const Instruction& mid = *i.operand(0);
  if (mid.opcode() != Opcode::kConvert || mid.operand_count() != 1) return false;
  const Shape& a = mid.operand(0)->shape();
  if (!a.IsArray() || !i.shape().IsArray() || !mid.shape().IsArray()) return false;
  if (!Lossless(a.element_type(), mid.shape().element_type())) return false;
  if (inv) inv->push_back(&mid);
  return true;
}
Instruction* ApplyConvertConvert(Instruction& i) {
  Instruction* x = i.operand(0)->operand(0);
  if (CanReplaceWith(i, *x)) return x;
  return AddNew(i, Opcode::kConvert, i.shape(), {x});
}

}  // namespace

void AddConvertRules(std::vector<SimpRule>* rules) {
  rules->push_back({"convert_noop", MatchConvertNoop, ApplyConvertNoop});
  rules->push_back({"convert_convert", MatchConvertConvert, ApplyConvertConvert});
}

}  // namespace hlox::simp
