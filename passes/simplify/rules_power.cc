// Power, exp/log and square-root identities. pow(x,0.5) -> sqrt(x) is deliberately absent:
// pow(-0,0.5) = +0 but sqrt(-0) = -0, and pow(-inf,0.5) = +inf but sqrt(-inf) = NaN.
// log(exp(x)) -> x is offered but not applied by default: exp overflows to inf for large x.
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool IsFloat(const Instruction& i) { return i.shape().IsArray() && IsFloatingPoint(i.shape().element_type()); }
bool IsPowBy(const Instruction& i, double e) {
  return i.opcode() == Opcode::kPower && i.operand_count() == 2 && i.shape().IsArray() &&
         (IsFloatingPoint(i.shape().element_type()) || IsInteger(i.shape().element_type())) &&
         IsConstantValue(*i.operand(1), e);
}

// pow(x, 1) -> x
bool MatchPowOne(const Instruction& i, std::vector<const Instruction*>*) {
  return IsPowBy(i, 1.0) && CanReplaceWith(i, *i.operand(0));
}
Instruction* ApplyPowOne(Instruction& i) { return i.operand(0); }

// pow(x, 0) -> 1   (pow(NaN, 0) = 1 too)
bool MatchPowZero(const Instruction& i, std::vector<const Instruction*>*) { return IsPowBy(i, 0.0); }
Instruction* ApplyPowZero(Instruction& i) { return AddFilled(i, i.shape(), 1.0); }

// pow(x, 2) -> x*x
bool MatchPowTwo(const Instruction& i, std::vector<const Instruction*>*) { return IsPowBy(i, 2.0); }
Instruction* ApplyPowTwo(Instruction& i) {
  return AddNew(i, Opcode::kMultiply, i.shape(), {i.operand(0), i.operand(0)});
}

// pow(x, -1) -> 1/x   (floats; integer pow with a negative exponent is not a reciprocal)
bool MatchPowNegOne(const Instruction& i, std::vector<const Instruction*>*) {
  return IsPowBy(i, -1.0) && IsFloat(i);
}
Instruction* ApplyPowNegOne(Instruction& i) {
  Instruction* one = AddFilled(i, ShapeLike(i.shape(), i.shape().element_type(), i.shape().dims()), 1.0);
  return AddNew(i, Opcode::kDivide, i.shape(), {one, i.operand(0)});
}

// log(exp(x)) -> x   (not exact: exp(x) overflows to inf for large x)
bool MatchLogExp(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kLog || i.operand_count() != 1 || !IsFloat(i)) return false;
  const Instruction& e = *i.operand(0);
  if (e.opcode() != Opcode::kExp || e.operand_count() != 1 || !CanReplaceWith(i, *e.operand(0))) return false;
  if (inv) inv->push_back(&e);
  return true;
}
Instruction* ApplyLogExp(Instruction& i) { return i.operand(0)->operand(0); }

// x / op(y) -> x * inv_op(y) for a square-root pair (rounding differences only)
bool DivideBy(const Instruction& i, Opcode op, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kDivide || i.operand_count() != 2 || !IsFloat(i)) return false;
  const Instruction& d = *i.operand(1);
  if (d.opcode() != op || d.operand_count() != 1) return false;
  if (inv) inv->push_back(&d);
  return true;
}
Instruction* MultiplyBy(Instruction& i, Opcode op) {
  const Instruction& d = *i.operand(1);
  Instruction* r = AddNew(i, op, ShapeLike(i.shape(), d.shape().element_type(), d.shape().dims()), {d.operand(0)});
  return AddNew(i, Opcode::kMultiply, i.shape(), {i.operand(0), r});
}

// x / sqrt(y) -> x * rsqrt(y)
bool MatchDivSqrt(const Instruction& i, std::vector<const Instruction*>* inv) {
  return DivideBy(i, Opcode::kSqrt, inv);
}
Instruction* ApplyDivSqrt(Instruction& i) { return MultiplyBy(i, Opcode::kRsqrt); }

// x / rsqrt(y) -> x * sqrt(y)
bool MatchDivRsqrt(const Instruction& i, std::vector<const Instruction*>* inv) {
  return DivideBy(i, Opcode::kRsqrt, inv);
}
Instruction* ApplyDivRsqrt(Instruction& i) { return MultiplyBy(i, Opcode::kSqrt); }

}  // namespace

void AddPowerRules(std::vector<SimpRule>* rules) {
  rules->push_back({"pow_one", MatchPowOne, ApplyPowOne});
  rules->push_back({"pow_zero", MatchPowZero, ApplyPowZero});
  rules->push_back({"pow_two", MatchPowTwo, ApplyPowTwo});
  rules->push_back({"pow_neg_one", MatchPowNegOne, ApplyPowNegOne});
  rules->push_back({"log_exp", MatchLogExp, ApplyLogExp, /*exact=*/false});
  rules->push_back({"div_sqrt", MatchDivSqrt, ApplyDivSqrt});
  rules->push_back({"div_rsqrt", MatchDivRsqrt, ApplyDivRsqrt});
}

}  // namespace hlox::simp
