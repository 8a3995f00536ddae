// Slice simplifications: full slices, slice of slice, slice of concatenate or pad that reads
// only one operand / only the unpadded region, slice of a broadcast scalar, and dynamic slices
// whose start indices are constants or whose size covers the whole operand.
#include <algorithm>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

// True when `i` is a well-formed static slice of its single operand.
bool IsSlice(const Instruction& i) {
  if (i.opcode() != Opcode::kSlice || i.operand_count() != 1 || !i.shape().IsArray()) return false;
  const Shape& in = i.operand(0)->shape();
  if (!in.IsArray() || static_cast<int64_t>(i.attrs().slice.size()) != in.rank() ||
      i.shape().rank() != in.rank()) {
    return false;
  }
  for (const SliceDim& d : i.attrs().slice) {
    if (d.stride < 1 || d.start < 0) return false;
  }
  return true;
}
// Index of the last element a slice reads along dim k (start when the dim is empty).
int64_t LastIndex(const Instruction& s, int64_t k) {
  const SliceDim& d = s.attrs().slice[k];
  int64_t n = s.shape().dim(k);
  return n > 0 ? d.start + (n - 1) * d.stride : d.start;
}
bool NonEmpty(const Instruction& s) { return s.shape().ElementCount() > 0; }

Instruction* MakeSlice(Instruction& anchor, Instruction* x, std::vector<SliceDim> dims) {
  bool full = true;
  for (size_t k = 0; k < dims.size(); ++k) {
    full = full && dims[k].start == 0 && dims[k].stride == 1 && dims[k].limit == x->shape().dim(k);
  }
  if (full && CanReplaceWith(anchor, *x)) return x;
  Instruction* n = AddNew(anchor, Opcode::kSlice, anchor.shape(), {x});
  n->attrs().slice = std::move(dims);
  return n;
}

// slice(x) -> x when the slice covers x with stride 1
bool MatchSliceNoop(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsSlice(i) || !CanReplaceWith(i, *i.operand(0))) return false;
  for (const SliceDim& d : i.attrs().slice) {
    if (d.start != 0 || d.stride != 1) return false;
  }
  return true;
}
Instruction* ApplyOperand(Instruction& i) { return i.operand(0); }

// slice(slice(x, s1:_:t1), s2:_:t2) -> slice(x, s1+s2*t1 : _ : t1*t2)
bool MatchSliceSlice(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsSlice(i) || !IsSlice(*i.operand(0))) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplySliceSlice(Instruction& i) {
  const Instruction& in = *i.operand(0);
  std::vector<SliceDim> dims;
  for (int64_t k = 0; k < i.shape().rank(); ++k) {
    const SliceDim& a = in.attrs().slice[k];
    const SliceDim& b = i.attrs().slice[k];
    SliceDim d;
    d.start = a.start + b.start * a.stride;
    d.stride = a.stride * b.stride;
    int64_t n = i.shape().dim(k);
    d.limit = n > 0 ? d.start + (n - 1) * d.stride + 1 : d.start;
    dims.push_back(d);
  }
  return MakeSlice(i, in.operand(0), std::move(dims));
}

// slice(concat(a, b, ...)) -> slice(b) when the slice reads only inside b
int ConcatSource(const Instruction& i, int64_t* offset) {
  if (!IsSlice(i) || !NonEmpty(i)) return -1;
  const Instruction& c = *i.operand(0);
  if (c.opcode() != Opcode::kConcatenate || c.dimensions().size() != 1) return -1;
  int64_t dim = c.dimensions()[0];
  if (dim < 0 || dim >= i.shape().rank()) return -1;
  int64_t first = i.attrs().slice[dim].start, last = LastIndex(i, dim);
  int64_t o = 0;
  for (int64_t k = 0; k < c.operand_count(); ++k) {
    const Shape& ks = c.operand(k)->shape();
    if (!ks.IsArray() || ks.rank() != i.shape().rank()) return -1;
    int64_t size = ks.dim(dim);
    if (first >= o && last < o + size) {
      *offset = o;
      return static_cast<int>(k);
    }
    o += size;
  }
  return -1;
}
bool MatchSliceConcat(const Instruction& i, std::vector<const Instruction*>* inv) {
  int64_t o = 0;
  if (ConcatSource(i, &o) < 0) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplySliceConcat(Instruction& i) {
  int64_t o = 0;
  int k = ConcatSource(i, &o);
  Instruction& c = *i.operand(0);
  int64_t dim = c.dimensions()[0];
  std::vector<SliceDim> dims = i.attrs().slice;
  dims[dim].start -= o;
  dims[dim].limit = LastIndex(i, dim) - o + 1;
  return MakeSlice(i, c.operand(k), std::move(dims));
}

// slice(pad(x, v)) -> slice(x) when the slice reads only x's elements (no interior padding)
bool SliceInsidePad(const Instruction& i) {
  if (!IsSlice(i) || !NonEmpty(i)) return false;
  const Instruction& p = *i.operand(0);
  if (p.opcode() != Opcode::kPad || p.operand_count() != 2) return false;
  const Shape& x = p.operand(0)->shape();
  if (static_cast<int64_t>(p.attrs().padding.size()) != x.rank() || x.rank() != i.shape().rank()) return false;
  for (int64_t k = 0; k < x.rank(); ++k) {
    const PaddingDim& pd = p.attrs().padding[k];
    if (pd.interior != 0) return false;
    int64_t first = i.attrs().slice[k].start - pd.low, last = LastIndex(i, k) - pd.low;
    if (first < 0 || last >= x.dim(k)) return false;
  }
  return true;
}
bool MatchSlicePad(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!SliceInsidePad(i)) return false;
  if (inv) inv->push_back(i.operand(0));
  return true;
}
Instruction* ApplySlicePad(Instruction& i) {
  Instruction& p = *i.operand(0);
  std::vector<SliceDim> dims = i.attrs().slice;
  for (size_t k = 0; k < dims.size(); ++k) {
    int64_t last = LastIndex(i, k) - p.attrs().padding[k].low;
    dims[k].start -= p.attrs().padding[k].low;
    dims[k].limit = last + 1;
  }
  return MakeSlice(i, p.operand(0), std::move(dims));
}

