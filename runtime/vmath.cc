// Array loops and scalar forms of the f32 vector math in vmath.h. AVX-512 builds run 16 lanes
// a step and the tail as one masked step (same instructions for every element); other builds
// run the scalar forms, which follow the same formulas with std::fma and std::ldexp.
// GCC 12 reports false maybe-uninitialized warnings inside the AVX-512 min/max intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "runtime/vmath.h"

#include <cmath>
#include <cstring>

namespace hlox::rt::vmath {
namespace {

#if defined(__AVX512F__)
// o[i] = f(a[i]) over n elements, 16 lanes a step.
template <typename F>
inline void Map16(const float* a, float* o, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(o + i, f(_mm512_loadu_ps(a + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(o + i, m, f(_mm512_maskz_loadu_ps(m, a + i)));
  }
}
#endif

float ClampF(float x, float lo, float hi) {
  if (x != x) return x;
  return x < lo ? lo : (x > hi ? hi : x);
}

}  // namespace

float ExpScalar(float x) {
  using namespace coef;
  x = ClampF(x, kExpLo, kExpHi);
  if (x != x) return x;
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(-n, kLn2Hi, x);
  r = std::fma(-n, kLn2Lo, r);
  float p = std::fma(kExpP4, r, kExpP3);
  p = std::fma(p, r, kExpP2);
  p = std::fma(p, r, kExpP1);
  p = std::fma(p, r, kExpP0);
  p = std::fma(p, r * r, r) + 1.0f;
  return static_cast<float>(std::ldexp(static_cast<double>(p), static_cast<int>(n)));
}

float TanhScalar(float x) {
  using namespace coef;
  if (x != x) return x;
  const float ax = std::fabs(x);
  const float c = ax > kTanhSat ? kTanhSat : ax;
  const float u = c + c;
  const float n = std::nearbyint(u * kLog2e);
  float r = std::fma(-n, kLn2Hi, u);
  r = std::fma(-n, kLn2Lo, r);
  float p = std::fma(kExpP4, r, kExpP3);
  p = std::fma(p, r, kExpP2);
  p = std::fma(p, r, kExpP1);
  p = std::fma(p, r, kExpP0);
  const float q = std::fma(p, r * r, r);
  const float s = std::ldexp(1.0f, static_cast<int>(n));
  const float em = std::fma(s, q, s - 1.0f);
  return std::copysign(em / (em + 2.0f), x);
}

float LogisticScalar(float x) {
  if (x != x) return x;
  const float e = ExpScalar(-std::fabs(x));
  const float r = 1.0f / (1.0f + e);
  return x < 0 ? r * e : r;
}

void ExpF32(const float* a, float* o, int64_t n) {
#if defined(__AVX512F__)
  Map16(a, o, n, [](__m512 v) { return Exp16(v); });
#else
  for (int64_t i = 0; i < n; ++i) o[i] = ExpScalar(a[i]);
#endif
}

void TanhF32(const float* a, float* o, int64_t n) {
#if defined(__AVX512F__)
  Map16(a, o, n, [](__m512 v) { return Tanh16(v); });
#else
  for (int64_t i = 0; i < n; ++i) o[i] = TanhScalar(a[i]);
#endif
}

void SqrtF32(const float* a, float* o, int64_t n) {
#if defined(__AVX512F__)
  Map16(a, o, n, [](__m512 v) { return _mm512_sqrt_ps(v); });
#else
  for (int64_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]);
#endif
}

void LogisticF32(const float* a, float* o, int64_t n) {
#if defined(__AVX512F__)
  Map16(a, o, n, [](__m512 v) { return Logistic16(v); });
#else
  for (int64_t i = 0; i < n; ++i) o[i] = LogisticScalar(a[i]);
#endif
}

}  // namespace hlox::rt::vmath
