// Arithmetic identities: additive and multiplicative units, self-cancellation for integers,
// and negation pairs. Float rules never assume x*0 = 0 or x-x = 0 (NaN and inf break them).
// x+0 -> x and 0-x -> -x differ only in the sign of a zero result (-0 + +0 = +0, 0-0 = +0),
// which compares equal; XLA's simplifier makes the same trade.
#include <cmath>
#include <optional>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool IsNumeric(const Instruction& i) {
  PrimitiveType t = i.shape().element_type();
  return i.shape().IsArray() && (IsInteger(t) || IsFloatingPoint(t) || IsComplex(t));
}
bool IsSignedOrFloat(const Instruction& i) {
  PrimitiveType t = i.shape().element_type();
  return i.shape().IsArray() && (IsSignedInt(t) || IsFloatingPoint(t));
}

// Index of the operand that equals constant `v` while the other operand can replace `i`;
// -1 if none. `commutative` allows the constant on either side.
int UnitOperand(const Instruction& i, Opcode op, double v, bool commutative) {
  if (i.opcode() != op || i.operand_count() != 2 || !IsNumeric(i)) return -1;
  if (IsConstantValue(*i.operand(1), v) && CanReplaceWith(i, *i.operand(0))) return 1;
  if (commutative && IsConstantValue(*i.operand(0), v) && CanReplaceWith(i, *i.operand(1))) return 0;
  return -1;
}
Instruction* OtherOperand(Instruction& i, int unit) { return i.operand(1 - unit); }

// x+0 -> x, 0+x -> x
bool MatchAddZero(const Instruction& i, std::vector<const Instruction*>*) {
  return UnitOperand(i, Opcode::kAdd, 0.0, true) >= 0;
}
Instruction* ApplyAddZero(Instruction& i) { return OtherOperand(i, UnitOperand(i, Opcode::kAdd, 0.0, true)); }

// x-0 -> x
bool MatchSubZero(const Instruction& i, std::vector<const Instruction*>*) {
  return UnitOperand(i, Opcode::kSubtract, 0.0, false) >= 0;
}
Instruction* ApplySubZero(Instruction& i) { return i.operand(0); }

// x*1 -> x, 1*x -> x
bool MatchMulOne(const Instruction& i, std::vector<const Instruction*>*) {
  return UnitOperand(i, Opcode::kMultiply, 1.0, true) >= 0;
}
Instruction* ApplyMulOne(Instruction& i) { return OtherOperand(i, UnitOperand(i, Opcode::kMultiply, 1.0, true)); }

// x/1 -> x
bool MatchDivOne(const Instruction& i, std::vector<const Instruction*>*) {
  return UnitOperand(i, Opcode::kDivide, 1.0, false) >= 0;
}
Instruction* ApplyDivOne(Instruction& i) { return i.operand(0); }

// 0-x -> -x   (signed ints and floats)
bool MatchZeroSub(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kSubtract && i.operand_count() == 2 && IsSignedOrFloat(i) &&
         IsConstantValue(*i.operand(0), 0.0) && i.operand(1)->shape().SameDimensions(i.shape());
}
Instruction* ApplyZeroSub(Instruction& i) { return AddNew(i, Opcode::kNegate, i.shape(), {i.operand(1)}); }

// x-x -> 0   (integers only: inf-inf is NaN)
bool MatchSubSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kSubtract && i.operand_count() == 2 && i.shape().IsArray() &&
         IsInteger(i.shape().element_type()) && i.operand(0) == i.operand(1);
}
Instruction* ApplySubSelf(Instruction& i) { return AddFilled(i, i.shape(), 0.0); }

// x*0 -> 0   (integers only: NaN*0 and inf*0 are NaN)
bool MatchMulZero(const Instruction& i, std::vector<const Instruction*>*) {
  if (i.opcode() != Opcode::kMultiply || i.operand_count() != 2 || !i.shape().IsArray() ||
      !IsInteger(i.shape().element_type())) {
    return false;
  }
  return IsConstantValue(*i.operand(0), 0.0) || IsConstantValue(*i.operand(1), 0.0);
}
Instruction* ApplyMulZero(Instruction& i) { return AddFilled(i, i.shape(), 0.0); }

