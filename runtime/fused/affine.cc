// Affine index maps of the block evaluator (broadcast, transpose, slice, reverse,
// dynamic-slice): a node's set becomes its operand's. Maps are walked over their collapsed
// dims (FusedNode::map_dims: size-1 dims dropped, runs-on dims merged), so e.g. a broadcast
// that only adds unit dims is a contiguous range. A contiguous set (or an index set that
// carries contiguous-range hints) is walked in runs along the minor dim, each an arithmetic
// sequence of operand indices; runs that join up stay one contiguous range, parameters and
// constants (bf16/f16 parameters widened) are copied run by run with no index list, and the runs
// are handed to the operand as hints. A set of strided runs (a tiled walk, fused/tile.cc) is
// walked run by run along the map dim its step moves, prefetching the rows of the next tile
// when its contiguous runs step down rows. Small computed operands of
// broadcast-like maps are computed once per evaluator and gathered.
// GCC 12 reports false maybe-uninitialized warnings inside the AVX-512 conversion intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cstring>

#include "common/fused_limits.h"
#include "runtime/fused/node.h"
#include "runtime/fused/stream.h"
#include "runtime/fused/walk.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

using fused_walk::CoordWalker;
using fused_walk::Decompose;
using fused_walk::WithKind;

constexpr int64_t kMaxHoisted = kMaxHoistedElements;  // common/fused_limits.h

}  // namespace

const void* BlockEval::EvalAffine(const FusedNode& nd, const IndexSet& set, int64_t offset) {
  const int64_t n = set.n;
  if (n > 0 && !nd.map_dims.empty()) {
    if (set.idx == nullptr) return EvalAffineRuns(nd, &set.start, &set.n, 1, n, offset);
    if (set.runs > 0 && set.run_step == 1) {
      return EvalAffineRuns(nd, set.run_start, set.run_len, set.runs, n, offset);
    }
    if (set.runs > 0 && n >= 4 * set.runs) {  // strided runs long enough to walk run by run
      if (const void* v = EvalAffineStrided(nd, set, offset)) return v;
    }
  }
  int64_t* idx = static_cast<int64_t*>(arena_.Alloc(8 * n + 8));
  int64_t coords[16];
  const bool mapped = !nd.map_dims.empty();
  CoordWalker walk(mapped ? nd.map_dims : nd.dims, mapped ? nd.map_strides : nd.strides, coords,
                   mapped ? nd.map_coef.data() : nd.coef.data());
  for (int64_t j = 0; j < n; ++j) {
    walk.MoveTo(set.at(j));
    idx[j] = offset + walk.acc();
  }
  bool contiguous = true;
  for (int64_t j = 1; j < n && contiguous; ++j) contiguous = idx[j] == idx[j - 1] + 1;
  if (!contiguous) {
    if (const void* full = HoistedOperand(nd)) {
      void* out = arena_.Alloc(KindBytes(nd.kind) * n + 8);
      WithKind(nd.kind, [&](auto tag) {
        using T = decltype(tag);
        const T* f = static_cast<const T*>(full);
        T* o = static_cast<T*>(out);
        for (int64_t j = 0; j < n; ++j) o[j] = f[idx[j]];
      });
      return out;
    }
  }
  IndexSet next{n, n > 0 ? idx[0] : 0, contiguous ? nullptr : idx, NewSetId()};
  return Eval(nd.operands[0], next);
}

const void* BlockEval::EvalAffineRuns(const FusedNode& nd, const int64_t* rstart,
                                      const int64_t* rlen, int64_t count, int64_t n,
                                      int64_t offset) {
  // Each contiguous range walks the minor dim in runs, each an arithmetic sequence of operand
  // indices (step = the minor coefficient), with one carry per run.
  const std::vector<int64_t>& dims = nd.map_dims;
  const std::vector<int64_t>& coef = nd.map_coef;
  const size_t last = dims.size() - 1;
  const int64_t c = coef[last], dim = dims[last];
  int64_t* run_lin = static_cast<int64_t*>(arena_.Alloc(16 * n + 8));
  int64_t* run_len = run_lin + n;
  int64_t runs = 0;
  bool contiguous = true;
  int64_t coords[16];
  for (int64_t q = 0; q < count; ++q) {
    const int64_t rn = rlen[q];
    if (rn <= 0) continue;
    Decompose(rstart[q], nd.map_strides, coords);
    int64_t lin = offset;
    for (size_t d = 0; d <= last; ++d) lin += coords[d] * coef[d];
    for (int64_t j = 0;;) {
      const int64_t len = std::min(rn - j, dim - coords[last]);
      if (len > 1 && c != 1) contiguous = false;
      if (runs > 0 && lin != run_lin[runs - 1] + (run_len[runs - 1] - 1) * c + 1) contiguous = false;
      run_lin[runs] = lin;
      run_len[runs++] = len;
      j += len;
      if (j >= rn) break;
      lin -= coords[last] * c;
      coords[last] = 0;
      for (size_t d = last; d-- > 0;) {
        ++coords[d];
        lin += coef[d];
        if (coords[d] < dims[d] || d == 0) break;
        lin -= coef[d] * coords[d];
        coords[d] = 0;
      }
    }
  }
  return EvalOperandRuns(nd, run_lin, run_len, runs, c, n, contiguous);
}

