// The block evaluator of fused programs: computes a node's values at a set of its linear
// indices. Elementwise nodes evaluate their operands on the same set (contiguous blocks stay
// contiguous and parameters are read in place); index-map nodes translate the set into their
// operand's indices, turning it back into a contiguous range whenever the result is one.
#include <algorithm>
#include <cstring>

#include "runtime/fused_node.h"
#include "runtime/fused_ops.h"

namespace hlox::rt {
namespace {

constexpr int64_t kChunkBytes = 1 << 20;

template <typename F>
void WithKind(VKind k, F&& f) {
  switch (k) {
    case VKind::kF32: f(float{}); break;
    case VKind::kF64: f(double{}); break;
    case VKind::kI64: f(int64_t{}); break;
  }
}

// Decomposes linear index `lin` of a row-major shape into coords.
inline void Decompose(int64_t lin, const std::vector<int64_t>& strides, int64_t* coords) {
  for (size_t d = 0; d < strides.size(); ++d) {
    coords[d] = lin / strides[d];
    lin -= coords[d] * strides[d];
  }
}

}  // namespace

void* Arena::Alloc(int64_t bytes) {
  bytes = (bytes + 63) & ~int64_t{63};
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
      memo_ptr_(nodes.size(), nullptr) {}

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

const void* BlockEval::EvalAffine(const FusedNode& nd, const IndexSet& set, int64_t offset) {
  const int64_t n = set.n;
  const size_t rank = nd.dims.size();
  int64_t* idx = static_cast<int64_t*>(arena_.Alloc(8 * n + 8));
  int64_t coords[16];
  if (set.idx == nullptr && n > 0) {
    Decompose(set.start, nd.strides, coords);
    int64_t lin = offset;
    for (size_t d = 0; d < rank; ++d) lin += coords[d] * nd.coef[d];
    for (int64_t j = 0; j < n; ++j) {
      idx[j] = lin;
      for (size_t d = rank; d-- > 0;) {
        ++coords[d];
        lin += nd.coef[d];
        if (coords[d] < nd.dims[d] || d == 0) break;
        lin -= nd.coef[d] * coords[d];
        coords[d] = 0;
      }
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      Decompose(set.idx[j], nd.strides, coords);
      int64_t lin = offset;
      for (size_t d = 0; d < rank; ++d) lin += coords[d] * nd.coef[d];
      idx[j] = lin;
    }
  }
  bool contiguous = true;
  for (int64_t j = 1; j < n && contiguous; ++j) contiguous = idx[j] == idx[j - 1] + 1;
  IndexSet next{n, n > 0 ? idx[0] : 0, contiguous ? nullptr : idx, NewSetId()};
  return Eval(nd.operands[0], next);
}

const void* BlockEval::EvalLayoutBitcast(const FusedNode& nd, const IndexSet& set) {
  int64_t* idx = static_cast<int64_t*>(arena_.Alloc(8 * set.n + 8));
  int64_t coords[16];
  for (int64_t j = 0; j < set.n; ++j) {
    Decompose(set.at(j), nd.strides, coords);
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
  for (int64_t j = 0; j < set.n; ++j) {
    Decompose(set.at(j), nd.strides, coords);
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

const void* BlockEval::EvalConcat(const FusedNode& nd, const IndexSet& set) {
  const size_t parts = nd.operands.size();
  std::vector<std::vector<int64_t>> pos(parts), op_idx(parts);
  int64_t coords[16];
  const int64_t cd = nd.concat_dim;
  for (int64_t j = 0; j < set.n; ++j) {
    Decompose(set.at(j), nd.strides, coords);
    size_t k = parts - 1;
    while (k > 0 && coords[cd] < nd.concat_starts[k]) --k;
    const FusedNode& opn = nodes_[nd.operands[k]];
    coords[cd] -= nd.concat_starts[k];
    int64_t lin = 0;
    for (size_t d = 0; d < nd.dims.size(); ++d) lin += coords[d] * opn.strides[d];
    pos[k].push_back(j);
    op_idx[k].push_back(lin);
  }
  void* out = arena_.Alloc(KindBytes(nd.kind) * set.n + 8);
  for (size_t k = 0; k < parts; ++k) {
    if (pos[k].empty()) continue;
    const void* vals = EvalSubset(nd.operands[k], op_idx[k]);
    WithKind(nd.kind, [&](auto tag) {
      using T = decltype(tag);
      T* o = static_cast<T*>(out);
      const T* v = static_cast<const T*>(vals);
      for (size_t i = 0; i < pos[k].size(); ++i) o[pos[k][i]] = v[i];
    });
  }
  return out;
}

}  // namespace hlox::rt
