// Reduce simplifications. Recognised reducers are `p0 OP p1` for add, multiply, max, min,
// and, or (simp_util's ReducerOpcode); a reduce's init must be OP's identity for rules that drop
// it. reduce_reshape and reduce_transpose only change the order in which the same elements are
// combined, as XLA assumes reducers are associative; the other rules are exact (integer add
// wraps like the multiply that replaces it). Float add of a broadcast is not rewritten: n roundings of
// repeated addition differ from the single rounding of x*n.
#include <algorithm>
#include <cmath>
#include <limits>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

// A single-operand reduce: reduce(x, init) with an array result.
bool IsSimpleReduce(const Instruction& i) {
  if (i.opcode() != Opcode::kReduce || i.operand_count() != 2 || !i.shape().IsArray()) return false;
  const Shape& x = i.operand(0)->shape();
  if (!x.IsArray() || i.operand(1)->shape().rank() != 0) return false;
  for (int64_t d : i.dimensions()) {
    if (d < 0 || d >= x.rank()) return false;
  }
  return ReducerOpcode(i).has_value();
}

// True when the reduce's init is its reducer's identity element.
bool InitIsIdentity(const Instruction& i) {
  const Instruction& init = *i.operand(1);
  PrimitiveType t = init.shape().element_type();
  const double inf = std::numeric_limits<double>::infinity();
  switch (*ReducerOpcode(i)) {
    case Opcode::kAdd: return IsConstantValue(init, 0.0);
    case Opcode::kMultiply: return IsConstantValue(init, 1.0);
    case Opcode::kMaximum: return IsFloatingPoint(t) && IsConstantValue(init, -inf);
    case Opcode::kMinimum: return IsFloatingPoint(t) && IsConstantValue(init, inf);
    case Opcode::kAnd: return IsAllOnes(init);
    case Opcode::kOr: return IsConstantValue(init, 0.0) && (IsPred(t) || IsInteger(t));
    default: return false;
  }
}

std::unique_ptr<Instruction> NewReduce(const Instruction& i, Instruction* x, std::vector<int64_t> dims) {
  std::unique_ptr<Instruction> r = i.CloneWithOperands(i.shape(), {x, i.operand(1)});
  r->set_name("");
  r->attrs().dimensions = std::move(dims);
  return r;
}

// reduce(x, init, dims={}) -> x   (init is the reducer's identity)
bool MatchReduceNoDims(const Instruction& i, std::vector<const Instruction*>*) {
  return IsSimpleReduce(i) && i.dimensions().empty() && InitIsIdentity(i) &&
         CanReplaceWith(i, *i.operand(0));
}
Instruction* ApplyReduceNoDims(Instruction& i) { return i.operand(0); }

// reduce(reshape(x), D) -> reduce(x, D') when the reshape only splits/merges dimensions inside
// the reduced set and keeps every other dimension as is.
bool ReshapeReducedDims(const Instruction& i, std::vector<int64_t>* out) {
  if (!IsSimpleReduce(i)) return false;
  const Instruction& r = *i.operand(0);
  if (r.opcode() != Opcode::kReshape || r.operand_count() != 1) return false;
  const std::vector<int64_t>& a = r.operand(0)->shape().dims();
  const std::vector<int64_t>& b = r.shape().dims();
  if (!r.operand(0)->shape().IsArray() || r.shape().ElementCount() == 0) return false;
  auto reduced = [&](int64_t d) { return std::find(i.dimensions().begin(), i.dimensions().end(), d) != i.dimensions().end(); };
  int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  int64_t ia = 0, jb = 0;
  out->clear();
  while (ia < ra || jb < rb) {
    int64_t i0 = ia, j0 = jb, pa = 1, pb = 1;
    if (ia < ra) pa *= a[ia++];
    if (jb < rb) pb *= b[jb++];
    while (pa != pb) {
      if (pa < pb && ia < ra) pa *= a[ia++];
      else if (pb < pa && jb < rb) pb *= b[jb++];
      else return false;
    }
    bool all_reduced = true, any_reduced = false;
    for (int64_t j = j0; j < jb; ++j) {
      all_reduced = all_reduced && reduced(j);
      any_reduced = any_reduced || reduced(j);
    }
    if (jb == j0) any_reduced = true;  // x dims of size 1 that the reshape drops
    if (any_reduced && !all_reduced) return false;
    if (any_reduced) {
      for (int64_t k = i0; k < ia; ++k) out->push_back(k);
    } else if (ia - i0 != 1 || jb - j0 != 1) {
      return false;  // kept dims must map one to one
    }
  }
  return true;
}
bool MatchReduceReshape(const Instruction& i, std::vector<const Instruction*>* inv) {
  std::vector<int64_t> dims;
  if (!ReshapeReducedDims(i, &dims)) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplyReduceReshape(Instruction& i) {
  std::vector<int64_t> dims;
  ReshapeReducedDims(i, &dims);
  return i.parent()->AddInstruction(NewReduce(i, i.operand(0)->operand(0), dims));
}

// reduce(transpose(x, p), D) -> reduce(x, p[D]) when the dimensions kept keep their order (the
// result lists them in operand order). Only the order in which elements combine changes.
bool MatchReduceTranspose(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsSimpleReduce(i)) return false;
  const Instruction& t = *i.operand(0);
  if (t.opcode() != Opcode::kTranspose || t.operand_count() != 1 ||
      !IsPermutation(t.dimensions(), t.shape().rank())) {
    return false;
  }
  const std::vector<int64_t>& dims = i.dimensions();
  int64_t last = -1;
  for (int64_t d = 0; d < t.shape().rank(); ++d) {
    if (std::find(dims.begin(), dims.end(), d) != dims.end()) continue;
    if (t.dimensions()[d] < last) return false;
    last = t.dimensions()[d];
  }
  if (inv) inv->push_back(&t);
  return true;
}
Instruction* ApplyReduceTranspose(Instruction& i) {
  const Instruction& t = *i.operand(0);
  std::vector<int64_t> dims;
  for (int64_t d : i.dimensions()) dims.push_back(t.dimensions()[d]);
  std::sort(dims.begin(), dims.end());
  return i.parent()->AddInstruction(NewReduce(i, t.operand(0), dims));
}