const void* BlockEval::EvalAffineStrided(const FusedNode& nd, const IndexSet& set,
                                         int64_t offset) {
  // A run of step `sigma` moves one map dim d by q = sigma / map_strides[d] per element (no
  // carries while the coord stays in range), so the operand sees runs of step q * coef[d].
  const std::vector<int64_t>& dims = nd.map_dims;
  const int64_t sigma = set.run_step;
  int64_t d = -1, q = 0;
  if (sigma > 0) {
    for (size_t k = 0; k < dims.size(); ++k) {
      const int64_t st = nd.map_strides[k];
      if (sigma % st == 0 && sigma / st < dims[k]) {
        d = static_cast<int64_t>(k);
        q = sigma / st;
        break;
      }
    }
    if (d < 0) return nullptr;
  } else if (sigma < 0) {
    return nullptr;
  }
  const int64_t step = sigma == 0 ? 0 : q * nd.map_coef[d];
  const int64_t n = set.n;
  int64_t* run_lin = static_cast<int64_t*>(arena_.Alloc(16 * n + 8));
  int64_t* run_len = run_lin + n;
  int64_t runs = 0;
  bool contiguous = true;
  int64_t coords[16];
  for (int64_t r = 0; r < set.runs; ++r) {
    int64_t pos = set.run_start[r], rem = set.run_len[r];
    while (rem > 0) {
      Decompose(pos, nd.map_strides, coords);
      int64_t lin = offset;
      for (size_t k = 0; k < dims.size(); ++k) lin += coords[k] * nd.map_coef[k];
      const int64_t len = sigma == 0 ? rem : std::min(rem, (dims[d] - 1 - coords[d]) / q + 1);
      if (len > 1 && step != 1) contiguous = false;
      if (runs > 0 && lin != run_lin[runs - 1] + (run_len[runs - 1] - 1) * step + 1) contiguous = false;
      run_lin[runs] = lin;
      run_len[runs++] = len;
      pos += len * sigma;
      rem -= len;
    }
  }
  return EvalOperandRuns(nd, run_lin, run_len, runs, step, n, contiguous);
}

namespace {

// Prefetches (into L2) the runs that continue `runs` contiguous runs whose starts step evenly
// by more than a run: the rows of the next tile of a tiled walk (fused/tile.cc), which would
// otherwise be read from memory one short row at a time.
template <typename T>
void PrefetchNextRuns(const T* f, const int64_t* run_lin, const int64_t* run_len, int64_t runs) {
  if (runs < 8) return;
  const int64_t d = run_lin[1] - run_lin[0];
  if (d <= run_len[0]) return;
  for (int64_t r = 2; r < runs; ++r) {
    if (run_lin[r] - run_lin[r - 1] != d) return;
  }
  for (int64_t r = 0; r < runs; ++r) {
    PrefetchLinesL2(f + run_lin[r] + runs * d, run_len[r] * static_cast<int64_t>(sizeof(T)));
  }
}

}  // namespace

