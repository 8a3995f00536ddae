// The AVX-512 vector type of the per-level kernels (runtime/isa/isa_kernels.h): 16 f32 lanes, __mmask16
// masks. Include only inside an AVX-512 target pragma (runtime/isa/level_avx512.cc).
#pragma once

#include <immintrin.h>

#include <cstdint>

#ifndef HLOX_SIMD_NS
#error "define HLOX_SIMD_NS (the level's namespace) before including a runtime/isa/simd header"
#endif

namespace hlox::rt::simd::HLOX_SIMD_NS {

struct Avx512 {
  using V = __m512;
  using VI = __m512i;
  using M = __mmask16;
  static constexpr int kLanes = 16;

  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static V LoadAligned(const float* p) { return _mm512_load_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void StoreAligned(float* p, V v) { _mm512_store_ps(p, v); }
  static void Stream(float* p, V v) { _mm512_stream_ps(p, v); }
  // The first n lanes (0 <= n <= 16) from p, zero above; reads only those lanes.
  static M FirstN(int64_t n) {
    return n >= 16 ? M(0xFFFF) : n <= 0 ? M(0) : static_cast<M>((1u << n) - 1);
  }
  static V LoadN(const float* p, int64_t n) { return _mm512_maskz_loadu_ps(FirstN(n), p); }
  static void StoreN(float* p, V v, int64_t n) { _mm512_mask_storeu_ps(p, FirstN(n), v); }

  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float f) { return _mm512_set1_ps(f); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  // x86 min/max: b when either is NaN.
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a*b + c, one rounding
  static V Fnma(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  static V Sqrt(V a) { return _mm512_sqrt_ps(a); }
  static V RoundNearest(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Floor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static V Ceil(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
  static V And(V a, V b) { return _mm512_and_ps(a, b); }
  static V Or(V a, V b) { return _mm512_or_ps(a, b); }
  static V Xor(V a, V b) { return _mm512_xor_ps(a, b); }
  static V AndNot(V a, V b) { return _mm512_andnot_ps(a, b); }  // ~a & b
  // p * 2^n for integral n in [-150, 128], rounded once (gradual underflow, overflow to inf).
  static V Scale2(V p, V n) { return _mm512_scalef_ps(p, n); }

  static M Lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M Gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M IsNan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static M OrMask(M a, M b) { return static_cast<M>(a | b); }
  static bool Any(M m) { return m != 0; }
  // m ? t : f per lane.
  static V Select(M m, V t, V f) { return _mm512_mask_blend_ps(m, f, t); }

  static VI AsInt(V a) { return _mm512_castps_si512(a); }
  static V AsFloat(VI a) { return _mm512_castsi512_ps(a); }
  static VI Set1I(int32_t x) { return _mm512_set1_epi32(x); }
  static VI AddI(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VI SubI(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI AndI(VI a, VI b) { return _mm512_and_si512(a, b); }
  static VI OrI(VI a, VI b) { return _mm512_or_si512(a, b); }
  template <int kBits> static VI ShiftRightLogical(VI a) { return _mm512_srli_epi32(a, kBits); }
  template <int kBits> static VI ShiftRightArith(VI a) { return _mm512_srai_epi32(a, kBits); }
  template <int kBits> static VI ShiftLeft(VI a) { return _mm512_slli_epi32(a, kBits); }
  static V ToFloat(VI a) { return _mm512_cvtepi32_ps(a); }
  static VI SelectI(M m, VI t, VI f) { return _mm512_mask_blend_epi32(m, f, t); }

  // 16 f16 values widened, as ir/literal.h's HalfToFloat (vcvtph2ps quiets a signaling NaN;
  // literal.h keeps it signaling, so NaN lanes are rebuilt from their bits).
  static V LoadF16(const uint16_t* p) { return WidenF16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
  static V WidenF16(__m256i h) {
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
  // 16 floats narrowed to f16 bits (nearest even), as literal.h's FloatToHalf.
  static void StoreF16(uint16_t* p, V v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static V LoadBf16(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  // 16 floats narrowed to bf16 bits (nearest even, NaN made quiet).
  static void StoreBf16(uint16_t* p, V v) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __m512i nan = _mm512_or_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
    const __m512i bits = _mm512_mask_mov_epi32(r, IsNan(v), nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(bits));
  }
  // Each lane rounded to f16 precision, as HalfToFloat(FloatToHalf(x)).
  static V RoundF16(V v) { return WidenF16(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
};

}  // namespace hlox::rt::simd::HLOX_SIMD_NS
