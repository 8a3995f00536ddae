// Data-movement chains: reshape, transpose, broadcast, bitcast, copy and reverse. Collapsing
// a chain keeps the outer instruction's shape and layout; rules that return an operand
// directly require its layout to equal the replaced instruction's.
#include <algorithm>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool Is(const Instruction& i, Opcode op) { return i.opcode() == op && i.operand_count() == 1; }
bool Static(const Shape& s) {
  return std::none_of(s.dynamic_dims().begin(), s.dynamic_dims().end(), [](bool b) { return b; });
}
// outer(inner(x)) with both of the given opcodes; records inner.
bool Chain(const Instruction& i, Opcode outer, Opcode inner, std::vector<const Instruction*>* inv) {
  if (!Is(i, outer) || !Is(*i.operand(0), inner)) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplyOperand(Instruction& i) { return i.operand(0); }
Instruction* Rebuild(Instruction& i, Opcode op, Instruction* operand, std::vector<int64_t> dims) {
  if (CanReplaceWith(i, *operand) && op != Opcode::kBroadcast && op != Opcode::kTranspose) {
    return operand;
  }
  Instruction* n = AddNew(i, op, i.shape(), {operand});
  n->attrs().dimensions = std::move(dims);
  return n;
}

// reshape(x) -> x when the shapes (and layouts) are equal
bool MatchReshapeNoop(const Instruction& i, std::vector<const Instruction*>*) {
  return Is(i, Opcode::kReshape) && CanReplaceWith(i, *i.operand(0));
}

// reshape(reshape(x)) -> reshape(x)
bool MatchReshapeReshape(const Instruction& i, std::vector<const Instruction*>* inv) {
  return Chain(i, Opcode::kReshape, Opcode::kReshape, inv) && Static(i.shape()) &&
         Static(i.operand(0)->operand(0)->shape());
}
Instruction* ApplyReshapeReshape(Instruction& i) {
  return Rebuild(i, Opcode::kReshape, i.operand(0)->operand(0), {});
}

// reshape(broadcast(scalar)) -> broadcast(scalar)
bool MatchReshapeBroadcastScalar(const Instruction& i, std::vector<const Instruction*>* inv) {
  return Chain(i, Opcode::kReshape, Opcode::kBroadcast, inv) &&
         i.operand(0)->operand(0)->shape().IsArray() && i.operand(0)->operand(0)->shape().rank() == 0;
}
Instruction* ApplyReshapeBroadcastScalar(Instruction& i) {
  return Rebuild(i, Opcode::kBroadcast, i.operand(0)->operand(0), {});
}

// transpose(x, identity) -> x
bool MatchTransposeIdentity(const Instruction& i, std::vector<const Instruction*>*) {
  return Is(i, Opcode::kTranspose) && IsIdentityPermutation(i.dimensions()) &&
         CanReplaceWith(i, *i.operand(0));
}

// transpose(transpose(x, p1), p2) -> transpose(x, c) with c[k] = p1[p2[k]] (or x if c = id)
bool MatchTransposeTranspose(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!Chain(i, Opcode::kTranspose, Opcode::kTranspose, inv)) return false;
  int64_t r = i.shape().rank();
  return IsPermutation(i.dimensions(), r) && IsPermutation(i.operand(0)->dimensions(), r);
}
Instruction* ApplyTransposeTranspose(Instruction& i) {
  const std::vector<int64_t>& p2 = i.dimensions();
  const std::vector<int64_t>& p1 = i.operand(0)->dimensions();
  std::vector<int64_t> c(p2.size());
  for (size_t k = 0; k < p2.size(); ++k) c[k] = p1[p2[k]];
  Instruction* x = i.operand(0)->operand(0);
  if (IsIdentityPermutation(c) && CanReplaceWith(i, *x)) return x;
  return Rebuild(i, Opcode::kTranspose, x, c);
}

// broadcast(x) -> x when it adds no dimension and keeps the order
bool MatchBroadcastNoop(const Instruction& i, std::vector<const Instruction*>*) {
  return Is(i, Opcode::kBroadcast) && IsIdentityPermutation(i.dimensions()) &&
         CanReplaceWith(i, *i.operand(0));
}

// broadcast(broadcast(x, d1), d2) -> broadcast(x, d) with d[k] = d2[d1[k]]
bool MatchBroadcastBroadcast(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!Chain(i, Opcode::kBroadcast, Opcode::kBroadcast, inv)) return false;
  const Instruction& in = *i.operand(0);
  if (static_cast<int64_t>(i.dimensions().size()) != in.shape().rank()) return false;
  if (static_cast<int64_t>(in.dimensions().size()) != in.operand(0)->shape().rank()) return false;
  for (int64_t d : in.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(i.dimensions().size())) return false;
  }
  return true;
}
Instruction* ApplyBroadcastBroadcast(Instruction& i) {
  const Instruction& in = *i.operand(0);
  std::vector<int64_t> d;
  for (int64_t k : in.dimensions()) d.push_back(i.dimensions()[k]);
  return Rebuild(i, Opcode::kBroadcast, in.operand(0), d);
}

