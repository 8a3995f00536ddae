// Bitwise/logical identities on pred and integers (and, or, xor, not), idempotent min/max
// and min/max with their identity element. All exact: these ops have no rounding, and
// max(x,x)/min(x,x) return x even for NaN.
#include <cmath>
#include <limits>
#include <optional>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool IsBits(const Instruction& i) {
  PrimitiveType t = i.shape().element_type();
  return i.shape().IsArray() && (IsInteger(t) || IsPred(t));
}

bool SelfOperands(const Instruction& i, Opcode op) {
  return i.opcode() == op && i.operand_count() == 2 && i.operand(0) == i.operand(1) &&
         CanReplaceWith(i, *i.operand(0));
}

// and(x,x) -> x
bool MatchAndSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return IsBits(i) && SelfOperands(i, Opcode::kAnd);
}
// or(x,x) -> x
bool MatchOrSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return IsBits(i) && SelfOperands(i, Opcode::kOr);
}
// max(x,x) -> x
bool MatchMaxSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return SelfOperands(i, Opcode::kMaximum);
}
// min(x,x) -> x
bool MatchMinSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return SelfOperands(i, Opcode::kMinimum);
}
Instruction* ApplyFirstOperand(Instruction& i) { return i.operand(0); }

// xor(x,x) -> 0
bool MatchXorSelf(const Instruction& i, std::vector<const Instruction*>*) {
  return IsBits(i) && i.opcode() == Opcode::kXor && i.operand_count() == 2 &&
         i.operand(0) == i.operand(1);
}
Instruction* ApplyXorSelf(Instruction& i) { return AddFilled(i, i.shape(), 0.0); }

// not(not(x)) -> x
bool MatchNotNot(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsBits(i) || i.opcode() != Opcode::kNot || i.operand_count() != 1) return false;
  const Instruction* n = i.operand(0);
  if (n->opcode() != Opcode::kNot || n->operand_count() != 1 || !CanReplaceWith(i, *n->operand(0))) {
    return false;
  }
  if (inv) inv->push_back(n);
  return true;
}
Instruction* ApplyNotNot(Instruction& i) { return i.operand(0)->operand(0); }

// Index of an operand satisfying `pred` whose partner (wanted_other ? other : itself) can
// replace `i`; -1 if none.
template <typename Pred>
int ConstSide(const Instruction& i, Opcode op, Pred pred, bool keep_other) {
  if (!IsBits(i) || i.opcode() != op || i.operand_count() != 2) return -1;
  for (int k : {1, 0}) {
    if (!pred(*i.operand(k))) continue;
    const Instruction& kept = keep_other ? *i.operand(1 - k) : *i.operand(k);
    if (CanReplaceWith(i, kept)) return k;
  }
  return -1;
}
bool Zero(const Instruction& x) { return IsConstantValue(x, 0.0); }
bool Ones(const Instruction& x) { return IsAllOnes(x); }

// and(x, all-ones) -> x
bool MatchAndTrue(const Instruction& i, std::vector<const Instruction*>*) {
  return ConstSide(i, Opcode::kAnd, Ones, true) >= 0;
}
Instruction* ApplyAndTrue(Instruction& i) { return i.operand(1 - ConstSide(i, Opcode::kAnd, Ones, true)); }

// and(x, 0) -> 0
bool MatchAndFalse(const Instruction& i, std::vector<const Instruction*>*) {
  return ConstSide(i, Opcode::kAnd, Zero, false) >= 0;
}
Instruction* ApplyAndFalse(Instruction& i) { return i.operand(ConstSide(i, Opcode::kAnd, Zero, false)); }

// or(x, 0) -> x
bool MatchOrFalse(const Instruction& i, std::vector<const Instruction*>*) {
  return ConstSide(i, Opcode::kOr, Zero, true) >= 0;
}
Instruction* ApplyOrFalse(Instruction& i) { return i.operand(1 - ConstSide(i, Opcode::kOr, Zero, true)); }

// or(x, all-ones) -> all-ones
bool MatchOrTrue(const Instruction& i, std::vector<const Instruction*>*) {
  return ConstSide(i, Opcode::kOr, Ones, false) >= 0;
}
Instruction* ApplyOrTrue(Instruction& i) { return i.operand(ConstSide(i, Opcode::kOr, Ones, false)); }

// The identity of max (want_max=true: the type's lowest value) or min (its highest), as a
// double; nullopt for types where that is not exact (64-bit ints, complex, pred).
std::optional<double> MinMaxIdentity(PrimitiveType t, bool for_max) {
  const double inf = std::numeric_limits<double>::infinity();
  if (IsFloatingPoint(t)) return for_max ? -inf : inf;
  if (!IsInteger(t) || PrimitiveBitWidth(t) >= 64) return std::nullopt;
  int bits = PrimitiveBitWidth(t);
  if (IsUnsignedInt(t)) return for_max ? 0.0 : std::ldexp(1.0, bits) - 1;
  return for_max ? -std::ldexp(1.0, bits - 1) : std::ldexp(1.0, bits - 1) - 1;
}
int IdentitySide(const Instruction& i, Opcode op) {
  if (i.opcode() != op || i.operand_count() != 2 || !i.shape().IsArray()) return -1;
  std::optional<double> id = MinMaxIdentity(i.shape().element_type(), op == Opcode::kMaximum);
  if (!id) return -1;
  for (int k : {1, 0}) {
    if (IsConstantValue(*i.operand(k), *id) && CanReplaceWith(i, *i.operand(1 - k))) return k;
  }
  return -1;
}

// max(x, lowest) -> x   (-inf for floats: max propagates NaN, so max(NaN, -inf) = NaN)
bool MatchMaxIdentity(const Instruction& i, std::vector<const Instruction*>*) {
  return IdentitySide(i, Opcode::kMaximum) >= 0;
}
Instruction* ApplyMaxIdentity(Instruction& i) { return i.operand(1 - IdentitySide(i, Opcode::kMaximum)); }

// min(x, highest) -> x   (+inf for floats)
bool MatchMinIdentity(const Instruction& i, std::vector<const Instruction*>*) {
  return IdentitySide(i, Opcode::kMinimum) >= 0;
}
Instruction* ApplyMinIdentity(Instruction& i) { return i.operand(1 - IdentitySide(i, Opcode::kMinimum)); }

}  // namespace

void AddLogicRules(std::vector<SimpRule>* rules) {
  rules->push_back({"and_self", MatchAndSelf, ApplyFirstOperand});
  rules->push_back({"or_self", MatchOrSelf, ApplyFirstOperand});
  rules->push_back({"xor_self", MatchXorSelf, ApplyXorSelf});
  rules->push_back({"not_not", MatchNotNot, ApplyNotNot});
  rules->push_back({"and_true", MatchAndTrue, ApplyAndTrue});
  rules->push_back({"and_false", MatchAndFalse, ApplyAndFalse});
  rules->push_back({"or_false", MatchOrFalse, ApplyOrFalse});
  rules->push_back({"or_true", MatchOrTrue, ApplyOrTrue});
  rules->push_back({"max_self", MatchMaxSelf, ApplyFirstOperand});
  rules->push_back({"min_self", MatchMinSelf, ApplyFirstOperand});
  rules->push_back({"max_identity", MatchMaxIdentity, ApplyMaxIdentity});
  rules->push_back({"min_identity", MatchMinIdentity, ApplyMinIdentity});
}

}  // namespace hlox::simp
