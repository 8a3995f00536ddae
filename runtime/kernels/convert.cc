// convert and bitcast-convert across all element types. convert follows XLA: float -> int
// truncates toward zero and saturates, NaN -> 0; anything -> pred is x != 0; int -> int wraps;
// complex -> real keeps the real part; f16/bf16 round to nearest even. Types without native
// traits (f8 variants, s4/u4/s2/u2) go through Literal's encoders. bitcast-convert reinterprets
// bytes: with different widths the last dimension grows or shrinks by the width ratio, which
// on dense little-endian row-major buffers is a plain byte copy.
#include <cmath>
#include <cstring>
#include <limits>

#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/elementwise_scalar.h"

namespace hlox::rt {
namespace {

constexpr int64_t kGrain = 16384;

template <typename To, typename From> To ConvertScalar(From x) {
  if constexpr (scalar::kIsComplex<From>) {
    if constexpr (scalar::kIsComplex<To>) {
      return To(static_cast<typename To::value_type>(x.real()), static_cast<typename To::value_type>(x.imag()));
    } else {
      return ConvertScalar<To>(x.real());
    }
  } else if constexpr (scalar::kIsComplex<To>) {
    return To(ConvertScalar<typename To::value_type>(x), 0);
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return 0;
    if (x <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (x >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(x);
  } else {
    return static_cast<To>(x);
  }
}

template <typename InTr, typename OutTr>
void ConvertLoop(const Buffer& in, Buffer& out, ThreadPool* pool) {
  const auto* src = in.as<typename InTr::Storage>();
  auto* dst = out.as<typename OutTr::Storage>();
  using To = typename OutTr::Compute;
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) dst[i] = OutTr::Store(ConvertScalar<To>(InTr::Load(src[i])));
  };
  int64_t n = out.element_count();
  if (pool && n > kGrain) pool->ParallelFor(n, kGrain, body); else body(0, n);
}

bool HasTraits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64: case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64: case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64: case PrimitiveType::kC64: case PrimitiveType::kC128:
      return true;
    default:
      return false;
  }
}

// Slow path through Literal's per-type encoders (f8 variants, sub-byte ints).
void ConvertViaLiteral(const Buffer& in, Buffer& out) {
  Literal src(in.shape()), dst(out.shape());
  if (src.byte_size() > 0) std::memcpy(src.data(), in.data(), src.byte_size());
  PrimitiveType from = in.shape().element_type(), to = out.shape().element_type();
  for (int64_t i = 0; i < src.element_count(); ++i) {
    if (IsFloatingPoint(to) || IsComplex(to)) {
      dst.SetFromDouble(i, IsComplex(from) ? src.GetAsComplex(i).real() : src.GetAsDouble(i));
    } else if (IsPred(to)) {
      dst.SetFromInt64(i, src.GetAsDouble(i) != 0);
    } else {
      double d = IsComplex(from) ? src.GetAsComplex(i).real() : src.GetAsDouble(i);
      int64_t v;
      if (IsFloatingPoint(from)) {
        // Saturate to the destination's range (narrow ints would otherwise wrap on store).
        const int bits = PrimitiveBitWidth(to);
        const double hi = bits >= 64 ? 9.2e18 : std::ldexp(1.0, IsSignedInt(to) ? bits - 1 : bits) - 1;
        const double lo = IsSignedInt(to) ? (bits >= 64 ? -9.2e18 : -hi - 1) : 0.0;
        v = std::isnan(d) ? 0 : static_cast<int64_t>(std::clamp(d, lo, hi));
      } else {
        v = IsUnsignedInt(from) ? static_cast<int64_t>(src.GetAsUint64(i)) : src.GetAsInt64(i);
      }
      dst.SetFromInt64(i, v);
    }
  }
  if (dst.byte_size() > 0) std::memcpy(out.data(), dst.data(), dst.byte_size());
}

}  // namespace

absl::StatusOr<Value> ConvertKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                    KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, operands, 0));
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.ElementCount() != in->element_count()) return KernelError(instr, "shape mismatch");
  Value out = NewArray(shape);
  PrimitiveType from = in->shape().element_type(), to = shape.element_type();
  if (from == to) {
    if (in->byte_size() > 0) std::memcpy(out.array->data(), in->data(), in->byte_size());
    return out;
  }
  if (!HasTraits(from) || !HasTraits(to)) {
    ConvertViaLiteral(*in, *out.array);
    return out;
  }
  HLOX_RETURN_IF_ERROR(DispatchType(from, "convert", [&](auto in_tag) {
    return DispatchType(to, "convert", [&](auto out_tag) {
      ConvertLoop<typename decltype(in_tag)::Traits, typename decltype(out_tag)::Traits>(*in, *out.array, ctx.pool);
      return absl::OkStatus();
    });
  }));
  return out;
}

absl::StatusOr<Value> BitcastConvertKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                           KernelContext&) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, operands, 0));
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return KernelError(instr, "result must be an array");
  Value out = NewArray(shape);
  int64_t in_bits = PrimitiveBitWidth(in->shape().element_type()) * in->element_count();
  int64_t out_bits = PrimitiveBitWidth(shape.element_type()) * shape.ElementCount();
  if (in_bits != out_bits || out.array->byte_size() != in->byte_size()) {
    return KernelError(instr, "bitcast-convert must keep the total bit count");
  }
  if (in->byte_size() > 0) std::memcpy(out.array->data(), in->data(), in->byte_size());
  return out;
}

}  // namespace hlox::rt