// reduce(broadcast(x), the broadcast's new dims) -> x for max/min/and/or with identity init;
// -> x * n for integer add with init 0 (n = number of elements combined)
bool MatchReduceBroadcast(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsSimpleReduce(i) || !InitIsIdentity(i)) return false;
  const Instruction& b = *i.operand(0);
  if (b.opcode() != Opcode::kBroadcast || b.operand_count() != 1) return false;
  const std::vector<int64_t>& bd = b.dimensions();
  if (static_cast<int64_t>(bd.size()) != b.operand(0)->shape().rank()) return false;
  for (size_t k = 1; k < bd.size(); ++k) {
    if (bd[k] <= bd[k - 1]) return false;
  }
  std::vector<int64_t> added;
  for (int64_t d = 0; d < b.shape().rank(); ++d) {
    if (std::find(bd.begin(), bd.end(), d) == bd.end()) added.push_back(d);
  }
  std::vector<int64_t> dims = i.dimensions();
  std::sort(dims.begin(), dims.end());
  if (dims != added || dims.empty()) return false;
  for (int64_t d : dims) {
    if (b.shape().dim(d) == 0) return false;
  }
  Opcode op = *ReducerOpcode(i);
  PrimitiveType t = i.shape().element_type();
  bool idempotent = op == Opcode::kMaximum || op == Opcode::kMinimum || op == Opcode::kAnd || op == Opcode::kOr;
  bool int_add = op == Opcode::kAdd && IsInteger(t);
  if (!idempotent && !int_add) return false;
  if (!b.operand(0)->shape().SameDimensions(i.shape()) || b.operand(0)->shape().element_type() != t) return false;
  if (inv) inv->push_back(&b);
  return true;
}
Instruction* ApplyReduceBroadcast(Instruction& i) {
  Instruction* x = i.operand(0)->operand(0);
  if (*ReducerOpcode(i) != Opcode::kAdd) {
    if (CanReplaceWith(i, *x)) return x;
    return AddNew(i, Opcode::kCopy, i.shape(), {x});
  }
  int64_t n = 1;
  for (int64_t d : i.dimensions()) n *= i.operand(0)->shape().dim(d);
  Instruction* count = AddFilled(i, ShapeLike(i.shape(), i.shape().element_type(), i.shape().dims()),
                                 static_cast<double>(n));
  return AddNew(i, Opcode::kMultiply, i.shape(), {x, count});
}

}  // namespace

void AddReduceRules(std::vector<SimpRule>* rules) {
  rules->push_back({"reduce_no_dims", MatchReduceNoDims, ApplyReduceNoDims});
  rules->push_back({"reduce_reshape", MatchReduceReshape, ApplyReduceReshape});
  rules->push_back({"reduce_transpose", MatchReduceTranspose, ApplyReduceTranspose});
  rules->push_back({"reduce_broadcast", MatchReduceBroadcast, ApplyReduceBroadcast});
}

}  // namespace hlox::simp
