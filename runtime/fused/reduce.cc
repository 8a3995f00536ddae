// Reduce outputs of fused loops (kInput fusions). Reduced dims that are the minor-most ones
// give contiguous rows: several short rows per block, or a long row in block-sized pieces.
// Reduced dims that are the major-most ones give contiguous rows of outputs, combined row by row.
// Any other reduction walks the reduced positions for a whole block of outputs at once, so
// each evaluation of the fused operand covers many elements. Sums use fixed lane order, so
// results are the same for every thread count.
#include <algorithm>
#include <vector>

#include "runtime/fused/program_impl.h"
#include "runtime/kernels/scalar_access.h"
#include "runtime/math/block_ops.h"

namespace hlox::rt {
namespace {

template <typename T>
inline T Combine(ScalarOp op, T a, T b) {
  switch (op) {
    case ScalarOp::kAdd: return a + b;
    case ScalarOp::kMul: return a * b;
    case ScalarOp::kMax: return fused::MaxNan(a, b);
    case ScalarOp::kMin: return fused::MinNan(a, b);
    case ScalarOp::kAnd: if constexpr (std::is_integral_v<T>) return a & b; else return a;
    case ScalarOp::kOr: if constexpr (std::is_integral_v<T>) return a | b; else return a;
    default: return a;
  }
}

// Reduces x[0..n) into acc; sums, max and min use 16 independent lanes (vectorizable, fixed
// order).
template <typename T>
T ReduceRun(ScalarOp op, T acc, const T* x, int64_t n) {
  if (op == ScalarOp::kAdd && n >= 64) {
    T lanes[16] = {};
    int64_t j = 0;
    for (; j + 16 <= n; j += 16) {
      for (int l = 0; l < 16; ++l) lanes[l] += x[j + l];
    }
    T s = 0;
    for (int l = 0; l < 16; ++l) s += lanes[l];
    for (; j < n; ++j) s += x[j];
    return acc + s;
  }
  if ((op == ScalarOp::kMax || op == ScalarOp::kMin) && n >= 64) {
    // 16 independent lanes (vectorizable); NaN still propagates, values are order-free.
    T lanes[16];
    for (int l = 0; l < 16; ++l) lanes[l] = x[l];
    int64_t j = 16;
    if (op == ScalarOp::kMax) {
      for (; j + 16 <= n; j += 16) {
        for (int l = 0; l < 16; ++l) lanes[l] = fused::MaxNan(lanes[l], x[j + l]);
      }
    } else {
      for (; j + 16 <= n; j += 16) {
        for (int l = 0; l < 16; ++l) lanes[l] = fused::MinNan(lanes[l], x[j + l]);
      }
    }
    for (int l = 0; l < 16; ++l) acc = Combine(op, acc, lanes[l]);
    for (; j < n; ++j) acc = Combine(op, acc, x[j]);
    return acc;
  }
  for (int64_t j = 0; j < n; ++j) acc = Combine(op, acc, x[j]);
  return acc;
}

// acc[j] = acc[j] op x[j] for j < n (the switch hoisted out of the loop, which vectorizes).
template <typename T>
void CombineRow(ScalarOp op, T* acc, const T* x, int64_t n) {
  switch (op) {
    case ScalarOp::kAdd: for (int64_t j = 0; j < n; ++j) acc[j] += x[j]; return;
    case ScalarOp::kMul: for (int64_t j = 0; j < n; ++j) acc[j] *= x[j]; return;
    case ScalarOp::kMax: for (int64_t j = 0; j < n; ++j) acc[j] = fused::MaxNan(acc[j], x[j]); return;
    case ScalarOp::kMin: for (int64_t j = 0; j < n; ++j) acc[j] = fused::MinNan(acc[j], x[j]); return;
    default: for (int64_t j = 0; j < n; ++j) acc[j] = Combine(op, acc[j], x[j]); return;
  }
}

// Elements in the run of minor-most dims that are all reduced (1 when the minor dim is kept).
int64_t TrailingReducedRun(const std::vector<bool>& reduced, const std::vector<int64_t>& dims) {
  int64_t run = 1;
  for (size_t d = dims.size(); d-- > 0 && reduced[d];) run *= dims[d];
  return run;
}

template <typename T>
void ReduceTyped(const std::vector<FusedNode>& nodes, const FusedNode& nd,
                 const std::vector<const Buffer*>& params, ThreadPool* pool,
                 const FusedRunOptions& opt, Buffer& out) {
  const ScalarOp op = static_cast<ScalarOp>(nd.reduce_op);
  const int in = nd.operands[0];
  const int64_t block = std::max<int64_t>(16, opt.block);
  const int64_t rank = static_cast<int64_t>(nd.op_dims.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t d : nd.reduce_dims) reduced[d] = true;
  std::vector<int64_t> kept, red;
  for (int64_t d = 0; d < rank; ++d) (reduced[d] ? red : kept).push_back(d);
  int64_t rs = 1, no = 1;
  for (int64_t d : red) rs *= nd.op_dims[d];
  for (int64_t d : kept) no *= nd.op_dims[d];
  bool suffix = true;
  for (size_t i = 0; i < red.size(); ++i) suffix &= red[i] == rank - static_cast<int64_t>(red.size() - i);
  T init;
  {
    BlockEval ev(nodes, params, t_arena);
    ev.NewBlock();
    init = *static_cast<const T*>(ev.Eval(nd.operands[1], IndexSet{1, 0, nullptr, ev.NewSetId()}));
  }
  std::vector<T> res(no, init);
  if (rs > 0 && no > 0 && suffix && rs >= block) {
    ParallelBlocks(pool, opt, no, [&](int64_t o0, int64_t o1) {
      BlockEval ev(nodes, params, t_arena);
      for (int64_t o = o0; o < o1; ++o) {
        T acc = init;
        for (int64_t c = 0; c < rs; c += block) {
          ev.NewBlock();
          int64_t len = std::min(block, rs - c);
          const T* p = static_cast<const T*>(ev.Eval(in, IndexSet{len, o * rs + c, nullptr, ev.NewSetId()}));
          acc = ReduceRun(op, acc, p, len);
        }
        res[o] = acc;
      }
    });
  } else if (rs > 0 && no > 0 && suffix) {
    const int64_t m = std::max<int64_t>(1, block / rs);
    ParallelBlocks(pool, opt, (no + m - 1) / m, [&](int64_t b0, int64_t b1) {
      BlockEval ev(nodes, params, t_arena);
      for (int64_t b = b0; b < b1; ++b) {
        ev.NewBlock();
        int64_t o0 = b * m, mm = std::min(m, no - o0);
        const T* p = static_cast<const T*>(ev.Eval(in, IndexSet{mm * rs, o0 * rs, nullptr, ev.NewSetId()}));
        for (int64_t j = 0; j < mm; ++j) res[o0 + j] = ReduceRun(op, init, p + j * rs, rs);
      }
    });
  } else if (rs > 0 && no > 0 && TrailingReducedRun(reduced, nd.op_dims) >= 64) {
    // The minor-most dims are reduced (e.g. batch-norm statistics over N,H,W of NCHW): every
    // (output, outer reduced position) pair is one contiguous run, evaluated in block-sized
    // pieces with no index arrays, in parallel over outputs, in a fixed order.
    const int64_t tail = TrailingReducedRun(reduced, nd.op_dims);
    std::vector<int64_t> outer_red;
    for (int64_t d : red) {
      if (nd.op_strides[d] >= tail) outer_red.push_back(d);
    }
    const int64_t n_outer = rs / tail;
    ParallelBlocks(pool, opt, no, [&](int64_t o0, int64_t o1) {
      BlockEval ev(nodes, params, t_arena);
      for (int64_t o = o0; o < o1; ++o) {
        int64_t lin = o, base = 0;
        for (size_t k = kept.size(); k-- > 0;) {
          base += (lin % nd.op_dims[kept[k]]) * nd.op_strides[kept[k]];
          lin /= nd.op_dims[kept[k]];
        }
        T acc = init;
        for (int64_t r = 0; r < n_outer; ++r) {
          int64_t rl = r, off = base;
          for (size_t k = outer_red.size(); k-- > 0;) {
            off += (rl % nd.op_dims[outer_red[k]]) * nd.op_strides[outer_red[k]];
            rl /= nd.op_dims[outer_red[k]];
          }
          for (int64_t c = 0; c < tail; c += block) {
            ev.NewBlock();
            int64_t len = std::min(block, tail - c);
            const T* p = static_cast<const T*>(ev.Eval(in, IndexSet{len, off + c, nullptr, ev.NewSetId()}));
            acc = ReduceRun(op, acc, p, len);
          }
        }
        res[o] = acc;
      }
    });
  } else if (rs > 0 && no > 0 && !red.empty() && red.back() == static_cast<int64_t>(red.size()) - 1) {
    // The reduced dims lead (e.g. bias gradients over batch and sequence): reduced position r
    // of output o is element r * no + o, so a block of outputs reads whole rows, contiguous,
    // with no index arrays; each output still combines its rows in increasing order.
    const int64_t m = std::min(block, no);
    ParallelBlocks(pool, opt, (no + m - 1) / m, [&](int64_t b0, int64_t b1) {
      BlockEval ev(nodes, params, t_arena);
      std::vector<T> acc(m);
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t o0 = b * m, mm = std::min(m, no - o0);
        std::fill(acc.begin(), acc.begin() + mm, init);
        const int64_t rc = mm == no ? std::max<int64_t>(1, block / mm) : 1;
        for (int64_t r0 = 0; r0 < rs; r0 += rc) {
          ev.NewBlock();
          const int64_t len = std::min(rc, rs - r0);
          const T* p = static_cast<const T*>(
              ev.Eval(in, IndexSet{len * mm, r0 * no + o0, nullptr, ev.NewSetId()}));
          for (int64_t r = 0; r < len; ++r) CombineRow(op, acc.data(), p + r * mm, mm);
        }
        std::copy(acc.begin(), acc.begin() + mm, res.begin() + o0);
      }
    });
  } else if (rs > 0 && no > 0) {
    const int64_t m = std::min(block, no);
    std::vector<int64_t> kept_sizes, red_sizes;
    for (int64_t d : kept) kept_sizes.push_back(nd.op_dims[d]);
    for (int64_t d : red) red_sizes.push_back(nd.op_dims[d]);
    ParallelBlocks(pool, opt, (no + m - 1) / m, [&](int64_t b0, int64_t b1) {
      BlockEval ev(nodes, params, t_arena);
      std::vector<int64_t> base(m);
      std::vector<T> acc(m);
      for (int64_t b = b0; b < b1; ++b) {
        int64_t o0 = b * m, mm = std::min(m, no - o0);
        for (int64_t j = 0; j < mm; ++j) {
          int64_t lin = o0 + j, off = 0;
          for (size_t k = kept.size(); k-- > 0;) {
            off += (lin % kept_sizes[k]) * nd.op_strides[kept[k]];
            lin /= kept_sizes[k];
          }
          base[j] = off;
          acc[j] = init;
        }
        const int64_t rc = std::max<int64_t>(1, block / mm);
        for (int64_t r0 = 0; r0 < rs; r0 += rc) {
          ev.NewBlock();
          int64_t len = std::min(rc, rs - r0);
          int64_t* idx = static_cast<int64_t*>(t_arena.Alloc(8 * len * mm + 8));
          for (int64_t r = r0; r < r0 + len; ++r) {
            int64_t lin = r, roff = 0;
            for (size_t k = red.size(); k-- > 0;) {
              roff += (lin % red_sizes[k]) * nd.op_strides[red[k]];
              lin /= red_sizes[k];
            }
            for (int64_t j = 0; j < mm; ++j) idx[(r - r0) * mm + j] = base[j] + roff;
          }
          // Reducing leading dims makes the positions one contiguous range: evaluate it as such.
          bool contiguous = true;
          for (int64_t q = 1; q < len * mm && contiguous; ++q) contiguous = idx[q] == idx[q - 1] + 1;
          const IndexSet set{len * mm, idx[0], contiguous ? nullptr : idx, ev.NewSetId()};
          const T* p = static_cast<const T*>(ev.Eval(in, set));
          for (int64_t r = 0; r < len; ++r) CombineRow(op, acc.data(), p + r * mm, mm);
        }
        for (int64_t j = 0; j < mm; ++j) res[o0 + j] = acc[j];
      }
    });
  }
  if constexpr (std::is_same_v<T, float>) fused::RoundToType(nd.type, res.data(), no);
  if constexpr (std::is_same_v<T, int64_t>) fused::WrapToType(nd.type, res.data(), no);
  StoreBlock(out, 0, res.data(), nd.kind, no);
}

}  // namespace

void RunFusedReduce(const std::vector<FusedNode>& nodes, const FusedNode& nd,
                    const std::vector<const Buffer*>& params, ThreadPool* pool,
                    const FusedRunOptions& opt, Buffer& out) {
  switch (nd.kind) {
    case VKind::kF32: ReduceTyped<float>(nodes, nd, params, pool, opt, out); break;
    case VKind::kF64: ReduceTyped<double>(nodes, nd, params, pool, opt, out); break;
    case VKind::kI64: ReduceTyped<int64_t>(nodes, nd, params, pool, opt, out); break;
  }
}

}  // namespace hlox::rt
