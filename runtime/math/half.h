// Inline bf16 and f16 conversions for the fused loop. ir/literal.h's FloatToBf16 /
// Bf16ToFloat / FloatToHalf / HalfToFloat are out-of-line calls, which keep a block loop from
// vectorizing and cost a call per element per op; these are the same conversions (round to
// nearest even, denormals, infinities, NaN kept quiet on narrowing and kept as it is on
// widening), written so that they inline: bf16 as bit operations the compiler vectorizes; the
// array forms run the active level's vector conversions (F16C's vcvtps2ph / vcvtph2ps on AVX2
// and AVX-512, whose only difference from literal.h, the quieting of a signaling NaN on
// widening, is undone). Results are bit-identical to literal.h's (f16 checked exhaustively
// over every input, tests/fusion/fused_half_test.cc).
#pragma once

#include <bit>
#include <cstdint>

#include "ir/literal.h"
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt::fused {

// The float a bf16 bit pattern holds.
inline float Bf16BitsToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// f rounded to bf16 (nearest even; a NaN stays a quiet NaN), as bits.
inline uint16_t FloatToBf16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// f rounded to bf16 precision, as a float.
inline float RoundBf16(float f) { return Bf16BitsToFloat(FloatToBf16Bits(f)); }

// x[i] rounded to bf16 precision in place, i < n.
inline void RoundBf16InPlace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = RoundBf16(x[i]);
}

// The half-precision types the fused register path keeps in f32 registers.
enum HalfType : uint8_t { kNotHalf = 0, kHalfBf16 = 1, kHalfF16 = 2 };

// The half type of element type t (kNotHalf for anything but bf16 and f16).
inline HalfType HalfTypeOf(PrimitiveType t) {
  return t == PrimitiveType::kBF16 ? kHalfBf16 : t == PrimitiveType::kF16 ? kHalfF16 : kNotHalf;
}

// d[i] = the float of half value s[i] (bf16 or f16 bits, per `type`), i < n: the active
// level's vector conversion (isa/isa_kernels.h), bit-identical to the scalar ones.
inline void HalfToF32(HalfType type, const uint16_t* s, float* d, int64_t n) { Kernels().half_to_f32(type, s, d, n); }

// d[i] = s[i] narrowed to the half type (bf16 or f16 bits), i < n.
inline void F32ToHalf(HalfType type, const float* s, uint16_t* d, int64_t n) { Kernels().f32_to_half(type, s, d, n); }

// x[i] rounded to f16 precision in place (HalfToFloat(FloatToHalf(x[i]))), i < n.
inline void RoundF16InPlace(float* x, int64_t n) { Kernels().round_f16(x, n); }

}  // namespace hlox::rt::fused
