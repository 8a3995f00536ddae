// stochastic-convert: a floating-point operand (f16, bf16, f32, f64) rounded to a signed
// integer (s8, s16, s32, s64) up or down at random, as XLA's evaluator defines it. The second
// operand holds unsigned random bits of the operand's width (u16, u32, u64). For |x| with
// integer part t and fraction f != 0, the fraction is read as a fixed-point number
// F = floor(f * 2^bits), and the magnitude rounds up to t + 1 when random < F, else stays t;
// the sign is then restored. So P(round up) = F / 2^bits ~ f and the mean of many conversions
// approaches x. Special cases: NaN -> 0; +-inf and values at or past the result's range
// saturate to its max/min; a negative value whose magnitude rounds up past max gives min.
// XLA defines no float result for this opcode; such modules are refused as Unimplemented.
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

constexpr int64_t kGrain = 16384;

// Applies XLA's rule to one element. `x` is the operand value (exact in double for every
// operand type), `random` the random bits, `bits` their width.
template <typename R>
R StochasticRound(double x, uint64_t random, int bits) {
  constexpr R kMax = std::numeric_limits<R>::max(), kMin = std::numeric_limits<R>::min();
  if (std::isnan(x)) return 0;
  const bool negative = std::signbit(x);
  if (std::isinf(x)) return negative ? kMin : kMax;
  // No operand type holds a value strictly between max and max + 1, so comparing in double
  // gives the same answer as XLA's comparison in the operand type.
  if (x >= static_cast<double>(kMax)) return kMax;
  if (x <= static_cast<double>(kMin)) return kMin;
  const double a = std::fabs(x);
  R truncated = static_cast<R>(a);
  const double fraction = a - static_cast<double>(truncated);  // exact
  if (fraction != 0.0) {
    const uint64_t fixed = static_cast<uint64_t>(std::ldexp(fraction, bits));
    if (random < fixed) {
      if (truncated == kMax) return kMin;  // only reachable for negative x in (min, min + 1)
      ++truncated;
    }
  }
  return negative ? static_cast<R>(-truncated) : truncated;
}

// The random operand's type for an operand type, or kTuple (no array type) when there is none.
PrimitiveType RandomTypeFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      return PrimitiveType::kU16;
    case PrimitiveType::kF32:
      return PrimitiveType::kU32;
    case PrimitiveType::kF64:
      return PrimitiveType::kU64;
    default:
      return PrimitiveType::kTuple;
  }
}

uint64_t LoadRandom(const Buffer& r, int64_t i) {
  switch (r.shape().element_type()) {
    case PrimitiveType::kU16:
      return r.as<uint16_t>()[i];
    case PrimitiveType::kU32:
      return r.as<uint32_t>()[i];
    default:
      return r.as<uint64_t>()[i];
  }
}

template <typename R>
void Fill(const Buffer& x, const Buffer& r, Buffer& out, KernelContext& ctx) {
  const int bits = static_cast<int>(PrimitiveBitWidth(r.shape().element_type()));
  R* o = out.as<R>();
  KernelParallelFor(ctx, out.element_count(), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) o[i] = StochasticRound<R>(LoadDouble(x, i), LoadRandom(r, i), bits);
  });
}

}  // namespace

absl::StatusOr<Value> StochasticConvertKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                              KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* x, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* r, ArrayOperand(instr, operands, 1));
  const Shape& os = instr.shape();
  const PrimitiveType want_random = RandomTypeFor(x->shape().element_type());
  if (want_random == PrimitiveType::kTuple) return KernelError(instr, "operand must be f16, bf16, f32 or f64");
  if (r->shape().element_type() != want_random) {
    return KernelError(instr, "random bits must be unsigned integers of the operand's width");
  }
  if (!os.IsArray() || r->shape().dims() != x->shape().dims() || os.dims() != x->shape().dims()) {
    return KernelError(instr, "operand, random bits and result must share dims");
  }
  Value out = NewArray(os);
  switch (os.element_type()) {
    case PrimitiveType::kS8: Fill<int8_t>(*x, *r, *out.array, ctx); break;
    case PrimitiveType::kS16: Fill<int16_t>(*x, *r, *out.array, ctx); break;
    case PrimitiveType::kS32: Fill<int32_t>(*x, *r, *out.array, ctx); break;
    case PrimitiveType::kS64: Fill<int64_t>(*x, *r, *out.array, ctx); break;
    default:
      return absl::UnimplementedError(absl::StrCat("stochastic-convert ", instr.name(), ": to ",
                                                   std::string(PrimitiveTypeName(os.element_type())),
                                                   " is not defined (XLA converts to s8, s16, s32 or s64)"));
  }
  return out;
}

}  // namespace hlox::rt
