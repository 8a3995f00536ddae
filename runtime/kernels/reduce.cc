// reduce: any number of operands with any reducer computation. The input is viewed as
// [K1, R, K2] when the reduced dims are contiguous (else transposed to [K, R]). Recognized
// reducers (add, mul, max, min, and, or, xor over one operand) run native loops; anything else
// (variadic argmax, custom reducers) runs the computation per element. Results never depend
// on the thread count: each output reduces R in a fixed order, and when outputs are few and R
// is long, R is cut into fixed blocks whose partials are combined in block order.
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "common/status_macros.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/strided_copy.h"
#include "runtime/kernels/elementwise_scalar.h"
#include "runtime/kernels/reducer.h"
#include "runtime/kernels/scalar_program.h"

namespace hlox::rt {
namespace {

constexpr int64_t kLanes = 16;         // independent accumulators per segment (fixed order)
constexpr int64_t kRBlock = 1 << 15;   // fixed block of R for few-output reductions

template <typename T> inline constexpr bool kIsFloat = std::is_floating_point_v<T>;

template <typename T> T Combine(Opcode op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kAdd: case Opcode::kOr: case Opcode::kMaximum: return a || b;
      case Opcode::kXor: return a != b;
      default: return a && b;
    }
  } else if constexpr (scalar::kIsComplex<T>) {
    return op == Opcode::kMultiply ? a * b : a + b;
  } else if constexpr (kIsFloat<T>) {
    switch (op) {
      case Opcode::kAdd: return a + b;
      case Opcode::kMultiply: return a * b;
      case Opcode::kMaximum: return scalar::FMax(a, b);
      default: return scalar::FMin(a, b);
    }
  } else {
    switch (op) {
      case Opcode::kAdd: return scalar::WrapAdd(a, b);
      case Opcode::kMultiply: return scalar::WrapMul(a, b);
      case Opcode::kMaximum: return std::max(a, b);
      case Opcode::kMinimum: return std::min(a, b);
      case Opcode::kAnd: return static_cast<T>(a & b);
      case Opcode::kOr: return static_cast<T>(a | b);
      default: return static_cast<T>(a ^ b);
    }
  }
}

// Reduces `n` contiguous elements starting at p, in a fixed lane order.
template <typename Tr, Opcode kOp>
typename Tr::Compute Segment(const typename Tr::Storage* p, int64_t n, typename Tr::Compute init) {
  using T = typename Tr::Compute;
  if (n >= 2 * kLanes) {
    T lane[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = Tr::Load(p[l]);
    int64_t i = kLanes;
    for (; i + kLanes <= n; i += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) lane[l] = Combine<T>(kOp, lane[l], Tr::Load(p[i + l]));
    }
    for (int64_t w = kLanes / 2; w >= 1; w /= 2) {
      for (int64_t l = 0; l < w; ++l) lane[l] = Combine<T>(kOp, lane[l], lane[l + w]);
    }
    T acc = Combine<T>(kOp, init, lane[0]);
    for (; i < n; ++i) acc = Combine<T>(kOp, acc, Tr::Load(p[i]));
    return acc;
  }
  T acc = init;
  for (int64_t i = 0; i < n; ++i) acc = Combine<T>(kOp, acc, Tr::Load(p[i]));
  return acc;
}

// acc[j] = op(acc[j], in[r*k2 + j]) for r in [r_lo, r_hi), j in [j_lo, j_hi).
template <typename Tr, Opcode kOp>
void Columns(const typename Tr::Storage* in, int64_t k2, int64_t r_lo, int64_t r_hi, int64_t j_lo,
             int64_t j_hi, typename Tr::Compute* acc) {
  using T = typename Tr::Compute;
  for (int64_t r = r_lo; r < r_hi; ++r) {
    const typename Tr::Storage* row = in + r * k2;
    for (int64_t j = j_lo; j < j_hi; ++j) acc[j] = Combine<T>(kOp, acc[j], Tr::Load(row[j]));
  }
}

