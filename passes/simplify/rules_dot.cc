// Dot canonicalisation: a transposed operand folds into the dot's dimension numbers when that
// keeps the order of the operand's free dimensions (so the result layout is unchanged); a dot
// contracting over an empty dimension is zero; a dot without contraction, or contracting only
// size-1 dimensions, is an elementwise multiply of broadcasts (one product per output element,
// so exact).
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool IsDot(const Instruction& i) {
  return i.opcode() == Opcode::kDot && i.operand_count() == 2 && i.attrs().dot.has_value() &&
         i.shape().IsArray() && i.operand(0)->shape().IsArray() && i.operand(1)->shape().IsArray();
}
bool Contains(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t y : v) if (y == x) return true;
  return false;
}

// Dimension numbers with operand `side`'s transpose folded in; false when not foldable.
bool FoldTranspose(const Instruction& dot, int side, DotDimensionNumbers* out) {
  if (!IsDot(dot)) return false;
  const Instruction& t = *dot.operand(side);
  if (t.opcode() != Opcode::kTranspose || t.operand_count() != 1) return false;
  const std::vector<int64_t>& perm = t.dimensions();
  int64_t r = t.shape().rank();
  if (!IsPermutation(perm, r)) return false;
  DotDimensionNumbers dn = *dot.attrs().dot;
  std::vector<int64_t>& batch = side == 0 ? dn.lhs_batch : dn.rhs_batch;
  std::vector<int64_t>& contr = side == 0 ? dn.lhs_contracting : dn.rhs_contracting;
  for (int64_t d : batch) if (d < 0 || d >= r) return false;
  for (int64_t d : contr) if (d < 0 || d >= r) return false;
  int64_t prev = -1;
  for (int64_t j = 0; j < r; ++j) {
    if (Contains(batch, j) || Contains(contr, j)) continue;
    if (perm[j] < prev) return false;  // free dimensions would change order
    prev = perm[j];
  }
  for (int64_t& d : batch) d = perm[d];
  for (int64_t& d : contr) d = perm[d];
  *out = dn;
  return true;
}
bool MatchDotTranspose(const Instruction& i, int side, std::vector<const Instruction*>* inv) {
  DotDimensionNumbers dn;
  if (!FoldTranspose(i, side, &dn)) return false;
  if (inv) inv->push_back(i.operand(side));
  return true;
}
Instruction* ApplyDotTranspose(Instruction& i, int side) {
  DotDimensionNumbers dn;
  FoldTranspose(i, side, &dn);
  std::vector<Instruction*> ops = {i.operand(0), i.operand(1)};
  ops[side] = ops[side]->operand(0);
  std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
  c->set_name("");
  c->attrs().dot = dn;
  return i.parent()->AddInstruction(std::move(c));
}

// dot(transpose(a), b) -> dot(a, b) with a's dimension numbers
bool MatchDotTransposeLhs(const Instruction& i, std::vector<const Instruction*>* inv) {
  return MatchDotTranspose(i, 0, inv);
}
Instruction* ApplyDotTransposeLhs(Instruction& i) { return ApplyDotTranspose(i, 0); }
// dot(a, transpose(b)) -> dot(a, b) with b's dimension numbers
bool MatchDotTransposeRhs(const Instruction& i, std::vector<const Instruction*>* inv) {
  return MatchDotTranspose(i, 1, inv);
}
Instruction* ApplyDotTransposeRhs(Instruction& i) { return ApplyDotTranspose(i, 1); }

// dot(a, b) -> 0 when a contracting dimension has size 0 (an empty sum)
bool MatchDotEmptyContract(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsDot(i) || i.shape().ElementCount() == 0) return false;
  const Shape& a = i.operand(0)->shape();
  for (int64_t d : i.attrs().dot->lhs_contracting) {
    if (d >= 0 && d < a.rank() && a.dim(d) == 0) return true;
  }
  return false;
}
Instruction* ApplyDotEmptyContract(Instruction& i) { return AddFilled(i, i.shape(), 0.0); }

// Batch dims lead both operands in order and operand/result types are equal (not pred).
bool LeadingBatchSameType(const Instruction& i) {
  const DotDimensionNumbers& dn = *i.attrs().dot;
  if (dn.lhs_batch.size() != dn.rhs_batch.size()) return false;
  for (size_t k = 0; k < dn.lhs_batch.size(); ++k) {
    if (dn.lhs_batch[k] != static_cast<int64_t>(k) || dn.rhs_batch[k] != static_cast<int64_t>(k)) return false;
  }
  PrimitiveType t = i.shape().element_type();
  return !IsPred(t) && i.operand(0)->shape().element_type() == t && i.operand(1)->shape().element_type() == t;
}

