// Inline bf16 and f16 conversions for the fused loop. ir/literal.h's FloatToBf16 /
// Bf16ToFloat / FloatToHalf / HalfToFloat are out-of-line calls, which keep a block loop from
// vectorizing and cost a call per element per op; these are the same conversions (round to
// nearest even, denormals, infinities, NaN kept quiet on narrowing and kept as it is on
// widening), written so that they inline: bf16 as bit operations the compiler vectorizes, f16
// (AVX-512 builds) with the hardware's vcvtps2ph / vcvtph2ps, whose only difference from
// literal.h, the quieting of a signaling NaN on widening, is undone. Results are bit-identical
// to literal.h's (f16 checked exhaustively over every input when written).
#pragma once

#include <bit>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "ir/literal.h"

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

// The half-precision types the fused register path keeps in f32 registers.
enum HalfType : uint8_t { kNotHalf = 0, kHalfBf16 = 1, kHalfF16 = 2 };

#if defined(__AVX512F__)
// 16 f16 values (bits) widened to f32, as literal.h's HalfToFloat (a signaling NaN stays one).
inline __m512 F16x16ToF32(__m256i h) {
  const __m512 f = _mm512_cvtph_ps(h);
  const __m512i w = _mm512_cvtepu16_epi32(h);
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(w, _mm512_set1_epi32(0x7fff)),
                                                _mm512_set1_epi32(0x7c00));
  if (nan == 0) return f;
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16);
  const __m512i mant = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x3ff)), 13);
  const __m512i bits = _mm512_or_si512(_mm512_or_si512(sign, mant), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_mov_ps(f, nan, _mm512_castsi512_ps(bits));
}

// 16 floats narrowed to f16 bits, as literal.h's FloatToHalf (nearest even).
inline __m256i F32x16ToF16(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

// Each lane rounded to f16 precision, as HalfToFloat(FloatToHalf(x)).
inline __m512 RoundF16x16(__m512 v) { return F16x16ToF32(F32x16ToF16(v)); }

// 16 bf16 values (bits) widened to f32.
inline __m512 Bf16x16ToF32(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

// 16 floats narrowed to bf16 bits, as FloatToBf16Bits.
inline __m256i F32x16ToBf16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __m512i nan = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
  const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(r, is_nan, nan));
}

// d[i] = the float of half value s[i] (bf16 or f16 bits, per `type`), i < n.
inline void HalfToF32(HalfType type, const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  if (type == kHalfF16) {
    for (; i + 16 <= n; i += 16) {
      _mm512_storeu_ps(d + i, F16x16ToF32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
    }
    for (; i < n; ++i) d[i] = HalfToFloat(s[i]);
    return;
  }
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(d + i, Bf16x16ToF32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
  }
  for (; i < n; ++i) d[i] = Bf16BitsToFloat(s[i]);
}

// d[i] = s[i] narrowed to the half type (bf16 or f16 bits), i < n.
inline void F32ToHalf(HalfType type, const float* s, uint16_t* d, int64_t n) {
  int64_t i = 0;
  const bool f16 = type == kHalfF16;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(s + i);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), f16 ? F32x16ToF16(v) : F32x16ToBf16(v));
  }
  for (; i < n; ++i) d[i] = f16 ? FloatToHalf(s[i]) : FloatToBf16Bits(s[i]);
}
#endif

}  // namespace hlox::rt::fused