template <typename Tr, Opcode kOp>
void FastReduce(const typename Tr::Storage* in, int64_t k1, int64_t r, int64_t k2, typename Tr::Compute init,
                typename Tr::Storage* out, ThreadPool* pool) {
  using T = typename Tr::Compute;
  int64_t outputs = k1 * k2;
  if (outputs == 0) return;
  bool split_r = outputs < 256 && r >= 2 * kRBlock;
  if (!split_r) {
    if (k2 == 1) {
      int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, r));
      auto body = [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = Tr::Store(Segment<Tr, kOp>(in + i * r, r, init));
      };
      if (pool) pool->ParallelFor(k1, grain, body); else body(0, k1);
    } else {
      // Work items: (k1, 1024-wide column chunk).
      constexpr int64_t kCols = 1024;
      int64_t chunks = (k2 + kCols - 1) / kCols;
      int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, r * std::min(k2, kCols)));
      auto body = [&](int64_t lo, int64_t hi) {
        std::unique_ptr<T[]> acc(new T[std::min(k2, kCols)]);
        for (int64_t w = lo; w < hi; ++w) {
          int64_t i = w / chunks, j_lo = (w % chunks) * kCols, j_hi = std::min(k2, j_lo + kCols);
          std::fill(acc.get(), acc.get() + (j_hi - j_lo), init);
          Columns<Tr, kOp>(in + i * r * k2 + j_lo, k2, 0, r, 0, j_hi - j_lo, acc.get());
          for (int64_t j = j_lo; j < j_hi; ++j) out[i * k2 + j] = Tr::Store(acc[j - j_lo]);
        }
      };
      if (pool) pool->ParallelFor(k1 * chunks, grain, body); else body(0, k1 * chunks);
    }
    return;
  }
  // Few outputs, long R: fixed R blocks, partials combined in block order.
  int64_t blocks = (r + kRBlock - 1) / kRBlock;
  std::unique_ptr<T[]> partial(new T[blocks * outputs]);
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) {
      int64_t r_lo = b * kRBlock, r_hi = std::min(r, r_lo + kRBlock);
      T* acc = partial.get() + b * outputs;
      for (int64_t i = 0; i < k1; ++i) {
        const typename Tr::Storage* base = in + i * r * k2;
        if (k2 == 1) {
          acc[i] = r_hi - r_lo > 1 ? Segment<Tr, kOp>(base + r_lo + 1, r_hi - r_lo - 1, Tr::Load(base[r_lo]))
                                   : Tr::Load(base[r_lo]);
        } else {
          for (int64_t j = 0; j < k2; ++j) acc[i * k2 + j] = Tr::Load(base[r_lo * k2 + j]);
          Columns<Tr, kOp>(base, k2, r_lo + 1, r_hi, 0, k2, acc + i * k2);
        }
      }
    }
  };
  if (pool) pool->ParallelFor(blocks, 1, body); else body(0, blocks);
  for (int64_t o = 0; o < outputs; ++o) {
    T acc = init;
    for (int64_t b = 0; b < blocks; ++b) acc = Combine<T>(kOp, acc, partial[b * outputs + o]);
    out[o] = Tr::Store(acc);
  }
}

template <typename Tr>
absl::Status FastReduceDispatch(Opcode op, const Buffer& in, const Buffer& init, int64_t k1, int64_t r, int64_t k2,
                                Buffer& out, ThreadPool* pool) {
  using S = typename Tr::Storage;
  using T = typename Tr::Compute;
  const S* src = in.as<S>();
  S* dst = out.as<S>();
  T iv = Tr::Load(init.as<S>()[0]);
  switch (op) {
    case Opcode::kAdd: FastReduce<Tr, Opcode::kAdd>(src, k1, r, k2, iv, dst, pool); break;
    case Opcode::kMultiply: FastReduce<Tr, Opcode::kMultiply>(src, k1, r, k2, iv, dst, pool); break;
    case Opcode::kMaximum: FastReduce<Tr, Opcode::kMaximum>(src, k1, r, k2, iv, dst, pool); break;
    case Opcode::kMinimum: FastReduce<Tr, Opcode::kMinimum>(src, k1, r, k2, iv, dst, pool); break;
    case Opcode::kAnd: FastReduce<Tr, Opcode::kAnd>(src, k1, r, k2, iv, dst, pool); break;
    case Opcode::kOr: FastReduce<Tr, Opcode::kOr>(src, k1, r, k2, iv, dst, pool); break;
    default: FastReduce<Tr, Opcode::kXor>(src, k1, r, k2, iv, dst, pool); break;
  }
  return absl::OkStatus();
}