// `x` without the dimensions listed in `drop` (all of size 1), reshaped if needed.
Instruction* DropUnitDims(Instruction& anchor, Instruction* x, const std::vector<int64_t>& drop) {
  if (drop.empty()) return x;
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < x->shape().rank(); ++k) {
    if (!Contains(drop, k)) dims.push_back(x->shape().dim(k));
  }
  return AddNew(anchor, Opcode::kReshape, ShapeLike(anchor.shape(), x->shape().element_type(), dims), {x});
}

// multiply(broadcast(a), broadcast(b)) for a dot whose operands `a`, `b` have no contracting dims.
Instruction* OuterProduct(Instruction& i, Instruction* a, Instruction* b) {
  int64_t nb = static_cast<int64_t>(i.attrs().dot->lhs_batch.size());
  std::vector<int64_t> da, db;
  for (int64_t k = 0; k < a->shape().rank(); ++k) da.push_back(k);
  for (int64_t k = 0; k < b->shape().rank(); ++k) db.push_back(k < nb ? k : a->shape().rank() + (k - nb));
  Shape s = ShapeLike(i.shape(), i.shape().element_type(), i.shape().dims());
  Instruction* ba = AddNew(i, Opcode::kBroadcast, s, {a});
  ba->attrs().dimensions = da;
  Instruction* bb = AddNew(i, Opcode::kBroadcast, s, {b});
  bb->attrs().dimensions = db;
  return AddNew(i, Opcode::kMultiply, i.shape(), {ba, bb});
}

// dot(a, b) with no contracting dims -> multiply(broadcast(a), broadcast(b))
// (one product per output element, so exact)
bool MatchDotNoContract(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsDot(i) || !LeadingBatchSameType(i)) return false;
  const DotDimensionNumbers& dn = *i.attrs().dot;
  if (!dn.lhs_contracting.empty() || !dn.rhs_contracting.empty()) return false;
  const Shape& a = i.operand(0)->shape();
  const Shape& b = i.operand(1)->shape();
  int64_t nb = static_cast<int64_t>(dn.lhs_batch.size());
  return i.shape().rank() == a.rank() + b.rank() - nb && a.rank() >= nb && b.rank() >= nb;
}
Instruction* ApplyDotNoContract(Instruction& i) { return OuterProduct(i, i.operand(0), i.operand(1)); }

// dot(a, b) contracting only size-1 dims -> multiply(broadcast(reshape(a)), broadcast(reshape(b)))
// (a sum of one product is that product, so exact)
bool MatchDotUnitContract(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsDot(i) || !LeadingBatchSameType(i)) return false;
  const DotDimensionNumbers& dn = *i.attrs().dot;
  if (dn.lhs_contracting.empty() || dn.lhs_contracting.size() != dn.rhs_contracting.size()) return false;
  const Shape& a = i.operand(0)->shape();
  const Shape& b = i.operand(1)->shape();
  for (int64_t d : dn.lhs_contracting) if (d < 0 || d >= a.rank() || a.dim(d) != 1) return false;
  for (int64_t d : dn.rhs_contracting) if (d < 0 || d >= b.rank() || b.dim(d) != 1) return false;
  int64_t nb = static_cast<int64_t>(dn.lhs_batch.size());
  int64_t nc = static_cast<int64_t>(dn.lhs_contracting.size());
  return i.shape().rank() == a.rank() + b.rank() - nb - 2 * nc;
}
Instruction* ApplyDotUnitContract(Instruction& i) {
  const DotDimensionNumbers& dn = *i.attrs().dot;
  Instruction* a = DropUnitDims(i, i.operand(0), dn.lhs_contracting);
  Instruction* b = DropUnitDims(i, i.operand(1), dn.rhs_contracting);
  return OuterProduct(i, a, b);
}

}  // namespace

void AddDotRules(std::vector<SimpRule>* rules) {
  rules->push_back({"dot_transpose_lhs", MatchDotTransposeLhs, ApplyDotTransposeLhs});
  rules->push_back({"dot_transpose_rhs", MatchDotTransposeRhs, ApplyDotTransposeRhs});
  rules->push_back({"dot_empty_contract", MatchDotEmptyContract, ApplyDotEmptyContract});
  rules->push_back({"dot_no_contract", MatchDotNoContract, ApplyDotNoContract});
  rules->push_back({"dot_unit_contract", MatchDotUnitContract, ApplyDotUnitContract});
}

}  // namespace hlox::simp
