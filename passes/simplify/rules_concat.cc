// Concatenate simplifications: a single operand, zero-sized operands, nested concatenates along
// the same dimension, and adjacent stride-1 slices of one value that together are one slice.
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

// The concatenate dimension, or -1 when `i` is not a well-formed concatenate.
int64_t ConcatDim(const Instruction& i) {
  if (i.opcode() != Opcode::kConcatenate || i.operand_count() < 1 || i.dimensions().size() != 1 ||
      !i.shape().IsArray()) {
    return -1;
  }
  int64_t d = i.dimensions()[0];
  if (d < 0 || d >= i.shape().rank()) return -1;
  for (const Instruction* op : i.operands()) {
    if (!op->shape().IsArray() || op->shape().rank() != i.shape().rank()) return -1;
  }
  return d;
}
Instruction* NewConcat(Instruction& i, std::vector<Instruction*> ops) {
  if (ops.size() == 1 && CanReplaceWith(i, *ops[0])) return ops[0];
  Instruction* n = AddNew(i, Opcode::kConcatenate, i.shape(), std::move(ops));
  n->attrs().dimensions = i.dimensions();
  return n;
}

// concatenate(x) -> x
bool MatchConcatSingle(const Instruction& i, std::vector<const Instruction*>*) {
  return ConcatDim(i) >= 0 && i.operand_count() == 1 && CanReplaceWith(i, *i.operand(0));
}
Instruction* ApplyConcatSingle(Instruction& i) { return i.operand(0); }

// concatenate(a, empty, b) -> concatenate(a, b)   (keeps one operand if all are empty)
bool MatchConcatDropEmpty(const Instruction& i, std::vector<const Instruction*>*) {
  int64_t d = ConcatDim(i);
  if (d < 0 || i.operand_count() < 2 || i.shape().ElementCount() == 0) return false;
  for (const Instruction* op : i.operands()) {
    if (op->shape().dim(d) == 0) return true;
  }
  return false;
}
Instruction* ApplyConcatDropEmpty(Instruction& i) {
  std::vector<Instruction*> ops;
  for (Instruction* op : i.operands()) {
    if (op->shape().dim(i.dimensions()[0]) != 0) ops.push_back(op);
  }
  return NewConcat(i, std::move(ops));
}

// concatenate(a, concatenate(b, c), d) -> concatenate(a, b, c, d)   (same dimension)
bool IsNestedConcat(const Instruction& outer, const Instruction& op) {
  return ConcatDim(op) >= 0 && ConcatDim(op) == ConcatDim(outer);
}
bool MatchConcatMerge(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (ConcatDim(i) < 0) return false;
  bool any = false;
  for (const Instruction* op : i.operands()) {
    if (IsNestedConcat(i, *op)) {
      any = true;
      if (inv) inv->push_back(op);
    }
  }
  return any;
}
Instruction* ApplyConcatMerge(Instruction& i) {
  std::vector<Instruction*> ops;
  for (Instruction* op : i.operands()) {
    if (IsNestedConcat(i, *op)) {
      for (Instruction* inner : op->operands()) ops.push_back(inner);
    } else {
      ops.push_back(op);
    }
  }
  return NewConcat(i, std::move(ops));
}

// concatenate(slice(x, [a:b]), slice(x, [b:c])) -> slice(x, [a:c])   (stride 1 along the
// concat dimension, identical slicing elsewhere); merges every such adjacent pair.
bool Adjacent(const Instruction& p, const Instruction& q, int64_t d) {
  if (p.opcode() != Opcode::kSlice || q.opcode() != Opcode::kSlice || p.operand_count() != 1 ||
      q.operand_count() != 1 || p.operand(0) != q.operand(0)) {
    return false;
  }
  const auto& a = p.attrs().slice;
  const auto& b = q.attrs().slice;
  if (a.size() != b.size() || static_cast<int64_t>(a.size()) != p.shape().rank()) return false;
  for (size_t k = 0; k < a.size(); ++k) {
    if (static_cast<int64_t>(k) == d) {
      if (a[k].stride != 1 || b[k].stride != 1 || a[k].limit != b[k].start) return false;
    } else if (!(a[k] == b[k])) {
      return false;
    }
  }
  return true;
}
bool MatchConcatSlices(const Instruction& i, std::vector<const Instruction*>* inv) {
  int64_t d = ConcatDim(i);
  if (d < 0) return false;
  for (int64_t k = 0; k + 1 < i.operand_count(); ++k) {
    if (Adjacent(*i.operand(k), *i.operand(k + 1), d)) {
      if (inv) inv->push_back(i.operand(k));
      return true;
    }
  }
  return false;
}
Instruction* ApplyConcatSlices(Instruction& i) {
  int64_t d = ConcatDim(i);
  std::vector<Instruction*> ops;
  for (int64_t k = 0; k < i.operand_count();) {
    Instruction* first = i.operand(k);
    int64_t j = k;
    while (j + 1 < i.operand_count() && Adjacent(*i.operand(j), *i.operand(j + 1), d)) ++j;
    if (j == k) {
      ops.push_back(first);
    } else {
      std::vector<SliceDim> dims = first->attrs().slice;
      dims[d].limit = i.operand(j)->attrs().slice[d].limit;
      std::vector<int64_t> shape = first->shape().dims();
      shape[d] = dims[d].limit - dims[d].start;
      Instruction* s = AddNew(i, Opcode::kSlice,
                              ShapeLike(i.shape(), first->shape().element_type(), shape),
                              {first->operand(0)});
      s->attrs().slice = std::move(dims);
      ops.push_back(s);
    }
    k = j + 1;
  }
  if (ops.size() == 1 && !CanReplaceWith(i, *ops[0])) {
    // The merged slice is the whole result: give it the concatenate's own shape and layout.
    ops[0]->set_shape(i.shape());
    return ops[0];
  }
  return NewConcat(i, std::move(ops));
}

}  // namespace

void AddConcatRules(std::vector<SimpRule>* rules) {
  rules->push_back({"concat_single", MatchConcatSingle, ApplyConcatSingle});
  rules->push_back({"concat_drop_empty", MatchConcatDropEmpty, ApplyConcatDropEmpty});
  rules->push_back({"concat_merge", MatchConcatMerge, ApplyConcatMerge});
  rules->push_back({"concat_slices", MatchConcatSlices, ApplyConcatSlices});
}

}  // namespace hlox::simp