// x*-1 -> -x   (signed ints and floats; exact, wraps like negate for INT_MIN)
int NegOneSide(const Instruction& i) {
  if (i.opcode() != Opcode::kMultiply || i.operand_count() != 2 || !IsSignedOrFloat(i)) return -1;
  if (IsConstantValue(*i.operand(1), -1.0)) return 1;
  if (IsConstantValue(*i.operand(0), -1.0)) return 0;
  return -1;
}
bool MatchMulNegOne(const Instruction& i, std::vector<const Instruction*>*) { return NegOneSide(i) >= 0; }
Instruction* ApplyMulNegOne(Instruction& i) {
  return AddNew(i, Opcode::kNegate, i.shape(), {i.operand(1 - NegOneSide(i))});
}

// -(-x) -> x
bool MatchNegNeg(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kNegate || i.operand_count() != 1) return false;
  const Instruction* n = i.operand(0);
  if (n->opcode() != Opcode::kNegate || n->operand_count() != 1) return false;
  if (!CanReplaceWith(i, *n->operand(0))) return false;
  if (inv) inv->push_back(n);
  return true;
}
Instruction* ApplyNegNeg(Instruction& i) { return i.operand(0)->operand(0); }

// a+(-b) -> a-b, (-b)+a -> a-b   (IEEE subtraction is addition of the negation)
int NegatedAddend(const Instruction& i) {
  if (i.opcode() != Opcode::kAdd || i.operand_count() != 2 || !IsSignedOrFloat(i)) return -1;
  for (int k : {1, 0}) {
    const Instruction* n = i.operand(k);
    if (n->opcode() == Opcode::kNegate && n->operand_count() == 1 &&
        n->operand(0)->shape().SameDimensions(i.shape())) {
      return k;
    }
  }
  return -1;
}
bool MatchAddNeg(const Instruction& i, std::vector<const Instruction*>* inv) {
  int k = NegatedAddend(i);
  if (k < 0) return false;
  if (inv) inv->push_back(i.operand(k));
  return true;
}
Instruction* ApplyAddNeg(Instruction& i) {
  int k = NegatedAddend(i);
  return AddNew(i, Opcode::kSubtract, i.shape(), {i.operand(1 - k), i.operand(k)->operand(0)});
}

// a-(-b) -> a+b
bool MatchSubNeg(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kSubtract || i.operand_count() != 2 || !IsSignedOrFloat(i)) return false;
  const Instruction* n = i.operand(1);
  if (n->opcode() != Opcode::kNegate || n->operand_count() != 1) return false;
  if (inv) inv->push_back(n);
  return true;
}
Instruction* ApplySubNeg(Instruction& i) {
  return AddNew(i, Opcode::kAdd, i.shape(), {i.operand(0), i.operand(1)->operand(0)});
}

// abs(abs(x)) -> abs(x)
bool MatchAbsAbs(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kAbs || i.operand_count() != 1) return false;
  const Instruction* a = i.operand(0);
  if (a->opcode() != Opcode::kAbs || !CanReplaceWith(i, *a)) return false;
  if (inv) inv->push_back(a);
  return true;
}
Instruction* ApplyAbsAbs(Instruction& i) { return i.operand(0); }

// abs(-x) -> abs(x)   (signed ints and floats; abs(INT_MIN) = INT_MIN either way)
bool MatchAbsNeg(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kAbs || i.operand_count() != 1 || !IsSignedOrFloat(i)) return false;
  const Instruction* n = i.operand(0);
  if (n->opcode() != Opcode::kNegate || n->operand_count() != 1) return false;
  if (inv) inv->push_back(n);
  return true;
}
Instruction* ApplyAbsNeg(Instruction& i) {
  return AddNew(i, Opcode::kAbs, i.shape(), {i.operand(0)->operand(0)});
}

