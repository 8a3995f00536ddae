// gather-simplifier: gathers that need none of the generality of gather become the simpler ops
// they are, as XLA's algebraic simplifier does for trivial gathers and its backends do for
// single-index gathers. (XLA's pass of this name does something else: it canonicalizes every
// gather to 2-D indices with sorted dimension numbers for the gather expander; hlox's gather
// kernel takes any form, so that rewrite would only add transposes.)
//   full_slice:    every indexed dimension is sliced whole, so clamping makes every start 0 and
//                  the indices do not matter: gather -> broadcast(reshape(slice(operand))) over
//                  the batch dimensions (the slice only where the other dimensions are cut).
//   dynamic_slice: one index vector (every batch dimension of the indices has size 1):
//                  gather -> reshape(dynamic-slice(operand, one scalar start per dimension))
//                  with the starts sliced out of the index vector and 0 for dimensions the
//                  gather does not index. Both clamp starts into range the same way.
// Left alone: gathers with batching dimensions, non-row-major shapes, several index vectors
// over a partly-sliced dimension. The default applies both (one kernel call instead of the
// generic gather loop; the dynamic-slice copies one contiguous window).
#include <algorithm>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool RowMajor(const Shape& s) { return simp::SameLayoutShape(s, simp::ShapeLike(s, s.element_type(), s.dims())); }

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The gathers both rules can read: plain (no batching dims), row-major, integer indices.
bool PlainGather(const Instruction& i) {
  if (i.opcode() != Opcode::kGather || i.operand_count() != 2 || !i.attrs().gather.has_value() ||
      !i.shape().IsArray()) {
    return false;
  }
  const GatherDimensionNumbers& g = *i.attrs().gather;
  const Shape& op = i.operand(0)->shape();
  const Shape& idx = i.operand(1)->shape();
  return op.IsArray() && idx.IsArray() && IsInteger(idx.element_type()) && g.operand_batching_dims.empty() &&
         g.start_indices_batching_dims.empty() && RowMajor(op) && RowMajor(idx) && RowMajor(i.shape()) &&
         static_cast<int64_t>(i.attrs().gather_slice_sizes.size()) == op.rank() &&
         g.index_vector_dim >= 0 && g.index_vector_dim <= idx.rank();
}

bool FullSlice(const Instruction& i) {
  if (!PlainGather(i)) return false;
  const GatherDimensionNumbers& g = *i.attrs().gather;
  const Shape& op = i.operand(0)->shape();
  for (int64_t d : g.start_index_map) {
    if (d < 0 || d >= op.rank() || i.attrs().gather_slice_sizes[d] != op.dim(d)) return false;
  }
  return true;
}

// Number of index vectors in the gather's start indices.
int64_t IndexVectorCount(const Instruction& i) {
  const Shape& idx = i.operand(1)->shape();
  int64_t n = 1;
  for (int64_t d = 0; d < idx.rank(); ++d) {
    if (d != i.attrs().gather->index_vector_dim) n *= idx.dim(d);
  }
  return n;
}

bool SingleIndex(const Instruction& i) {
  if (!PlainGather(i) || IndexVectorCount(i) != 1) return false;
  const GatherDimensionNumbers& g = *i.attrs().gather;
  const Shape& op = i.operand(0)->shape();
  const Shape& idx = i.operand(1)->shape();
  const int64_t components = g.index_vector_dim == idx.rank() ? 1 : idx.dim(g.index_vector_dim);
  if (components != static_cast<int64_t>(g.start_index_map.size())) return false;
  for (int64_t d : g.start_index_map) {
    if (d < 0 || d >= op.rank()) return false;
  }
  int64_t slice = 1;
  for (int64_t s : i.attrs().gather_slice_sizes) slice *= s;
  return slice == i.shape().ElementCount();
}

Instruction* ToFullSlice(Instruction& i) {
  const GatherDimensionNumbers& g = *i.attrs().gather;
  Instruction* x = i.operand(0);
  const Shape& op = x->shape();
  const std::vector<int64_t>& sizes = i.attrs().gather_slice_sizes;
  if (sizes != op.dims()) {
    Instruction* s = simp::AddNew(i, Opcode::kSlice, simp::ShapeLike(op, op.element_type(), sizes), {x});
    for (int64_t d = 0; d < op.rank(); ++d) s->attrs().slice.push_back(SliceDim{0, sizes[d], 1});
    x = s;
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < op.rank(); ++d) {
    if (!Contains(g.collapsed_slice_dims, d)) kept.push_back(sizes[d]);
  }
  if (kept != x->shape().dims()) x = simp::AddNew(i, Opcode::kReshape, simp::ShapeLike(op, op.element_type(), kept), {x});
  std::vector<int64_t> offset = g.offset_dims;
  std::sort(offset.begin(), offset.end());
  if (x->shape().dims() == i.shape().dims()) return x;
  Instruction* b = simp::AddNew(i, Opcode::kBroadcast, i.shape(), {x});
  b->attrs().dimensions = offset;
  return b;
}

Instruction* ToDynamicSlice(Instruction& i) {
  const GatherDimensionNumbers& g = *i.attrs().gather;
  Instruction* x = i.operand(0);
  Instruction* idx = i.operand(1);
  const Shape& op = x->shape();
  const PrimitiveType t = idx->shape().element_type();
  const int64_t n = static_cast<int64_t>(g.start_index_map.size());
  Instruction* vec = idx;
  if (idx->shape().dims() != std::vector<int64_t>{n}) {
    vec = simp::AddNew(i, Opcode::kReshape, simp::ShapeLike(idx->shape(), t, {n}), {idx});
  }
  const Shape scalar = simp::ShapeLike(idx->shape(), t, {});
  std::vector<Instruction*> ops = {x};
  for (int64_t d = 0; d < op.rank(); ++d) {
    auto at = std::find(g.start_index_map.begin(), g.start_index_map.end(), d);
    if (at == g.start_index_map.end()) {
      ops.push_back(simp::AddFilled(i, scalar, 0));
      continue;
    }
    const int64_t j = at - g.start_index_map.begin();
    Instruction* s = simp::AddNew(i, Opcode::kSlice, simp::ShapeLike(idx->shape(), t, {1}), {vec});
    s->attrs().slice = {SliceDim{j, j + 1, 1}};
    ops.push_back(simp::AddNew(i, Opcode::kReshape, scalar, {s}));
  }
  const std::vector<int64_t>& sizes = i.attrs().gather_slice_sizes;
  Instruction* ds = simp::AddNew(i, Opcode::kDynamicSlice, simp::ShapeLike(op, op.element_type(), sizes), ops);
  ds->attrs().dynamic_slice_sizes = sizes;
  if (ds->shape().dims() == i.shape().dims()) return ds;
  return simp::AddNew(i, Opcode::kReshape, i.shape(), {ds});
}

}  // namespace

std::unique_ptr<Pass> CreateGatherSimplifier() {
  xla::Rule full{"full_slice", [](const Instruction& i) { return FullSlice(i); },
                 [](Instruction& i) { return ToFullSlice(i); }, 1};
  xla::Rule single{"dynamic_slice", [](const Instruction& i) { return SingleIndex(i); },
                   [](Instruction& i) { return ToDynamicSlice(i); }, 1};
  return xla::MakeRulePass("gather-simplifier", {full, single});
}

}  // namespace hlox