bool FastPathApplies(Opcode op, PrimitiveType t) {
  bool is_int = IsInteger(t), is_pred = IsPred(t), is_float = IsFloatingPoint(t), is_cx = IsComplex(t);
  if (t == PrimitiveType::kS2 || t == PrimitiveType::kS4 || t == PrimitiveType::kU2 || t == PrimitiveType::kU4) return false;
  if (is_float && t != PrimitiveType::kF16 && t != PrimitiveType::kBF16 && t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return false;
  switch (op) {
    case Opcode::kAdd: case Opcode::kMultiply: return is_int || is_pred || is_float || is_cx;
    case Opcode::kMaximum: case Opcode::kMinimum: return is_int || is_pred || is_float;
    default: return is_int || is_pred;
  }
}

// Per-element interpretation of an arbitrary (possibly variadic) reducer: a compiled scalar
// program when the reducer compiles to one, else an executor call per element.
absl::StatusOr<Value> GenericReduce(const Instruction& instr, const std::vector<const Buffer*>& ins,
                                    const std::vector<const Buffer*>& inits, const std::vector<int64_t>& kept,
                                    const std::vector<int64_t>& reduced, KernelContext& ctx) {
  const Computation* fn = instr.to_apply();
  size_t n = ins.size();
  const auto& dims = ins[0]->shape().dims();
  std::vector<int64_t> strides = RowMajorStrides(dims);
  auto offsets = [&](const std::vector<int64_t>& which) {
    std::vector<int64_t> sub_dims, sub_strides;
    for (int64_t d : which) { sub_dims.push_back(dims[d]); sub_strides.push_back(strides[d]); }
    int64_t count = 1;
    for (int64_t d : sub_dims) count *= d;
    std::vector<int64_t> offs;
    offs.reserve(count);
    if (count == 0) return offs;
    std::vector<int64_t> idx(sub_dims.size(), 0);
    do {
      int64_t o = 0;
      for (size_t i = 0; i < idx.size(); ++i) o += idx[i] * sub_strides[i];
      offs.push_back(o);
    } while (NextIndex(idx, sub_dims));
    return offs;
  };
  std::vector<int64_t> kept_off = offsets(kept), red_off = offsets(reduced);
  std::vector<Value> outs;
  for (size_t k = 0; k < n; ++k) {
    const Shape& s = instr.shape().IsTuple() ? instr.shape().tuple_shape(k) : instr.shape();
    outs.push_back(NewArray(s));
  }
  const int64_t outputs = static_cast<int64_t>(kept_off.size());
  const int64_t per_output = std::max<int64_t>(1, static_cast<int64_t>(red_off.size()));
  // A reducer of rank-0 ops (argmax's compare/select pairs, say) runs as a compiled scalar
  // program, without an executor call and its allocations per element.
  if (std::optional<ScalarProgram> prog = ScalarProgram::Compile(*fn);
      prog.has_value() && prog->result_count() == static_cast<int64_t>(n)) {
    auto body = [&](int64_t lo, int64_t hi) {
      std::vector<SVal> args(2 * n), acc(n), scratch;
      for (int64_t o = lo; o < hi; ++o) {
        for (size_t k = 0; k < n; ++k) acc[k] = LoadSVal(*inits[k], 0);
        for (int64_t r : red_off) {
          for (size_t k = 0; k < n; ++k) {
            args[k] = acc[k];
            args[n + k] = LoadSVal(*ins[k], kept_off[o] + r);
          }
          prog->Run(args.data(), acc.data(), scratch);
        }
        for (size_t k = 0; k < n; ++k) StoreSVal(*outs[k].array, o, acc[k]);
      }
    };
    // About 4096 reducer calls (tens of microseconds) per piece of the split.
    const int64_t grain = std::max<int64_t>(1, 4096 / per_output);
    if (ctx.pool) ctx.pool->ParallelFor(outputs, grain, body); else body(0, outputs);
    if (!instr.shape().IsTuple()) return outs[0];
    return Value::Tuple(std::move(outs));
  }
  std::vector<int64_t> es(n);
  for (size_t k = 0; k < n; ++k) es[k] = PrimitiveByteSize(ins[k]->shape().element_type());
  absl::Status status;
  std::mutex mu;
  auto body = [&](int64_t lo, int64_t hi) {
    std::vector<Value> acc(n), elem(n);
    std::vector<const Value*> args(2 * n);
    for (size_t k = 0; k < n; ++k) {
      elem[k] = NewArray(Shape(ins[k]->shape().element_type(), {}));
      args[n + k] = &elem[k];
    }
    for (int64_t o = lo; o < hi; ++o) {
      for (size_t k = 0; k < n; ++k) {
        acc[k] = NewArray(Shape(ins[k]->shape().element_type(), {}));
        std::memcpy(acc[k].array->data(), inits[k]->data(), es[k]);
      }
      for (int64_t r : red_off) {
        for (size_t k = 0; k < n; ++k) {
          std::memcpy(elem[k].array->data(), ins[k]->data() + (kept_off[o] + r) * es[k], es[k]);
          args[k] = &acc[k];
        }
        absl::StatusOr<Value> res = ctx.executor->RunComputation(*fn, args);
        if (!res.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          status = res.status();
          return;
        }
        if (n == 1) {
          acc[0] = res->is_tuple ? res->tuple[0] : *res;
        } else {
          for (size_t k = 0; k < n; ++k) acc[k] = res->tuple[k];
        }
      }
      for (size_t k = 0; k < n; ++k) {
        std::memcpy(outs[k].array->data() + o * es[k], acc[k].array->data(), es[k]);
      }
    }
  };
  const int64_t grain = std::max<int64_t>(1, 256 / per_output);
  if (ctx.pool) ctx.pool->ParallelFor(outputs, grain, body); else body(0, outputs);
  if (!status.ok()) return status;
  if (!instr.shape().IsTuple()) return outs[0];
  return Value::Tuple(std::move(outs));
}

}  // namespace