// transpose(broadcast(x, d), p) -> broadcast(x, d') with d'[k] = p^-1[d[k]], when d' stays
// increasing (so x's dimensions keep their order)
bool TransposedBroadcastDims(const Instruction& i, std::vector<int64_t>* out) {
  if (!Is(i, Opcode::kTranspose) || !Is(*i.operand(0), Opcode::kBroadcast)) return false;
  const Instruction& b = *i.operand(0);
  int64_t r = i.shape().rank();
  if (!IsPermutation(i.dimensions(), r) || b.shape().rank() != r) return false;
  if (static_cast<int64_t>(b.dimensions().size()) != b.operand(0)->shape().rank()) return false;
  std::vector<int64_t> inv(r);
  for (int64_t k = 0; k < r; ++k) inv[i.dimensions()[k]] = k;
  out->clear();
  for (int64_t d : b.dimensions()) {
    if (d < 0 || d >= r) return false;
    if (!out->empty() && inv[d] <= out->back()) return false;
    out->push_back(inv[d]);
  }
  return true;
}
bool MatchTransposeBroadcast(const Instruction& i, std::vector<const Instruction*>* inv) {
  std::vector<int64_t> d;
  if (!TransposedBroadcastDims(i, &d)) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplyTransposeBroadcast(Instruction& i) {
  std::vector<int64_t> d;
  TransposedBroadcastDims(i, &d);
  return Rebuild(i, Opcode::kBroadcast, i.operand(0)->operand(0), d);
}

// bitcast(x) -> x when the shapes (and layouts) are equal
bool MatchBitcastNoop(const Instruction& i, std::vector<const Instruction*>*) {
  return Is(i, Opcode::kBitcast) && CanReplaceWith(i, *i.operand(0));
}

// bitcast(bitcast(x)) -> bitcast(x)   (both reinterpret the same bytes)
bool MatchBitcastBitcast(const Instruction& i, std::vector<const Instruction*>* inv) {
  return Chain(i, Opcode::kBitcast, Opcode::kBitcast, inv);
}
Instruction* ApplyBitcastBitcast(Instruction& i) {
  return Rebuild(i, Opcode::kBitcast, i.operand(0)->operand(0), {});
}

// copy(x) -> x when the layouts are equal
bool MatchCopyNoop(const Instruction& i, std::vector<const Instruction*>*) {
  return Is(i, Opcode::kCopy) && CanReplaceWith(i, *i.operand(0));
}

// copy(copy(x)) -> copy(x)   (or x when x already has the outer layout)
bool MatchCopyCopy(const Instruction& i, std::vector<const Instruction*>* inv) {
  return Chain(i, Opcode::kCopy, Opcode::kCopy, inv);
}
Instruction* ApplyCopyCopy(Instruction& i) { return Rebuild(i, Opcode::kCopy, i.operand(0)->operand(0), {}); }

std::vector<int64_t> Sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// reverse(reverse(x, d), d) -> x
bool MatchReverseReverse(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!Is(i, Opcode::kReverse) || !Is(*i.operand(0), Opcode::kReverse)) return false;
  if (Sorted(i.dimensions()) != Sorted(i.operand(0)->dimensions())) return false;
  if (!CanReplaceWith(i, *i.operand(0)->operand(0))) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplyReverseReverse(Instruction& i) { return i.operand(0)->operand(0); }

// reverse(x, d) -> x when every reversed dimension has size <= 1
bool MatchReverseTrivial(const Instruction& i, std::vector<const Instruction*>*) {
  if (!Is(i, Opcode::kReverse) || !CanReplaceWith(i, *i.operand(0))) return false;
  for (int64_t d : i.dimensions()) {
    if (d < 0 || d >= i.shape().rank() || i.shape().dim(d) > 1) return false;
  }
  return true;
}

}  // namespace

void AddShapeRules(std::vector<SimpRule>* rules) {
  rules->push_back({"reshape_noop", MatchReshapeNoop, ApplyOperand});
  rules->push_back({"reshape_reshape", MatchReshapeReshape, ApplyReshapeReshape});
  rules->push_back({"reshape_broadcast_scalar", MatchReshapeBroadcastScalar, ApplyReshapeBroadcastScalar});
  rules->push_back({"transpose_identity", MatchTransposeIdentity, ApplyOperand});
  rules->push_back({"transpose_transpose", MatchTransposeTranspose, ApplyTransposeTranspose});
  rules->push_back({"transpose_broadcast", MatchTransposeBroadcast, ApplyTransposeBroadcast});
  rules->push_back({"broadcast_noop", MatchBroadcastNoop, ApplyOperand});
  rules->push_back({"broadcast_broadcast", MatchBroadcastBroadcast, ApplyBroadcastBroadcast});
  rules->push_back({"bitcast_noop", MatchBitcastNoop, ApplyOperand});
  rules->push_back({"bitcast_bitcast", MatchBitcastBitcast, ApplyBitcastBitcast});
  rules->push_back({"copy_noop", MatchCopyNoop, ApplyOperand});
  rules->push_back({"copy_copy", MatchCopyCopy, ApplyCopyCopy});
  rules->push_back({"reverse_reverse", MatchReverseReverse, ApplyReverseReverse});
  rules->push_back({"reverse_trivial", MatchReverseTrivial, ApplyOperand});
}

}  // namespace hlox::simp