// -(a-b) -> b-a   (round-to-nearest is symmetric; only the sign of a zero result differs)
bool MatchNegSub(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kNegate || i.operand_count() != 1 || !IsSignedOrFloat(i)) return false;
  const Instruction* d = i.operand(0);
  if (d->opcode() != Opcode::kSubtract || d->operand_count() != 2) return false;
  if (inv) inv->push_back(d);
  return true;
}
Instruction* ApplyNegSub(Instruction& i) {
  const Instruction* d = i.operand(0);
  return AddNew(i, Opcode::kSubtract, i.shape(), {d->operand(1), d->operand(0)});
}

// (-a)*(-b) -> a*b   (signs cancel exactly; wraps identically for integers)
bool MatchMulNegNeg(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kMultiply || i.operand_count() != 2 || !IsSignedOrFloat(i)) return false;
  for (const Instruction* o : i.operands()) {
    if (o->opcode() != Opcode::kNegate || o->operand_count() != 1) return false;
  }
  if (inv) {
    inv->push_back(i.operand(0));
    if (i.operand(1) != i.operand(0)) inv->push_back(i.operand(1));
  }
  return true;
}
Instruction* ApplyMulNegNeg(Instruction& i) {
  return AddNew(i, Opcode::kMultiply, i.shape(), {i.operand(0)->operand(0), i.operand(1)->operand(0)});
}

// x / 2^k -> x * 2^-k   (floats; both round the same exact real once, so bit-identical)
std::optional<double> PowerOfTwoReciprocal(const Instruction& i) {
  if (i.opcode() != Opcode::kDivide || i.operand_count() != 2 || !i.shape().IsArray()) return std::nullopt;
  PrimitiveType t = i.shape().element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return std::nullopt;
  std::optional<double> c = UniformConstant(*i.operand(1));
  if (!c || *c == 0 || !std::isfinite(*c)) return std::nullopt;
  int e = 0;
  double m = std::frexp(std::fabs(*c), &e);  // |c| = m * 2^e, m in [0.5, 1)
  if (m != 0.5 || *c == 1.0) return std::nullopt;
  int k = e - 1;  // |c| = 2^k; 2^-k must be a normal number of the type
  int max_exp = t == PrimitiveType::kF32 ? 126 : 1022;
  if (k < -max_exp || k > max_exp) return std::nullopt;
  return std::ldexp(*c < 0 ? -1.0 : 1.0, -k);
}
bool MatchDivPow2(const Instruction& i, std::vector<const Instruction*>*) {
  return PowerOfTwoReciprocal(i).has_value();
}
Instruction* ApplyDivPow2(Instruction& i) {
  Instruction* r = AddFilled(i, ShapeLike(i.shape(), i.shape().element_type(), i.shape().dims()),
                             *PowerOfTwoReciprocal(i));
  return AddNew(i, Opcode::kMultiply, i.shape(), {i.operand(0), r});
}

}  // namespace

void AddArithmeticRules(std::vector<SimpRule>* rules) {
  rules->push_back({"add_zero", MatchAddZero, ApplyAddZero});
  rules->push_back({"sub_zero", MatchSubZero, ApplySubZero});
  rules->push_back({"zero_sub", MatchZeroSub, ApplyZeroSub});
  rules->push_back({"sub_self_int", MatchSubSelf, ApplySubSelf});
  rules->push_back({"mul_one", MatchMulOne, ApplyMulOne});
  rules->push_back({"mul_zero_int", MatchMulZero, ApplyMulZero});
  rules->push_back({"mul_neg_one", MatchMulNegOne, ApplyMulNegOne});
  rules->push_back({"div_one", MatchDivOne, ApplyDivOne});
  rules->push_back({"neg_neg", MatchNegNeg, ApplyNegNeg});
  rules->push_back({"add_neg", MatchAddNeg, ApplyAddNeg});
  rules->push_back({"sub_neg", MatchSubNeg, ApplySubNeg});
  rules->push_back({"abs_abs", MatchAbsAbs, ApplyAbsAbs});
  rules->push_back({"abs_neg", MatchAbsNeg, ApplyAbsNeg});
  rules->push_back({"neg_sub", MatchNegSub, ApplyNegSub});
  rules->push_back({"mul_neg_neg", MatchMulNegNeg, ApplyMulNegNeg});
  rules->push_back({"div_pow2", MatchDivPow2, ApplyDivPow2});
}

}  // namespace hlox::simp
