// Compare and select simplifications: comparing an integer with itself, select with equal
// branches, with a constant predicate, and with a negated predicate.
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

// compare(x,x) -> true for EQ/GE/LE, false for NE/GT/LT   (ints and pred only: NaN != NaN)
bool MatchCompareSelf(const Instruction& i, std::vector<const Instruction*>*) {
  if (i.opcode() != Opcode::kCompare || i.operand_count() != 2 || i.operand(0) != i.operand(1)) {
    return false;
  }
  PrimitiveType t = i.operand(0)->shape().element_type();
  return i.shape().IsArray() && (IsInteger(t) || IsPred(t)) && i.attrs().comparison.has_value();
}
Instruction* ApplyCompareSelf(Instruction& i) {
  ComparisonDirection d = *i.attrs().comparison;
  bool v = d == ComparisonDirection::kEq || d == ComparisonDirection::kGe ||
           d == ComparisonDirection::kLe;
  return AddFilled(i, i.shape(), v ? 1.0 : 0.0);
}

// select(p, x, x) -> x
bool MatchSelectSame(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kSelect && i.operand_count() == 3 && i.operand(1) == i.operand(2) &&
         CanReplaceWith(i, *i.operand(1));
}
Instruction* ApplySelectSame(Instruction& i) { return i.operand(1); }

// select(true, a, b) -> a; select(false, a, b) -> b   (predicate constant or broadcast constant)
int ChosenBranch(const Instruction& i) {
  if (i.opcode() != Opcode::kSelect || i.operand_count() != 3) return -1;
  std::optional<double> p = UniformConstant(*i.operand(0));
  if (!p.has_value()) return -1;
  int k = *p != 0 ? 1 : 2;
  return CanReplaceWith(i, *i.operand(k)) ? k : -1;
}
bool MatchSelectConst(const Instruction& i, std::vector<const Instruction*>*) { return ChosenBranch(i) > 0; }
Instruction* ApplySelectConst(Instruction& i) { return i.operand(ChosenBranch(i)); }

// select(not(p), a, b) -> select(p, b, a)
bool MatchSelectNot(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (i.opcode() != Opcode::kSelect || i.operand_count() != 3) return false;
  const Instruction* n = i.operand(0);
  if (n->opcode() != Opcode::kNot || n->operand_count() != 1 ||
      !IsPred(n->shape().element_type())) {
    return false;
  }
  if (inv) inv->push_back(n);
  return true;
}
Instruction* ApplySelectNot(Instruction& i) {
  return AddNew(i, Opcode::kSelect, i.shape(),
                {i.operand(0)->operand(0), i.operand(2), i.operand(1)});
}

}  // namespace

void AddSelectRules(std::vector<SimpRule>* rules) {
  rules->push_back({"compare_self_int", MatchCompareSelf, ApplyCompareSelf});
  rules->push_back({"select_same", MatchSelectSame, ApplySelectSame});
  rules->push_back({"select_const_pred", MatchSelectConst, ApplySelectConst});
  rules->push_back({"select_not_pred", MatchSelectNot, ApplySelectNot});
}

}  // namespace hlox::simp
