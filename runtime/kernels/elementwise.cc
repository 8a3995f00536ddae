// Elementwise kernels: every unary, binary and ternary elementwise opcode for the element
// types it applies to. f16/bf16 are loaded to f32, computed, and rounded back (as XLA's CPU
// backend does). Operands have the output's dimensions, except that select's predicate and
// clamp's bounds may be scalars. Large arrays are split across the pool. f32/bf16/f16 exp,
// log, log1p, expm1, tanh, erf and logistic use the fused loop's block math (math/block_ops.h), so fused
// and unfused results agree. f16 maps convert a chunk at a time with math/half.h's vector
// conversions.
// GCC 12 reports false maybe-uninitialized warnings inside the AVX-512 conversion intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <algorithm>
#include <cmath>

#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/elementwise_narrow.h"
#include "runtime/kernels/elementwise_scalar.h"
#include "runtime/math/block_ops.h"
#include "runtime/math/half.h"

namespace hlox::rt {
namespace {

using namespace scalar;  // NOLINT: the scalar op vocabulary reads best unqualified here.

constexpr int64_t kGrain = 16384;

template <typename T> inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <typename T> inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T> using RealOf = typename T::value_type;

// Traits for the real part type of a complex compute type.
template <typename T> struct RealTraitsOf;
template <> struct RealTraitsOf<std::complex<float>> { using type = TypeTraits<PrimitiveType::kF32>; };
template <> struct RealTraitsOf<std::complex<double>> { using type = TypeTraits<PrimitiveType::kF64>; };
template <typename T> struct ComplexTraitsOf;
template <> struct ComplexTraitsOf<float> { using type = TypeTraits<PrimitiveType::kC64>; };
template <> struct ComplexTraitsOf<double> { using type = TypeTraits<PrimitiveType::kC128>; };
using PredTraits = TypeTraits<PrimitiveType::kPred>;

// XLA's mulhi: the high half of the product at twice the type's width (kBits for the narrow
// integers, whose compute type holds them extended), signed or unsigned as the type is.
template <int kBits, typename T>
T MulHi(T x, T y) {
  constexpr int kWidth = kBits > 0 ? kBits : static_cast<int>(8 * sizeof(T));
  if constexpr (sizeof(T) == 8) {
    using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
    return static_cast<T>((static_cast<W>(x) * static_cast<W>(y)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(x) * static_cast<W>(y)) >> kWidth);
  }
}

template <typename Body> void Run(ThreadPool* pool, int64_t n, Body&& body) {
  if (pool != nullptr && n > kGrain) pool->ParallelFor(n, kGrain, body);
  else body(0, n);
}

// True for f16 in and out: such maps widen and narrow a chunk at a time with the vector
// conversions (math/half.h; the same values as TypeTraits' scalar F16C ones once stored).
template <typename InTr, typename OutTr>
constexpr bool ChunkedF16() {
  return InTr::kType == PrimitiveType::kF16 && OutTr::kType == PrimitiveType::kF16;
}

// out[i] = f(x[i]) (and y[i] when y is not null) over f16 elements [lo, hi), in chunks.
template <typename F>
void F16Chunks(const uint16_t* x, const uint16_t* y, uint16_t* out, int64_t lo, int64_t hi, F f) {
  constexpr int64_t kChunk = 512;
  alignas(64) float a[kChunk], b[kChunk];
  for (int64_t c = lo; c < hi; c += kChunk) {
    const int64_t m = std::min(kChunk, hi - c);
    fused::HalfToF32(fused::kHalfF16, x + c, a, m);
    if (y != nullptr) {
      fused::HalfToF32(fused::kHalfF16, y + c, b, m);
      for (int64_t i = 0; i < m; ++i) a[i] = f(a[i], b[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) a[i] = f(a[i], 0.0f);
    }
    fused::F32ToHalf(fused::kHalfF16, a, out + c, m);
  }
}

template <typename InTr, typename OutTr, typename F>
absl::Status Map1(const Buffer& a, Buffer& o, ThreadPool* pool, F f) {
  const auto* in = a.as<typename InTr::Storage>();
  auto* out = o.as<typename OutTr::Storage>();
  if constexpr (ChunkedF16<InTr, OutTr>()) {
    Run(pool, o.element_count(), [&](int64_t b, int64_t e) {
      F16Chunks(in, nullptr, out, b, e, [&](float v, float) { return f(v); });
    });
    return absl::OkStatus();
  }
  Run(pool, o.element_count(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = OutTr::Store(f(InTr::Load(in[i])));
  });
  return absl::OkStatus();
}

template <typename InTr, typename OutTr, typename F>
absl::Status Map2(const Buffer& a, const Buffer& b, Buffer& o, ThreadPool* pool, F f) {
  const auto* x = a.as<typename InTr::Storage>();
  const auto* y = b.as<typename InTr::Storage>();
  auto* out = o.as<typename OutTr::Storage>();
  int64_t n = o.element_count();
  int64_t sx = a.element_count() == n ? 1 : 0, sy = b.element_count() == n ? 1 : 0;
  Run(pool, n, [&](int64_t lo, int64_t hi) {
    if constexpr (ChunkedF16<InTr, OutTr>()) {
      if (sx && sy) {
        F16Chunks(x, y, out, lo, hi, f);
        return;
      }
    }
    if (sx && sy) {
      for (int64_t i = lo; i < hi; ++i) out[i] = OutTr::Store(f(InTr::Load(x[i]), InTr::Load(y[i])));
    } else {
      for (int64_t i = lo; i < hi; ++i) out[i] = OutTr::Store(f(InTr::Load(x[i * sx]), InTr::Load(y[i * sy])));
    }
  });
  return absl::OkStatus();
}

template <typename Tag>
absl::Status Unary(const Instruction& instr, const Buffer& a, Buffer& o, ThreadPool* pool) {
  using Tr = typename Tag::Traits;
  using T = typename Tr::Compute;
  auto same = [&](auto f) { return Map1<Tr, Tr>(a, o, pool, f); };
  switch (instr.opcode()) {
    case Opcode::kNegate:
      if constexpr (kIsInt<T>) return same([](T x) { return WrapNeg(x); });
      else if constexpr (!std::is_same_v<T, bool>) return same([](T x) { return -x; });
      break;
    case Opcode::kAbs:
      if constexpr (kIsComplex<T>) {
        return Map1<Tr, typename RealTraitsOf<T>::type>(a, o, pool, [](T x) { return std::abs(x); });
      } else if constexpr (kIsInt<T> && std::is_signed_v<T>) {
        return same([](T x) { return x < 0 ? WrapNeg(x) : x; });
      } else if constexpr (kIsInt<T>) {
        return same([](T x) { return x; });
      } else if constexpr (kIsFloat<T>) {
        return same([](T x) { return std::fabs(x); });
      }
      break;
    case Opcode::kSign:
      if constexpr (kIsFloat<T>) return same([](T x) { return FSign(x); });
      else if constexpr (kIsInt<T>) return same([](T x) { return ISign(x); });
      else if constexpr (kIsComplex<T>) return same([](T x) { return x == T(0) ? x : x / std::abs(x); });
      break;
    case Opcode::kNot:
      if constexpr (std::is_same_v<T, bool>) return same([](T x) { return !x; });
      else if constexpr (kIsInt<T>) return same([](T x) { return static_cast<T>(~x); });
      break;
    case Opcode::kClz:
      if constexpr (kIsInt<T> && NarrowBits<Tr>::value > 0) return same([](T x) { return NarrowClz<NarrowBits<Tr>::value>(x); });
      else if constexpr (kIsInt<T>) return same([](T x) { return static_cast<T>(CountLeadingZeros(x)); });
      break;
    case Opcode::kPopulationCount:
      if constexpr (kIsInt<T> && NarrowBits<Tr>::value > 0) return same([](T x) { return NarrowPopCount<NarrowBits<Tr>::value>(x); });
      else if constexpr (kIsInt<T>) return same([](T x) { return static_cast<T>(PopCount(x)); });
      break;
    case Opcode::kReal:
    case Opcode::kImag: {
      bool real = instr.opcode() == Opcode::kReal;
      if constexpr (kIsComplex<T>) {
        return Map1<Tr, typename RealTraitsOf<T>::type>(a, o, pool, [real](T x) { return real ? x.real() : x.imag(); });
      } else if constexpr (kIsFloat<T>) {
        return same([real](T x) { return real ? x : T(0); });
      }
      break;
    }
    case Opcode::kIsFinite:
      if constexpr (kIsFloat<T>) return Map1<Tr, PredTraits>(a, o, pool, [](T x) { return std::isfinite(x); });
      break;
    default:
      break;
  }
  if constexpr (std::is_same_v<T, float>) {
    // f32/bf16/f16 transcendental math: the fused loop's block functions (runtime/math/block_ops.h:
    // vmath exp/tanh/erf/logistic/log, Eigen's packet log1p/expm1), computed in f32 and rounded on
    // store, so fused and unfused results agree bit for bit.
    const Opcode op = instr.opcode();
    if (op == Opcode::kExp || op == Opcode::kLog || op == Opcode::kLog1p || op == Opcode::kExpm1 ||
        op == Opcode::kTanh || op == Opcode::kLogistic || op == Opcode::kErf) {
      const auto* in = a.as<typename Tr::Storage>();
      auto* out = o.as<typename Tr::Storage>();
      Run(pool, o.element_count(), [&](int64_t lo, int64_t hi) {
        constexpr int64_t kChunk = 1024;
        alignas(64) float x[kChunk], y[kChunk];
        for (int64_t c = lo; c < hi; c += kChunk) {
          const int64_t m = std::min(kChunk, hi - c);
          if constexpr (std::is_same_v<typename Tr::Storage, float>) {
            fused::UnaryFloat<float>(op, in + c, out + c, m);
          } else {
            for (int64_t i = 0; i < m; ++i) x[i] = Tr::Load(in[c + i]);
            fused::UnaryFloat<float>(op, x, y, m);
            for (int64_t i = 0; i < m; ++i) out[c + i] = Tr::Store(y[i]);
          }
        }
      });
      return absl::OkStatus();
    }
  }
  if constexpr (kIsFloat<T> || kIsComplex<T>) {
    switch (instr.opcode()) {
      case Opcode::kExp: return same([](T x) { return std::exp(x); });
      case Opcode::kLog: return same([](T x) { return std::log(x); });
      case Opcode::kSqrt: return same([](T x) { return std::sqrt(x); });
      case Opcode::kRsqrt: return same([](T x) { return T(1) / std::sqrt(x); });
      case Opcode::kTanh: return same([](T x) { return std::tanh(x); });
      case Opcode::kSin: return same([](T x) { return std::sin(x); });
      case Opcode::kCos: return same([](T x) { return std::cos(x); });
      case Opcode::kTan: return same([](T x) { return std::tan(x); });
      case Opcode::kAcos: return same([](T x) { return std::acos(x); });
      case Opcode::kAtan: return same([](T x) { return std::atan(x); });
      case Opcode::kAcosh: return same([](T x) { return std::acosh(x); });
      case Opcode::kAsin: return same([](T x) { return std::asin(x); });
      case Opcode::kAsinh: return same([](T x) { return std::asinh(x); });
      case Opcode::kAtanh: return same([](T x) { return std::atanh(x); });
      case Opcode::kCosh: return same([](T x) { return std::cosh(x); });
      case Opcode::kSinh: return same([](T x) { return std::sinh(x); });
      case Opcode::kLogistic: return same([](T x) { return Logistic(x); });
      case Opcode::kExpm1:
        if constexpr (kIsFloat<T>) return same([](T x) { return std::expm1(x); });
        else return same([](T x) { return std::exp(x) - T(1); });
      case Opcode::kLog1p:
        if constexpr (kIsFloat<T>) return same([](T x) { return std::log1p(x); });
        else return same([](T x) { return std::log(x + T(1)); });
      default: break;
    }
  }
  if constexpr (kIsFloat<T>) {
    switch (instr.opcode()) {
      case Opcode::kCbrt: return same([](T x) { return std::cbrt(x); });
      case Opcode::kCeil: return same([](T x) { return std::ceil(x); });
      case Opcode::kFloor: return same([](T x) { return std::floor(x); });
      case Opcode::kErf: return same([](T x) { return std::erf(x); });
      case Opcode::kRoundNearestAfz: return same([](T x) { return RoundAfz(x); });
      case Opcode::kRoundNearestEven: return same([](T x) { return RoundEven(x); });
      case Opcode::kReducePrecision: {
        int eb = static_cast<int>(instr.attrs().exponent_bits), mb = static_cast<int>(instr.attrs().mantissa_bits);
        if (eb < 1 || mb < 0) return KernelError(instr, "bad exponent_bits/mantissa_bits");
        return same([eb, mb](T x) { return ReducePrecision(x, eb, mb); });
      }
      default: break;
    }
  }
  return KernelError(instr, absl::StrCat("not defined for element type ",
                                         std::string(PrimitiveTypeName(Tag::kType))));
}

template <typename T> bool CompareValues(ComparisonDirection d, bool total, T x, T y) {
  if constexpr (kIsFloat<T>) {
    if (total) {
      auto kx = TotalOrderKey(x), ky = TotalOrderKey(y);
      return CompareValues(d, false, kx, ky);
    }
  }
  if constexpr (kIsComplex<T>) {
    if (d == ComparisonDirection::kEq) return x == y;
    return x != y;
  } else {
    switch (d) {
      case ComparisonDirection::kEq: return x == y;
      case ComparisonDirection::kNe: return x != y;
      case ComparisonDirection::kGe: return x >= y;
      case ComparisonDirection::kGt: return x > y;
      case ComparisonDirection::kLe: return x <= y;
      case ComparisonDirection::kLt: return x < y;
    }
    return false;
  }
}

template <typename Tag>
absl::Status Binary(const Instruction& instr, const Buffer& a, const Buffer& b, Buffer& o, ThreadPool* pool) {
  using Tr = typename Tag::Traits;
  using T = typename Tr::Compute;
  auto same = [&](auto f) { return Map2<Tr, Tr>(a, b, o, pool, f); };
  Opcode op = instr.opcode();
  if (op == Opcode::kCompare) {
    if (!instr.attrs().comparison) return KernelError(instr, "compare without direction");
    ComparisonDirection d = *instr.attrs().comparison;
    if constexpr (kIsComplex<T>) {
      if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) return KernelError(instr, "ordered compare of complex");
    }
    bool total = instr.attrs().comparison_type == "TOTALORDER";
    return Map2<Tr, PredTraits>(a, b, o, pool, [d, total](T x, T y) { return CompareValues(d, total, x, y); });
  }
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kAnd: case Opcode::kMinimum: case Opcode::kMultiply: return same([](T x, T y) { return x && y; });
      case Opcode::kOr: case Opcode::kMaximum: case Opcode::kAdd: return same([](T x, T y) { return x || y; });
      case Opcode::kXor: case Opcode::kSubtract: return same([](T x, T y) { return x != y; });
      default: break;
    }
  } else if constexpr (kIsInt<T>) {
    switch (op) {
      case Opcode::kAdd: return same([](T x, T y) { return WrapAdd(x, y); });
      case Opcode::kSubtract: return same([](T x, T y) { return WrapSub(x, y); });
      case Opcode::kMultiply: return same([](T x, T y) { return WrapMul(x, y); });
      case Opcode::kDivide: return same([](T x, T y) { return IntDiv(x, y); });
      case Opcode::kRemainder: return same([](T x, T y) { return IntRem(x, y); });
      case Opcode::kMaximum: return same([](T x, T y) { return x > y ? x : y; });
      case Opcode::kMinimum: return same([](T x, T y) { return x < y ? x : y; });
      case Opcode::kAnd: return same([](T x, T y) { return static_cast<T>(x & y); });
      case Opcode::kOr: return same([](T x, T y) { return static_cast<T>(x | y); });
      case Opcode::kXor: return same([](T x, T y) { return static_cast<T>(x ^ y); });
      case Opcode::kPower: return same([](T x, T y) { return IntPow(x, y); });
      case Opcode::kShiftLeft: return same([](T x, T y) { return ShiftLeft(x, y); });
      case Opcode::kShiftRightLogical:
        if constexpr (NarrowBits<Tr>::value > 0) {
          return same([](T x, T y) { return NarrowShiftRightLogical<NarrowBits<Tr>::value>(x, y); });
        } else {
          return same([](T x, T y) { return ShiftRightLogical(x, y); });
        }
      case Opcode::kShiftRightArithmetic: return same([](T x, T y) { return ShiftRightArithmetic(x, y); });
      case Opcode::kMulhi: return same([](T x, T y) { return MulHi<NarrowBits<Tr>::value>(x, y); });
      default: break;
    }
  } else {
    switch (op) {
      case Opcode::kAdd: return same([](T x, T y) { return x + y; });
      case Opcode::kSubtract: return same([](T x, T y) { return x - y; });
      case Opcode::kMultiply: return same([](T x, T y) { return x * y; });
      case Opcode::kDivide: return same([](T x, T y) { return x / y; });
      case Opcode::kPower: return same([](T x, T y) { return std::pow(x, y); });
      default: break;
    }
    if constexpr (kIsFloat<T>) {
      switch (op) {
        case Opcode::kMaximum: return same([](T x, T y) { return FMax(x, y); });
        case Opcode::kMinimum: return same([](T x, T y) { return FMin(x, y); });
        case Opcode::kRemainder: return same([](T x, T y) { return std::fmod(x, y); });
        case Opcode::kAtan2: return same([](T x, T y) { return std::atan2(x, y); });
        case Opcode::kComplex:
          return Map2<Tr, typename ComplexTraitsOf<T>::type>(a, b, o, pool,
                                                             [](T x, T y) { return std::complex<T>(x, y); });
        default: break;
      }
    }
    if constexpr (kIsComplex<T>) {
      // XLA's complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), all complex arithmetic.
      if (op == Opcode::kAtan2) {
        return same([](T y, T x) { return T(0, -1) * std::log((x + T(0, 1) * y) / std::sqrt(x * x + y * y)); });
      }
    }
  }
  return KernelError(instr, absl::StrCat("not defined for element type ",
                                         std::string(PrimitiveTypeName(Tag::kType))));
}

