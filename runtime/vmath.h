// Vector math for f32 blocks: exp and tanh written for AVX-512 (16 lanes a step, the tail as
// one masked step, so every element goes through the same instructions and results do not
// depend on where a block starts). exp reduces x = n*ln2 + r (|r| <= ln2/2), evaluates a
// degree-6 polynomial on r and scales by 2^n with vscalefps (exact overflow to inf, gradual
// underflow to denormals and 0). tanh is sign(x) * m / (m + 2) with m = e^(2|x|) - 1 computed as
// 2^n * (e^r - 1) + (2^n - 1) (no cancellation near 0: exact for tiny and denormal x, keeps
// -0), |x| clamped at 9.5 where it saturates to +-1.
// NaN passes through both. Measured error against a double reference over the full f32
// range (tests/runtime/vmath_test.cc): exp 0.96 ulp, tanh 2.47 ulp, logistic 2.52 ulp. Builds without
// AVX-512 run the same formulas one element at a time. Used by fused loops (exp, logistic:
// about 1.3x faster than Eigen's exp here; Eigen's tanh is about 1.4x faster than TanhF32, so
// fused tanh stays Eigen's) and by the unfused f32 kernels (exp, logistic). Per 16-lane
// vector in L1 (bench/fusion/kernel_bench.cc, TSC cycles on the 2.8 GHz Ice Lake bench machine):
// Exp16 ~7 (15 uops on 2 vector ports: near its floor), Tanh16 ~15.6, Eigen's tanh ~9.8 (its
// one vdivps alone ~6.4), so a divide-free rational tanh (rcp14 + Newton) would not be cheaper.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace hlox::rt::vmath {

// o[i] = exp(a[i]) for i < n (a and o may be the same array).
void ExpF32(const float* a, float* o, int64_t n);
// o[i] = tanh(a[i]) for i < n (a and o may be the same array).
void TanhF32(const float* a, float* o, int64_t n);
// o[i] = 1 / (1 + exp(-a[i])) for i < n, as e/(1+e) with e = exp(a[i]) for negative a[i]
// (no overflow of exp(-a)); a and o may be the same array.
void LogisticF32(const float* a, float* o, int64_t n);

// o[i] = sqrt(a[i]) for i < n, correctly rounded (IEEE; Eigen's AVX-512 sqrt is an rsqrt
// estimate plus one Newton step, off by an ulp and zero on denormals); a and o may alias.
void SqrtF32(const float* a, float* o, int64_t n);

// The scalar forms (the same formulas, for single values and builds without AVX-512).
float ExpScalar(float x);
float TanhScalar(float x);
float LogisticScalar(float x);

namespace coef {
// exp(r) = 1 + r + r^2 * P(r) on [-ln2/2, ln2/2] (P: Lawson-weighted minimax fit).
constexpr float kExpP0 = 0.49999994f, kExpP1 = 0.16666521f, kExpP2 = 0.041668389f,
                kExpP3 = 0.0083687101f, kExpP4 = 0.0013814613f;
constexpr float kLog2e = 1.44269504f;
constexpr float kLn2Hi = 0.693145752f;          // ln2 split: hi has 16 trailing zero bits
constexpr float kLn2Lo = 1.42860677e-06f;
constexpr float kExpHi = 89.0f, kExpLo = -104.0f;  // beyond: inf / 0 after scaling
constexpr float kTanhSat = 9.5f;  // tanh(9.5) rounds to 1 in f32
}  // namespace coef

#if defined(__AVX512F__)
// The 16-lane forms, for loops that evaluate whole expressions per register. (GCC 12 gives
// false -Wmaybe-uninitialized warnings in the inlined intrinsics: silence them per file.)
// x = n*ln2 + r with integral n and |r| <= ln2/2 (ln2 split in two for precision).
inline void ReduceLn2(__m512 x, __m512* n, __m512* r) {
  using namespace coef;
  *n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(kLog2e)),
                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  *r = _mm512_fnmadd_ps(*n, _mm512_set1_ps(kLn2Hi), x);
  *r = _mm512_fnmadd_ps(*n, _mm512_set1_ps(kLn2Lo), *r);
}

// P(r) with e^r - 1 ~ r + r^2 * P(r) on the reduced range.
inline __m512 ExpPoly(__m512 r) {
  using namespace coef;
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(kExpP4), r, _mm512_set1_ps(kExpP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP1));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP0));
}

// exp of 16 lanes.
inline __m512 Exp16(__m512 x) {
  using namespace coef;
  // min/max return their second operand when one is NaN: NaN lanes pass through.
  x = _mm512_max_ps(_mm512_set1_ps(kExpLo), _mm512_min_ps(_mm512_set1_ps(kExpHi), x));
  __m512 n, r;
  ReduceLn2(x, &n, &r);
  __m512 p = _mm512_fmadd_ps(ExpPoly(r), _mm512_mul_ps(r, r), r);
  p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

// tanh of 16 lanes.
inline __m512 Tanh16(__m512 x) {
  using namespace coef;
  const __m512 one = _mm512_set1_ps(1.0f);
  // Works on |x| (e^(2|x|) - 1 has no cancellation), clamped to kTanhSat (NaN lanes pass
  // through); u = 2|x| = n*ln2 + r.
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN));
  const __m512 c = _mm512_min_ps(_mm512_set1_ps(kTanhSat), _mm512_andnot_ps(sign, x));
  const __m512 u = _mm512_add_ps(c, c);
  __m512 n, r;
  ReduceLn2(u, &n, &r);
  // q = e^r - 1 = r + r^2 * P(r); e^u - 1 = 2^n * q + (2^n - 1), exact for r small.
  const __m512 q = _mm512_fmadd_ps(ExpPoly(r), _mm512_mul_ps(r, r), r);
  const __m512 s = _mm512_scalef_ps(one, n);
  const __m512 em = _mm512_fmadd_ps(s, q, _mm512_sub_ps(s, one));
  // tanh(x) = em / (em + 2): reciprocal estimate, then one residual correction of the quotient.
  const __m512 d = _mm512_add_ps(em, _mm512_set1_ps(2.0f));
  const __m512 y = _mm512_rcp14_ps(d);
  const __m512 t0 = _mm512_mul_ps(em, y);
  const __m512 t = _mm512_fmadd_ps(_mm512_fnmadd_ps(d, t0, em), y, t0);
  // t = tanh(|x|) >= 0: OR in x's sign.
  return _mm512_or_ps(t, _mm512_and_ps(sign, x));
}

// logistic of 16 lanes: r = 1 / (1 + e) with e = exp(-|x|), times e where x < 0.
inline __m512 Logistic16(__m512 x) {
  const __m512 sign = _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN));
  const __m512 e = Exp16(_mm512_or_ps(x, sign));  // exp(-|x|)
  const __m512 r = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
  return _mm512_mask_mul_ps(r, neg, r, e);
}
#endif

}  // namespace hlox::rt::vmath