absl::StatusOr<Value> ReduceKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  if (operands.empty() || operands.size() % 2 != 0) return KernelError(instr, "reduce needs inputs and init values");
  size_t n = operands.size() / 2;
  std::vector<const Buffer*> ins, inits;
  for (size_t k = 0; k < 2 * n; ++k) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, operands, k));
    (k < n ? ins : inits).push_back(b);
  }
  const Shape& in_shape = ins[0]->shape();
  for (size_t k = 0; k < n; ++k) {
    if (ins[k]->shape().dims() != in_shape.dims()) return KernelError(instr, "reduce inputs differ in shape");
    if (inits[k]->element_count() != 1) return KernelError(instr, "init value is not a scalar");
  }
  if (instr.to_apply() == nullptr) return KernelError(instr, "reduce without to_apply");
  int64_t rank = in_shape.rank();
  std::vector<bool> is_red(rank, false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= rank || is_red[d]) return KernelError(instr, "bad reduce dimensions");
    is_red[d] = true;
  }
  std::vector<int64_t> kept, reduced;
  for (int64_t d = 0; d < rank; ++d) (is_red[d] ? reduced : kept).push_back(d);
  int64_t out_count = 1;
  for (int64_t d : kept) out_count *= in_shape.dim(d);
  const Shape& out0 = instr.shape().IsTuple() ? instr.shape().tuple_shape(0) : instr.shape();
  if (!out0.IsArray() || out0.ElementCount() != out_count) return KernelError(instr, "result shape mismatch");

  std::optional<Opcode> op = MatchBinaryReducer(*instr.to_apply());
  PrimitiveType t = in_shape.element_type();
  if (n != 1 || !op || !FastPathApplies(*op, t) || out0.element_type() != t) {
    return GenericReduce(instr, ins, inits, kept, reduced, ctx);
  }
  // View as [K1, R, K2]; if the reduced dims are not one contiguous run, transpose first.
  const Buffer* src = ins[0];
  std::shared_ptr<Buffer> transposed;
  int64_t k1 = 1, r = 1, k2 = 1;
  bool contiguous = reduced.empty() || reduced.back() - reduced.front() + 1 == static_cast<int64_t>(reduced.size());
  if (contiguous && !reduced.empty()) {
    for (int64_t d = 0; d < rank; ++d) {
      int64_t s = in_shape.dim(d);
      if (d < reduced.front()) k1 *= s; else if (d > reduced.back()) k2 *= s; else r *= s;
    }
  } else if (reduced.empty()) {
    k1 = out_count;
  } else {
    std::vector<int64_t> perm = kept;
    perm.insert(perm.end(), reduced.begin(), reduced.end());
    std::vector<int64_t> tdims;
    for (int64_t d : perm) tdims.push_back(in_shape.dim(d));
    transposed = std::make_shared<Buffer>(Shape(t, tdims));
    TransposeCopy(in_shape.dims(), perm, PrimitiveByteSize(t), src->data(), transposed->data(), ctx.pool);
    src = transposed.get();
    k1 = out_count;
    r = out_count == 0 ? 0 : in_shape.ElementCount() / out_count;
  }
  Value out = NewArray(out0);
  if (r == 0) {
    // Empty reduction: every output is the init value.
    int64_t es = PrimitiveByteSize(t);
    for (int64_t i = 0; i < out_count; ++i) std::memcpy(out.array->data() + i * es, inits[0]->data(), es);
  } else {
    HLOX_RETURN_IF_ERROR(DispatchType(t, "reduce", [&](auto tag) {
      return FastReduceDispatch<typename decltype(tag)::Traits>(*op, *src, *inits[0], k1, r, k2, *out.array, ctx.pool);
    }));
  }
  if (instr.shape().IsTuple()) return Value::Tuple({out});
  return out;
}

}  // namespace hlox::rt