// select(pred, on_true, on_false) and clamp(min, x, max); scalar pred/bounds broadcast.
template <typename Tag>
absl::Status Ternary(const Instruction& instr, const Buffer& p, const Buffer& a, const Buffer& b,
                     Buffer& o, ThreadPool* pool) {
  using Tr = typename Tag::Traits;
  using T = typename Tr::Compute;
  using S = typename Tr::Storage;
  int64_t n = o.element_count();
  if (instr.opcode() == Opcode::kSelect) {
    const uint8_t* pr = p.as<uint8_t>();
    const S* x = a.as<S>();
    const S* y = b.as<S>();
    S* out = o.as<S>();
    int64_t sp = p.element_count() == n ? 1 : 0, sx = a.element_count() == n ? 1 : 0, sy = b.element_count() == n ? 1 : 0;
    Run(pool, n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = pr[i * sp] ? x[i * sx] : y[i * sy];
    });
    return absl::OkStatus();
  }
  if constexpr (kIsComplex<T>) {
    return KernelError(instr, "clamp of complex");
  } else {
    const S* lo_v = p.as<S>();
    const S* x = a.as<S>();
    const S* hi_v = b.as<S>();
    S* out = o.as<S>();
    int64_t sl = p.element_count() == n ? 1 : 0, sx = a.element_count() == n ? 1 : 0, sh = b.element_count() == n ? 1 : 0;
    Run(pool, n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        T v = Tr::Load(x[i * sx]), l = Tr::Load(lo_v[i * sl]), h = Tr::Load(hi_v[i * sh]);
        T r;
        if constexpr (kIsFloat<T>) r = FMin(FMax(v, l), h);
        else r = std::min(std::max(v, l), h);
        out[i] = Tr::Store(r);
      }
    });
    return absl::OkStatus();
  }
}

