// The AVX2+FMA vector type of the per-level kernels (runtime/isa/isa_kernels.h): 8 f32 lanes, masks as
// all-ones/all-zeros lanes. Include only inside an AVX2 target pragma
// (runtime/isa/level_avx2.cc).
#pragma once

#include <immintrin.h>

#include <cstdint>

#ifndef HLOX_SIMD_NS
#error "define HLOX_SIMD_NS (the level's namespace) before including a runtime/isa/simd header"
#endif

namespace hlox::rt::simd::HLOX_SIMD_NS {

struct Avx2 {
  using V = __m256;
  using VI = __m256i;
  using M = __m256;  // a lane is all ones (true) or all zeros
  static constexpr int kLanes = 8;

  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static V LoadAligned(const float* p) { return _mm256_load_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void StoreAligned(float* p, V v) { _mm256_store_ps(p, v); }
  static void Stream(float* p, V v) { _mm256_stream_ps(p, v); }
  // A lane mask of the first n lanes (0 <= n <= 8), as vmaskmovps takes it.
  static VI FirstN(int64_t n) {
    const int32_t k = static_cast<int32_t>(n < 0 ? 0 : n > 8 ? 8 : n);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  // The first n lanes from p, zero above; masked lanes are not read (no fault past the end).
  static V LoadN(const float* p, int64_t n) { return _mm256_maskload_ps(p, FirstN(n)); }
  static void StoreN(float* p, V v, int64_t n) { _mm256_maskstore_ps(p, FirstN(n), v); }

  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float f) { return _mm256_set1_ps(f); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V Fnma(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V Sqrt(V a) { return _mm256_sqrt_ps(a); }
  static V RoundNearest(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V Floor(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static V Ceil(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
  static V And(V a, V b) { return _mm256_and_ps(a, b); }
  static V Or(V a, V b) { return _mm256_or_ps(a, b); }
  static V Xor(V a, V b) { return _mm256_xor_ps(a, b); }
  static V AndNot(V a, V b) { return _mm256_andnot_ps(a, b); }
  // p * 2^n for integral n in [-150, 128] as two exact power-of-two factors: p * 2^(n>>1) is
  // exact (p in [0.5, 2)), the second product rounds once, so the result is vscalefps's.
  static V Scale2(V p, V n) {
    const VI ni = _mm256_cvtps_epi32(n);
    const VI n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const VI bias = _mm256_set1_epi32(127);
    const V s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const V s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }

  static M Lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M Gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M IsNan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static M OrMask(M a, M b) { return _mm256_or_ps(a, b); }
  static bool Any(M m) { return _mm256_movemask_ps(m) != 0; }
  static V Select(M m, V t, V f) { return _mm256_blendv_ps(f, t, m); }

  static VI AsInt(V a) { return _mm256_castps_si256(a); }
  static V AsFloat(VI a) { return _mm256_castsi256_ps(a); }
  static VI Set1I(int32_t x) { return _mm256_set1_epi32(x); }
  static VI AddI(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI SubI(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI AndI(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VI OrI(VI a, VI b) { return _mm256_or_si256(a, b); }
  template <int kBits> static VI ShiftRightLogical(VI a) { return _mm256_srli_epi32(a, kBits); }
  template <int kBits> static VI ShiftRightArith(VI a) { return _mm256_srai_epi32(a, kBits); }
  template <int kBits> static VI ShiftLeft(VI a) { return _mm256_slli_epi32(a, kBits); }
  static V ToFloat(VI a) { return _mm256_cvtepi32_ps(a); }
  static VI SelectI(M m, VI t, VI f) { return _mm256_castps_si256(_mm256_blendv_ps(AsFloat(f), AsFloat(t), m)); }

  // 8 f16 values widened, as ir/literal.h's HalfToFloat (signaling NaNs rebuilt from their
  // bits: vcvtph2ps would quiet them).
  static V LoadF16(const uint16_t* p) { return WidenF16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static V WidenF16(__m128i h) {
    const __m256 f = _mm256_cvtph_ps(h);
    const __m256i w = _mm256_cvtepu16_epi32(h);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7fff)), _mm256_set1_epi32(0x7c00));
    if (_mm256_testz_si256(nan, nan)) return f;
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16);
    const __m256i mant = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x3ff)), 13);
    const __m256i bits = _mm256_or_si256(_mm256_or_si256(sign, mant), _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_ps(f, _mm256_castsi256_ps(bits), _mm256_castsi256_ps(nan));
  }
  // 8 floats narrowed to f16 bits (nearest even), as literal.h's FloatToHalf.
  static void StoreF16(uint16_t* p, V v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  static V LoadBf16(const uint16_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  // 8 floats narrowed to bf16 bits (nearest even, NaN made quiet).
  static void StoreBf16(uint16_t* p, V v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    const __m256i bits = SelectI(IsNan(v), nan, r);  // every lane <= 0xffff: packs exactly
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(packed));
  }
  static V RoundF16(V v) { return WidenF16(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }
};

}  // namespace hlox::rt::simd::HLOX_SIMD_NS
