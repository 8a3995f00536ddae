// Inline bf16 conversions for the fused loop. ir/literal.h's FloatToBf16 / Bf16ToFloat are
// out-of-line calls, which keep a block loop from vectorizing and cost a call per element per
// op; these are the same bit operations (round to nearest even, NaN kept quiet), written so
// that the compiler inlines and vectorizes them. Results are bit-identical to literal.h's.
#pragma once

#include <bit>
#include <cstdint>

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

// d[i] = the float of bf16 s[i], i < n.
inline void Bf16ToF32(const uint16_t* s, float* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = Bf16BitsToFloat(s[i]);
}

// d[i] = s[i] rounded to bf16, i < n.
inline void F32ToBf16(const float* s, uint16_t* d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = FloatToBf16Bits(s[i]);
}

// x[i] rounded to bf16 precision in place, i < n.
inline void RoundBf16InPlace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = RoundBf16(x[i]);
}

}  // namespace hlox::rt::fused