absl::Status CheckOperandCounts(const Instruction& instr, const std::vector<const Value*>& ops,
                                int64_t n, size_t arity) {
  if (ops.size() != arity) return KernelError(instr, "wrong operand count");
  for (const Value* v : ops) {
    if (!v->is_array()) return KernelError(instr, "operand is not an array");
    int64_t c = v->array->element_count();
    if (c != n && c != 1) return KernelError(instr, "operand element count does not match the result");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Value> ElementwiseKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                        KernelContext& ctx) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return KernelError(instr, "elementwise result must be an array");
  Value out = Value::Array(NewOutputBuffer(shape));  // may take a donated operand (core/value.h)
  Buffer& o = *out.array;
  int64_t n = o.element_count();
  Opcode op = instr.opcode();
  ThreadPool* pool = ctx.pool;
  if (op == Opcode::kCopy) {
    HLOX_RETURN_IF_ERROR(CheckOperandCounts(instr, operands, n, 1));
    if (o.byte_size() != operands[0]->array->byte_size()) return KernelError(instr, "copy size mismatch");
    if (o.byte_size() > 0) std::memcpy(o.data(), operands[0]->array->data(), o.byte_size());
    return out;
  }
  absl::Status st;
  if (IsElementwiseUnary(op)) {
    HLOX_RETURN_IF_ERROR(CheckOperandCounts(instr, operands, n, 1));
    const Buffer& a = *operands[0]->array;
    st = DispatchElementwise(op, a.shape().element_type(), [&](auto tag) {
      return Unary<decltype(tag)>(instr, a, o, pool);
    });
  } else if (IsElementwiseBinary(op)) {
    HLOX_RETURN_IF_ERROR(CheckOperandCounts(instr, operands, n, 2));
    const Buffer& a = *operands[0]->array;
    const Buffer& b = *operands[1]->array;
    if (a.shape().element_type() != b.shape().element_type()) return KernelError(instr, "operand types differ");
    st = DispatchElementwise(op, a.shape().element_type(), [&](auto tag) {
      return Binary<decltype(tag)>(instr, a, b, o, pool);
    });
  } else {
    HLOX_RETURN_IF_ERROR(CheckOperandCounts(instr, operands, n, 3));
    const Buffer& p = *operands[0]->array;
    const Buffer& a = *operands[1]->array;
    const Buffer& b = *operands[2]->array;
    if (a.shape().element_type() != shape.element_type()) return KernelError(instr, "operand type differs from result");
    st = DispatchElementwise(op, shape.element_type(), [&](auto tag) {
      return Ternary<decltype(tag)>(instr, p, a, b, o, pool);
    });
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace hlox::rt
