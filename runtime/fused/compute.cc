// BlockEval::Compute: evaluates one node of a fused program on an index set (parameters,
// constants, iota, elementwise math, converts and the index-map nodes, which delegate to
// fused/eval.cc). Scalar operands of elementwise nodes are broadcast.
// GCC 12 reports false maybe-uninitialized warnings inside the AVX-512 conversion intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/math/half.h"
#include "runtime/fused/node.h"
#include "runtime/math/block_ops.h"
#include "runtime/fused/program_impl.h"
#include "runtime/fused/stream.h"
#include "runtime/fused/walk.h"

namespace hlox::rt {
namespace {

template <typename Dst>
void GatherVec(const Dst* src, const IndexSet& s, Dst* out) {
  if (s.idx) {
    for (int64_t j = 0; j < s.n; ++j) out[j] = src[s.idx[j]];
  } else {
    std::memcpy(out, src + s.start, s.n * sizeof(Dst));
  }
}

template <typename Dst>
void GatherBuffer(const Buffer& b, const IndexSet& s, Dst* out) {
  auto run = [&](auto* src, auto conv) {
    if (s.idx != nullptr) {
      const int64_t* idx = s.idx;
      for (int64_t j = 0; j < s.n; ++j) out[j] = static_cast<Dst>(conv(src[idx[j]]));
    } else {
      src += s.start;
      for (int64_t j = 0; j < s.n; ++j) out[j] = static_cast<Dst>(conv(src[j]));
    }
  };
  auto id = [](auto v) { return v; };
  if constexpr (std::is_same_v<Dst, float>) {  // contiguous f16: the vector conversion
    if (s.idx == nullptr && b.shape().element_type() == PrimitiveType::kF16) {
      fused::HalfToF32(fused::kHalfF16, b.as<uint16_t>() + s.start, out, s.n);
      return;
    }
  }
  switch (b.shape().element_type()) {
    case PrimitiveType::kF32: run(b.as<float>(), id); break;
    case PrimitiveType::kF64: run(b.as<double>(), id); break;
    case PrimitiveType::kBF16: run(b.as<uint16_t>(), [](uint16_t v) { return fused::Bf16BitsToFloat(v); }); break;
    case PrimitiveType::kF16: run(b.as<uint16_t>(), [](uint16_t v) { return HalfToFloat(v); }); break;
    case PrimitiveType::kPred: case PrimitiveType::kU8: run(b.as<uint8_t>(), id); break;
    case PrimitiveType::kS8: run(b.as<int8_t>(), id); break;
    case PrimitiveType::kS16: run(b.as<int16_t>(), id); break;
    case PrimitiveType::kU16: run(b.as<uint16_t>(), id); break;
    case PrimitiveType::kS32: run(b.as<int32_t>(), id); break;
    case PrimitiveType::kU32: run(b.as<uint32_t>(), id); break;
    case PrimitiveType::kS64: run(b.as<int64_t>(), id); break;
    default: for (int64_t j = 0; j < s.n; ++j) out[j] = Dst{}; break;  // rejected at compile
  }
}

// Float -> integer type: NaN -> 0, saturate to the type's range, truncate toward zero.
template <typename F>
int64_t FloatToInt(F v, PrimitiveType t) {
  if (t == PrimitiveType::kPred) return v != 0;
  if (v != v) return 0;
  int bits = fused::IntBits(t);
  double lo, hi;
  if (fused::IsUnsignedIntOrPred(t)) {
    lo = 0;
    hi = std::ldexp(1.0, bits) - 1;
  } else {
    lo = -std::ldexp(1.0, bits - 1);
    hi = std::ldexp(1.0, bits - 1) - 1;
  }
  double d = static_cast<double>(v);
  if (d <= lo) return static_cast<int64_t>(lo);
  if (bits == 64 && d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (d >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(d);
}

}  // namespace

template <typename F>
void BlockEval::Chunked(int64_t n, F&& f) {
  if (prefetch_ == nullptr) {
    f(int64_t{0}, n);
    return;
  }
  for (int64_t lo = 0; lo < n; lo += kWorkChunk) {
    f(lo, std::min(n, lo + kWorkChunk));
    prefetch_->Step();
  }
}

void* BlockEval::AllocResult(int node, const IndexSet& set, VKind k) {
  if (node == dest_node_ && set.id == dest_set_ && k == VKind::kF32 && dest_ != nullptr) {
    return dest_;
  }
  return arena_.Alloc(KindBytes(k) * set.n + 8);
}

const void* BlockEval::Operand(const FusedNode& nd, int i, const IndexSet& set) {
  const int64_t n = set.n;
  const FusedNode& op = nodes_[nd.operands[i]];
  if (!op.dims.empty() || nd.dims.empty()) return Eval(nd.operands[i], set);
  IndexSet one{1, 0, nullptr, NewSetId()};
  const void* v = Eval(nd.operands[i], one);
  void* out = arena_.Alloc(KindBytes(op.kind) * n + 8);
  if (op.kind == VKind::kF32) std::fill_n(static_cast<float*>(out), n, *static_cast<const float*>(v));
  else if (op.kind == VKind::kF64) std::fill_n(static_cast<double*>(out), n, *static_cast<const double*>(v));
  else std::fill_n(static_cast<int64_t*>(out), n, *static_cast<const int64_t*>(v));
  return out;
}

const void* BlockEval::ComputeParam(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const Buffer& b = *params_[nd.param];
  if (set.idx == nullptr && (b.shape().element_type() == PrimitiveType::kF32 && nd.kind == VKind::kF32)) {
    return b.as<float>() + set.start;
  }
  if (set.idx == nullptr && (b.shape().element_type() == PrimitiveType::kF64 && nd.kind == VKind::kF64)) {
    return b.as<double>() + set.start;
  }
  if (set.idx == nullptr && (b.shape().element_type() == PrimitiveType::kS64 && nd.kind == VKind::kI64)) {
    return b.as<int64_t>() + set.start;
  }
  void* out = AllocResult(node, set, nd.kind);
  if (set.runs > 0 && b.shape().element_type() == PrimitiveType::kF32 && nd.kind == VKind::kF32) {
    float* o = static_cast<float*>(out);
    const int64_t step = set.run_step;
    if (step != 1 && TileRuns(set)) {  // a tile: read it row by row, not down its columns
      GatherTileF32(b.as<float>() + set.run_start[0], step, set.runs, set.run_len[0], o);
      return out;
    }
    for (int64_t r = 0; r < set.runs; ++r) {
      const float* from = b.as<float>() + set.run_start[r];
      const int64_t len = set.run_len[r];
      if (step == 1) {
        std::memcpy(o, from, static_cast<size_t>(len) * 4);
      } else {
        for (int64_t k = 0; k < len; ++k) o[k] = from[k * step];
      }
      o += len;
    }
    return out;
  }
  if (nd.kind == VKind::kF32) GatherBuffer(b, set, static_cast<float*>(out));
  else if (nd.kind == VKind::kF64) GatherBuffer(b, set, static_cast<double*>(out));
  else GatherBuffer(b, set, static_cast<int64_t*>(out));
  return out;
}

const void* BlockEval::ComputeConstant(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  if (nd.kind == VKind::kF32) {
    if (!set.idx) return nd.cf.data() + set.start;
    void* out = AllocResult(node, set, nd.kind);
    GatherVec(nd.cf.data(), set, static_cast<float*>(out));
    return out;
  }
  if (nd.kind == VKind::kF64) {
    if (!set.idx) return nd.cd.data() + set.start;
    void* out = AllocResult(node, set, nd.kind);
    GatherVec(nd.cd.data(), set, static_cast<double*>(out));
    return out;
  }
  if (!set.idx) return nd.ci.data() + set.start;
  void* out = AllocResult(node, set, nd.kind);
  GatherVec(nd.ci.data(), set, static_cast<int64_t*>(out));
  return out;
}

const void* BlockEval::ComputeIota(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  void* out = AllocResult(node, set, nd.kind);
  const int64_t stride = nd.strides[nd.iota_dim], size = nd.dims[nd.iota_dim];
  fused_walk::WithKind(nd.kind, [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(out);
    if (n == 0 || stride <= 0 || size <= 0) return;  // empty shapes
    if (set.idx != nullptr) {
      for (int64_t j = 0; j < n; ++j) o[j] = static_cast<T>((set.idx[j] / stride) % size);
      return;
    }
    // Contiguous set: runs of one coordinate (stride > 1), or of consecutive coordinates up to
    // the dimension's end (stride 1), each a loop the compiler vectorizes.
    int64_t c = (set.start / stride) % size, r = set.start % stride;
    for (int64_t j = 0; j < n;) {
      if (stride == 1) {
        const int64_t len = std::min(n - j, size - c);
        for (int64_t t = 0; t < len; ++t) o[j + t] = static_cast<T>(c + t);
        j += len;
        c = 0;
      } else {
        const int64_t len = std::min(n - j, stride - r);
        std::fill(o + j, o + j + len, static_cast<T>(c));
        j += len;
        r = 0;
        if (++c == size) c = 0;
      }
    }
  });
  if (nd.kind == VKind::kF32) fused::RoundToType(nd.type, static_cast<float*>(out), n);
  if (nd.kind == VKind::kI64) fused::WrapToType(nd.type, static_cast<int64_t*>(out), n);
  return out;
}

const void* BlockEval::ComputeUnary(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  const void* a = Operand(nd, 0, set);
  void* out = AllocResult(node, set, nd.kind);
  if (nd.opcode == Opcode::kIsFinite) {
    const FusedNode& op = nodes_[nd.operands[0]];
    int64_t* o = static_cast<int64_t*>(out);
    if (op.kind == VKind::kF32) for (int64_t j = 0; j < n; ++j) o[j] = std::isfinite(static_cast<const float*>(a)[j]);
    else if (op.kind == VKind::kF64) for (int64_t j = 0; j < n; ++j) o[j] = std::isfinite(static_cast<const double*>(a)[j]);
    else for (int64_t j = 0; j < n; ++j) o[j] = 1;
    return out;
  }
  if (nd.kind == VKind::kF32) {
    const float* x = static_cast<const float*>(a);
    float* o = static_cast<float*>(out);
    Chunked(n, [&](int64_t lo, int64_t hi) {
      fused::UnaryFloat(nd.opcode, x + lo, o + lo, hi - lo);
      fused::RoundToType(nd.type, o + lo, hi - lo);
    });
  } else if (nd.kind == VKind::kF64) {
    fused::UnaryFloat(nd.opcode, static_cast<const double*>(a), static_cast<double*>(out), n);
  } else {
    fused::UnaryInt(nd.opcode, nd.type, static_cast<const int64_t*>(a), static_cast<int64_t*>(out), n);
  }
  return out;
}

const void* BlockEval::ComputeBinaryWithScalar(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  auto scalar_id = [&](int i) -> int {
    int id = nd.operands[i];
    const FusedNode* op = &nodes_[id];
    if (op->op == NodeOp::kAffine && op->op_dims.empty()) id = op->operands[0];
    return nodes_[id].dims.empty() ? id : -1;
  };
  int s0 = scalar_id(0), s1 = scalar_id(1);
  if ((s0 < 0) == (s1 < 0)) return nullptr;
  const bool first = s0 >= 0;
  IndexSet one{1, 0, nullptr, NewSetId()};
  const void* sv = Eval(first ? s0 : s1, one);
  const void* a = Operand(nd, first ? 1 : 0, set);
  void* out = AllocResult(node, set, nd.kind);
  bool done;
  if (nd.kind == VKind::kF32) {
    const float* x = static_cast<const float*>(a);
    const float s = *static_cast<const float*>(sv);
    float* o = static_cast<float*>(out);
    done = fused::BinaryFloatScalar<float>(nd.opcode, nullptr, s, first, nullptr, 0);
    if (done) {
      Chunked(n, [&](int64_t lo, int64_t hi) {
        fused::BinaryFloatScalar(nd.opcode, x + lo, s, first, o + lo, hi - lo);
        fused::RoundToType(nd.type, o + lo, hi - lo);
      });
    }
  } else {
    done = fused::BinaryFloatScalar(nd.opcode, static_cast<const double*>(a),
                                    *static_cast<const double*>(sv), first,
                                    static_cast<double*>(out), n);
  }
  return done ? out : nullptr;
}

const void* BlockEval::ComputeBinary(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  if (nd.kind != VKind::kI64 && !nd.dims.empty()) {
    if (const void* out = ComputeBinaryWithScalar(node, set)) return out;
  }
  const void* a = Operand(nd, 0, set);
  const void* b = Operand(nd, 1, set);
  void* out = AllocResult(node, set, nd.kind);
  if (nd.kind == VKind::kF32) {
    const float* x = static_cast<const float*>(a);
    const float* y = static_cast<const float*>(b);
    float* o = static_cast<float*>(out);
    Chunked(n, [&](int64_t lo, int64_t hi) {
      fused::BinaryFloat(nd.opcode, x + lo, y + lo, o + lo, hi - lo);
      fused::RoundToType(nd.type, o + lo, hi - lo);
    });
  } else if (nd.kind == VKind::kF64) {
    fused::BinaryFloat(nd.opcode, static_cast<const double*>(a), static_cast<const double*>(b),
                       static_cast<double*>(out), n);
  } else {
    fused::BinaryInt(nd.opcode, nd.type, static_cast<const int64_t*>(a),
                     static_cast<const int64_t*>(b), static_cast<int64_t*>(out), n);
  }
  return out;
}

const void* BlockEval::ComputeCompare(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  const void* a = Operand(nd, 0, set);
  const void* b = Operand(nd, 1, set);
  int64_t* o = static_cast<int64_t*>(AllocResult(node, set, VKind::kI64));
  switch (nodes_[nd.operands[0]].kind) {
    case VKind::kF32: fused::CompareBlock(nd.dir, static_cast<const float*>(a), static_cast<const float*>(b), o, n); break;
    case VKind::kF64: fused::CompareBlock(nd.dir, static_cast<const double*>(a), static_cast<const double*>(b), o, n); break;
    case VKind::kI64: fused::CompareBlock(nd.dir, static_cast<const int64_t*>(a), static_cast<const int64_t*>(b), o, n); break;
  }
  return o;
}

const void* BlockEval::ComputeSelectOrClamp(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  const void* a = Operand(nd, 0, set);
  const void* b = Operand(nd, 1, set);
  const void* c = Operand(nd, 2, set);
  void* out = AllocResult(node, set, nd.kind);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* o = static_cast<T*>(out);
    const T* x = static_cast<const T*>(b);
    if (nd.op == NodeOp::kSelect) {
      const int64_t* p = static_cast<const int64_t*>(a);
      const T* y = static_cast<const T*>(c);
      // Both values loaded unconditionally: the loop becomes blends, not a branch per
      // element (predicates such as ReLU masks are random, so the branch mispredicts).
      for (int64_t j = 0; j < n; ++j) {
        const T xv = x[j], yv = y[j];
        o[j] = p[j] != 0 ? xv : yv;
      }
    } else {
      const T* lo = static_cast<const T*>(a);
      const T* hi = static_cast<const T*>(c);
      for (int64_t j = 0; j < n; ++j) {
        T v = x[j] < lo[j] ? lo[j] : x[j];
        o[j] = v > hi[j] ? hi[j] : v;
      }
    }
  };
  if (nd.kind == VKind::kF32) run(float{});
  else if (nd.kind == VKind::kF64) run(double{});
  else run(int64_t{});
  return out;
}

const void* BlockEval::ComputeConvert(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  const FusedNode& op = nodes_[nd.operands[0]];
  const void* a = Operand(nd, 0, set);
  void* out = AllocResult(node, set, nd.kind);
  auto from = [&](auto stag) {
    using S = decltype(stag);
    const S* x = static_cast<const S*>(a);
    if (nd.kind == VKind::kI64) {
      int64_t* o = static_cast<int64_t*>(out);
      if constexpr (std::is_floating_point_v<S>) {
        for (int64_t j = 0; j < n; ++j) o[j] = FloatToInt(x[j], nd.type);
      } else {
        for (int64_t j = 0; j < n; ++j) o[j] = x[j];
        if (nd.type == PrimitiveType::kPred) for (int64_t j = 0; j < n; ++j) o[j] = o[j] != 0;
        fused::WrapToType(nd.type, o, n);
      }
    } else if (nd.kind == VKind::kF32) {
      float* o = static_cast<float*>(out);
      for (int64_t j = 0; j < n; ++j) o[j] = static_cast<float>(x[j]);
      fused::RoundToType(nd.type, o, n);
    } else {
      double* o = static_cast<double*>(out);
      for (int64_t j = 0; j < n; ++j) o[j] = static_cast<double>(x[j]);
    }
  };
  if (op.kind == VKind::kF32) from(float{});
  else if (op.kind == VKind::kF64) from(double{});
  else from(int64_t{});
  return out;
}

const void* BlockEval::ComputeBitcastConvert(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  const int64_t n = set.n;
  const FusedNode& op = nodes_[nd.operands[0]];
  const void* a = Operand(nd, 0, set);
  void* out = AllocResult(node, set, nd.kind);
  if (op.kind == VKind::kF32) {  // f32 -> s32/u32
    const float* x = static_cast<const float*>(a);
    int64_t* o = static_cast<int64_t*>(out);
    for (int64_t j = 0; j < n; ++j) { uint32_t u; std::memcpy(&u, &x[j], 4); o[j] = u; }
    fused::WrapToType(nd.type, o, n);
  } else if (op.kind == VKind::kF64) {  // f64 -> s64
    const double* x = static_cast<const double*>(a);
    int64_t* o = static_cast<int64_t*>(out);
    for (int64_t j = 0; j < n; ++j) std::memcpy(&o[j], &x[j], 8);
  } else if (nd.kind == VKind::kF32) {  // s32/u32 -> f32
    const int64_t* x = static_cast<const int64_t*>(a);
    float* o = static_cast<float*>(out);
    for (int64_t j = 0; j < n; ++j) { uint32_t u = static_cast<uint32_t>(x[j]); std::memcpy(&o[j], &u, 4); }
  } else {  // s64 -> f64
    const int64_t* x = static_cast<const int64_t*>(a);
    double* o = static_cast<double*>(out);
    for (int64_t j = 0; j < n; ++j) std::memcpy(&o[j], &x[j], 8);
  }
  return out;
}

const void* BlockEval::ComputeDynamicSlice(const FusedNode& nd, const IndexSet& set) {
  int64_t offset = 0;
  for (size_t d = 0; d < nd.dims.size(); ++d) {
    int64_t s = ScalarInt(nd.operands[1 + d]);
    s = std::max<int64_t>(0, std::min<int64_t>(s, nd.op_dims[d] - nd.dims[d]));
    offset += s * nd.op_strides[d];
  }
  return EvalAffine(nd, set, offset);
}

const void* BlockEval::Compute(int node, const IndexSet& set) {
  const FusedNode& nd = nodes_[node];
  switch (nd.op) {
    case NodeOp::kParam: return ComputeParam(node, set);
    case NodeOp::kConstant: return ComputeConstant(node, set);
    case NodeOp::kIota: return ComputeIota(node, set);
    case NodeOp::kUnary: return ComputeUnary(node, set);
    case NodeOp::kBinary: return ComputeBinary(node, set);
    case NodeOp::kCompare: return ComputeCompare(node, set);
    case NodeOp::kSelect:
    case NodeOp::kClamp: return ComputeSelectOrClamp(node, set);
    case NodeOp::kConvert: return ComputeConvert(node, set);
    case NodeOp::kBitcastConvert: return ComputeBitcastConvert(node, set);
    case NodeOp::kIdentity: return Eval(nd.operands[0], set);
    case NodeOp::kAffine:
      if (nd.op_dims.empty()) return Operand(nd, 0, set);  // scalar broadcast
      return EvalAffine(nd, set, nd.offset);
    case NodeOp::kDynamicSlice: return ComputeDynamicSlice(nd, set);
    case NodeOp::kLayoutBitcast: return EvalLayoutBitcast(nd, set);
    case NodeOp::kPad: return EvalPad(nd, set);
    case NodeOp::kConcat: return EvalConcat(nd, set);
    case NodeOp::kReduce:
    case NodeOp::kTuple:
      break;  // roots only; Run handles them
  }
  return nullptr;
}

}  // namespace hlox::rt