// slice(broadcast(scalar)) -> broadcast(scalar)
bool MatchSliceBroadcastScalar(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsSlice(i)) return false;
  const Instruction& b = *i.operand(0);
  if (b.opcode() != Opcode::kBroadcast || b.operand_count() != 1 || b.operand(0)->shape().rank() != 0 ||
      !b.operand(0)->shape().IsArray()) {
    return false;
  }
  if (inv) inv->push_back(&b);
  return true;
}
Instruction* ApplySliceBroadcastScalar(Instruction& i) {
  return AddNew(i, Opcode::kBroadcast, i.shape(), {i.operand(0)->operand(0)});
}

// dynamic-slice(x, c0, c1, ...) -> slice(x, clamp(c, 0, dim - size)) for constant starts
bool IsDynamicSlice(const Instruction& i) {
  if (i.opcode() != Opcode::kDynamicSlice || i.operand_count() < 1 || !i.shape().IsArray()) return false;
  const Shape& x = i.operand(0)->shape();
  if (!x.IsArray() || i.operand_count() != x.rank() + 1 || i.shape().rank() != x.rank()) return false;
  if (static_cast<int64_t>(i.attrs().dynamic_slice_sizes.size()) != x.rank()) return false;
  for (int64_t k = 0; k < x.rank(); ++k) {
    int64_t size = i.attrs().dynamic_slice_sizes[k];
    if (size < 0 || size > x.dim(k) || size != i.shape().dim(k)) return false;
    if (i.operand(k + 1)->shape().rank() != 0) return false;
  }
  return true;
}
bool MatchDynamicSliceConst(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsDynamicSlice(i)) return false;
  for (int64_t k = 1; k < i.operand_count(); ++k) {
    if (!UniformConstant(*i.operand(k)).has_value()) return false;
  }
  return true;
}
Instruction* ApplyDynamicSliceConst(Instruction& i) {
  const Shape& x = i.operand(0)->shape();
  std::vector<SliceDim> dims;
  for (int64_t k = 0; k < x.rank(); ++k) {
    int64_t size = i.attrs().dynamic_slice_sizes[k];
    double v = *UniformConstant(*i.operand(k + 1));
    double hi = static_cast<double>(x.dim(k) - size);
    int64_t start = static_cast<int64_t>(std::clamp(v, 0.0, hi));
    dims.push_back({start, start + size, 1});
  }
  return MakeSlice(i, i.operand(0), std::move(dims));
}

// dynamic-slice(x, ...) -> x when the slice size is x's whole shape (starts clamp to 0)
bool MatchDynamicSliceFull(const Instruction& i, std::vector<const Instruction*>*) {
  return IsDynamicSlice(i) && CanReplaceWith(i, *i.operand(0));
}

// dynamic-update-slice(x, u, ...) -> u when u has x's whole shape (starts clamp to 0)
bool MatchDusFull(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kDynamicUpdateSlice && i.operand_count() >= 2 &&
         i.operand(1)->shape().IsArray() && i.operand(1)->shape().dims() == i.shape().dims() &&
         CanReplaceWith(i, *i.operand(1));
}
Instruction* ApplyDusFull(Instruction& i) { return i.operand(1); }

// dynamic-update-slice(x, u, ...) -> x when u has no elements
bool MatchDusEmpty(const Instruction& i, std::vector<const Instruction*>*) {
  return i.opcode() == Opcode::kDynamicUpdateSlice && i.operand_count() >= 2 &&
         i.operand(1)->shape().IsArray() && i.operand(1)->shape().ElementCount() == 0 &&
         CanReplaceWith(i, *i.operand(0));
}

}  // namespace

void AddSliceRules(std::vector<SimpRule>* rules) {
  rules->push_back({"slice_noop", MatchSliceNoop, ApplyOperand});
  rules->push_back({"slice_slice", MatchSliceSlice, ApplySliceSlice});
  rules->push_back({"slice_concat", MatchSliceConcat, ApplySliceConcat});
  rules->push_back({"slice_pad", MatchSlicePad, ApplySlicePad});
  rules->push_back({"slice_broadcast_scalar", MatchSliceBroadcastScalar, ApplySliceBroadcastScalar});
  rules->push_back({"dynamic_slice_full", MatchDynamicSliceFull, ApplyOperand});
  rules->push_back({"dynamic_slice_const", MatchDynamicSliceConst, ApplyDynamicSliceConst});
  rules->push_back({"dus_full", MatchDusFull, ApplyDusFull});
  rules->push_back({"dus_empty_update", MatchDusEmpty, ApplyOperand});
}

}  // namespace hlox::simp
