// The block evaluator of fused programs: computes a node's values at a set of its linear
// indices. Elementwise nodes evaluate their operands on the same set (contiguous blocks stay
// contiguous and parameters are read in place); index-map nodes translate the set into their
// operand's indices (affine maps in fused/affine.cc; layout bitcasts, pads and concatenations
// here). Index sets are walked by stepping coords (CoordWalker) rather than dividing per
// element; concatenations of contiguous sets run per contiguous operand range.
#include <algorithm>
#include <climits>
#include <cstring>

#include "runtime/fused/node.h"
#include "runtime/fused/walk.h"
#include "runtime/math/block_ops.h"

namespace hlox::rt {
namespace {

using fused_walk::CoordWalker;
using fused_walk::Decompose;
using fused_walk::WithKind;

constexpr int64_t kChunkBytes = 1 << 20;
constexpr int64_t kAliasSkew = 1088;  // 17 cache lines

}  // namespace

void* Arena::Alloc(int64_t bytes) {
  bytes = (bytes + 63) & ~int64_t{63};
  // Block arrays are often whole multiples of 4 KiB; laid end to end, an op's input and
  // output would then share page offsets and its loads would falsely wait on its stores
  // (4K aliasing). Padding each array to 1088 (mod 4096) bytes spreads their offsets.
  if (bytes >= 2048) bytes += (kAliasSkew - bytes % 4096 + 4096) % 4096;
  while (chunk_ < chunks_.size() && used_ + bytes > sizes_[chunk_]) {
    ++chunk_;
    used_ = 0;
  }
  if (chunk_ == chunks_.size()) {
    int64_t size = std::max(kChunkBytes, bytes);
    chunks_.push_back(std::unique_ptr<uint8_t[]>(new (std::align_val_t(64)) uint8_t[size]));
    sizes_.push_back(size);
    used_ = 0;
  }
  void* p = chunks_[chunk_].get() + used_;
  used_ += bytes;
  return p;
}

void Arena::Reset() {
  chunk_ = 0;
  used_ = 0;
}

BlockEval::BlockEval(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
                     Arena& arena)
    : nodes_(nodes), params_(params), arena_(arena), memo_id_(nodes.size(), 0),
      memo_ptr_(nodes.size(), nullptr), hoisted_(nodes.size()) {}

void BlockEval::NewBlock() {
  arena_.Reset();
  std::fill(memo_id_.begin(), memo_id_.end(), 0);
}

const void* BlockEval::Eval(int node, const IndexSet& set) {
  if (set.id != 0 && memo_id_[node] == set.id) return memo_ptr_[node];
  const void* r = Compute(node, set);
  memo_id_[node] = set.id;
  memo_ptr_[node] = r;
  return r;
}

int64_t BlockEval::ScalarInt(int node) {
  IndexSet one{1, 0, nullptr, NewSetId()};
  const void* p = Eval(node, one);
  switch (nodes_[node].kind) {
    case VKind::kF32: return static_cast<int64_t>(*static_cast<const float*>(p));
    case VKind::kF64: return static_cast<int64_t>(*static_cast<const double*>(p));
    case VKind::kI64: return *static_cast<const int64_t*>(p);
  }
  return 0;
}

const void* BlockEval::EvalSubset(int node, const std::vector<int64_t>& idx) {
  int64_t* copy = static_cast<int64_t*>(arena_.Alloc(8 * static_cast<int64_t>(idx.size()) + 8));
  std::memcpy(copy, idx.data(), idx.size() * 8);
  return Eval(node, IndexSet{static_cast<int64_t>(idx.size()), 0, copy, NewSetId()});
}


const void* BlockEval::EvalLayoutBitcast(const FusedNode& nd, const IndexSet& set) {
  int64_t* idx = static_cast<int64_t*>(arena_.Alloc(8 * set.n + 8));
  int64_t coords[16];
  CoordWalker walk(nd.dims, nd.strides, coords);
  for (int64_t j = 0; j < set.n; ++j) {
    walk.MoveTo(set.at(j));
    int64_t p = 0;
    for (size_t d = 0; d < nd.dims.size(); ++d) p += coords[d] * nd.out_phys_strides[d];
    int64_t lin = 0;
    for (int64_t d : nd.op_minor_to_major) {
      int64_t c = p % nd.op_dims[d];
      p /= nd.op_dims[d];
      lin += c * nd.op_strides[d];
    }
    idx[j] = lin;
  }
  return Eval(nd.operands[0], IndexSet{set.n, 0, idx, NewSetId()});
}

const void* BlockEval::EvalPad(const FusedNode& nd, const IndexSet& set) {
  std::vector<int64_t> pos, op_idx;
  int64_t coords[16];
  CoordWalker walk(nd.dims, nd.strides, coords);
  for (int64_t j = 0; j < set.n; ++j) {
    walk.MoveTo(set.at(j));
    int64_t lin = 0;
    bool valid = true;
    for (size_t d = 0; d < nd.dims.size() && valid; ++d) {
      const PaddingDim& p = nd.padding[d];
      int64_t t = coords[d] - p.low;
      int64_t step = p.interior + 1;
      valid = t >= 0 && t % step == 0 && t / step < nd.op_dims[d];
      lin += (t / step) * nd.op_strides[d];
    }
    if (valid) {
      pos.push_back(j);
      op_idx.push_back(lin);
    }
  }
  const void* vals = pos.empty() ? nullptr : EvalSubset(nd.operands[0], op_idx);
  IndexSet one{1, 0, nullptr, NewSetId()};
  const void* pv = Eval(nd.operands[1], one);
  void* out = arena_.Alloc(KindBytes(nd.kind) * set.n + 8);
  WithKind(nd.kind, [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(out);
    std::fill(o, o + set.n, *static_cast<const T*>(pv));
    const T* v = static_cast<const T*>(vals);
    for (size_t k = 0; k < pos.size(); ++k) o[pos[k]] = v[k];
  });
  return out;
}

const void* BlockEval::EvalConcatRuns(const FusedNode& nd, const IndexSet& set,
                                      const std::vector<int64_t>& size) {
  // A contiguous set crosses the operands in long runs (each a contiguous range of one
  // operand): evaluate each run as a contiguous set and copy it into place.
  const int64_t cd = nd.concat_dim;
  const int64_t inner = nd.strides[cd];
  const int64_t row = nd.dims[cd] * inner;
  const size_t parts = nd.operands.size();
  const int64_t bytes = KindBytes(nd.kind);
  uint8_t* out = static_cast<uint8_t*>(arena_.Alloc(bytes * set.n + 8));
  int64_t j = 0;
  while (j < set.n) {
    const int64_t lin = set.start + j;
    const int64_t o = lin / row, r = lin % row;
    const int64_t c = r / inner;
    size_t k = parts - 1;
    while (k > 0 && c < nd.concat_starts[k]) --k;
    const int64_t seg_end = (nd.concat_starts[k] + size[k]) * inner;
    const int64_t len = std::min(set.n - j, seg_end - r);
    const int64_t op_start = (o * size[k] + c - nd.concat_starts[k]) * inner + r % inner;
    const void* vals = Eval(nd.operands[k], IndexSet{len, op_start, nullptr, NewSetId()});
    std::memcpy(out + j * bytes, vals, static_cast<size_t>(len * bytes));
    j += len;
  }
  return out;
}

const void* BlockEval::EvalConcat(const FusedNode& nd, const IndexSet& set) {
  // Views the result as [outer, concat dim, inner]: operand k's index of (o, c, i) is
  // (o * size_k + c - start_k) * inner + i, so no per-dim arithmetic is needed per element.
  const size_t parts = nd.operands.size();
  const int64_t cd = nd.concat_dim;
  const int64_t inner = nd.strides[cd];
  const int64_t cdim = nd.dims[cd];
  int64_t outer = 1;
  for (int64_t d = 0; d < cd; ++d) outer *= nd.dims[d];
  const std::vector<int64_t> dims3 = {outer, cdim, inner};
  const std::vector<int64_t> strides3 = {cdim * inner, inner, 1};
  std::vector<int64_t> size(parts);
  int64_t min_run = INT64_MAX;
  for (size_t k = 0; k < parts; ++k) {
    size[k] = nodes_[nd.operands[k]].dims[cd];
    min_run = std::min(min_run, size[k] * inner);
  }
  if (set.idx == nullptr && min_run >= 64) return EvalConcatRuns(nd, set, size);
  std::vector<int64_t*> pos(parts), op_idx(parts);
  std::vector<int64_t> cnt(parts, 0);
  for (size_t k = 0; k < parts; ++k) {
    pos[k] = static_cast<int64_t*>(arena_.Alloc(8 * set.n + 8));
    op_idx[k] = static_cast<int64_t*>(arena_.Alloc(8 * set.n + 8));
  }
  int64_t coords[3];
  CoordWalker walk(dims3, strides3, coords);
  size_t k = 0;
  for (int64_t j = 0; j < set.n; ++j) {
    walk.MoveTo(set.at(j));
    const int64_t c = coords[1];
    while (k + 1 < parts && c >= nd.concat_starts[k + 1]) ++k;
    while (k > 0 && c < nd.concat_starts[k]) --k;
    pos[k][cnt[k]] = j;
    op_idx[k][cnt[k]++] = (coords[0] * size[k] + c - nd.concat_starts[k]) * inner + coords[2];
  }
  void* out = arena_.Alloc(KindBytes(nd.kind) * set.n + 8);
  for (size_t q = 0; q < parts; ++q) {
    const int64_t m = cnt[q];
    if (m == 0) continue;
    bool contiguous = true;
    for (int64_t t = 1; t < m && contiguous; ++t) contiguous = op_idx[q][t] == op_idx[q][t - 1] + 1;
    const void* vals =
        Eval(nd.operands[q], IndexSet{m, op_idx[q][0], contiguous ? nullptr : op_idx[q], NewSetId()});
    WithKind(nd.kind, [&](auto tag) {
      using T = decltype(tag);
      T* o = static_cast<T*>(out);
      const T* v = static_cast<const T*>(vals);
      const int64_t* pq = pos[q];
      for (int64_t t = 0; t < m; ++t) o[pq[t]] = v[t];
    });
  }
  return out;
}

}  // namespace hlox::rt