const void* BlockEval::EvalOperandRuns(const FusedNode& nd, int64_t* run_lin, int64_t* run_len,
                                       int64_t runs, int64_t c, int64_t n, bool contiguous) {
  const int op = nd.operands[0];
  if (contiguous) return Eval(op, IndexSet{n, run_lin[0], nullptr, NewSetId()});
  // Read straight from memory the operand already lives in: a parameter stored in its kind's
  // own type, a constant, or a small computed operand hoisted once per evaluator.
  const FusedNode& opn = nodes_[op];
  const void* src = nullptr;
  if (opn.op == NodeOp::kParam) {
    const PrimitiveType t = params_[opn.param]->shape().element_type();
    if ((t == PrimitiveType::kF32 && opn.kind == VKind::kF32) ||
        (t == PrimitiveType::kF64 && opn.kind == VKind::kF64) ||
        (t == PrimitiveType::kS64 && opn.kind == VKind::kI64)) {
      src = params_[opn.param]->data();
    }
  } else if (opn.op == NodeOp::kConstant) {
    src = opn.kind == VKind::kF32 ? static_cast<const void*>(opn.cf.data())
          : opn.kind == VKind::kF64 ? static_cast<const void*>(opn.cd.data())
                                    : static_cast<const void*>(opn.ci.data());
  } else {
    src = HoistedOperand(nd);
  }
  const PrimitiveType pt = opn.op == NodeOp::kParam ? params_[opn.param]->shape().element_type() : PrimitiveType::kF32;
  if (src == nullptr && opn.op == NodeOp::kParam && opn.kind == VKind::kF32 &&
      (pt == PrimitiveType::kBF16 || pt == PrimitiveType::kF16)) {
    // A bf16 or f16 parameter: converted run by run (no index list).
    const bool f16 = pt == PrimitiveType::kF16;
    auto wide = [f16](uint16_t v) { return f16 ? HalfToFloat(v) : fused::Bf16BitsToFloat(v); };
    const uint16_t* f = params_[opn.param]->as<uint16_t>();
    float* out = static_cast<float*>(arena_.Alloc(4 * n + 8));
    float* o = out;
    for (int64_t r = 0; r < runs; ++r) {
      const uint16_t* from = f + run_lin[r];
      const int64_t len = run_len[r];
      if (c == 1) {
        fused::HalfToF32(f16 ? fused::kHalfF16 : fused::kHalfBf16, from, o, len);
      } else if (c == 0) {
        std::fill_n(o, len, wide(*from));
      } else {
        for (int64_t k = 0; k < len; ++k) o[k] = wide(from[k * c]);
      }
      o += len;
    }
    return out;
  }
  if (src != nullptr) {
    void* out = arena_.Alloc(KindBytes(opn.kind) * n + 8);
    WithKind(opn.kind, [&](auto tag) {
      using T = decltype(tag);
      const T* f = static_cast<const T*>(src);
      T* o = static_cast<T*>(out);
      if (c == 1) PrefetchNextRuns(f, run_lin, run_len, runs);
      for (int64_t r = 0; r < runs; ++r) {
        const T* from = f + run_lin[r];
        const int64_t len = run_len[r];
        if (c == 1) {
          std::memcpy(o, from, static_cast<size_t>(len) * sizeof(T));
        } else if (c == 0) {
          std::fill_n(o, len, *from);
        } else {
          for (int64_t k = 0; k < len; ++k) o[k] = from[k * c];
        }
        o += len;
      }
    });
    return out;
  }
  int64_t* idx = static_cast<int64_t*>(arena_.Alloc(8 * n + 8));
  int64_t* w = idx;
  for (int64_t r = 0; r < runs; ++r) {
    const int64_t base = run_lin[r], len = run_len[r];
    for (int64_t k = 0; k < len; ++k) w[k] = base + k * c;
    w += len;
  }
  IndexSet next{n, idx[0], idx, NewSetId()};
  // The runs are arithmetic runs of the operand: pass them on as a hint.
  next.run_start = run_lin;
  next.run_len = run_len;
  next.runs = runs;
  next.run_step = c;
  return Eval(op, next);
}

const void* BlockEval::HoistedOperand(const FusedNode& nd) {
  // A small computed operand read many times per element (e.g. per-channel batch-norm
  // scales broadcast over NCHW): computed once over its whole domain, then gathered.
  const FusedNode& opn = nodes_[nd.operands[0]];
  if (opn.op == NodeOp::kParam || opn.op == NodeOp::kConstant) return nullptr;
  int64_t op_count = 1, count = 1;
  for (int64_t d : nd.op_dims) op_count *= d;
  for (int64_t d : nd.dims) count *= d;
  if (op_count > kMaxHoisted || op_count * 16 > count) return nullptr;
  return Hoisted(nd.operands[0], op_count);
}

const void* BlockEval::Hoisted(int node, int64_t count) {
  std::vector<uint8_t>& h = hoisted_[node];
  if (h.empty()) {
    const void* v = Eval(node, IndexSet{count, 0, nullptr, NewSetId()});
    const int64_t bytes = KindBytes(nodes_[node].kind) * count;
    h.resize(static_cast<size_t>(bytes) + 8);
    std::memcpy(h.data(), v, static_cast<size_t>(bytes));
  }
  return h.data();
}

}  // namespace hlox::rt
