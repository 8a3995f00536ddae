// The f32 elementwise formulas every level runs, written once over a vector type S
// (isa/simd/avx512.h, isa/simd/avx2.h, isa/simd/scalar.h): exp, tanh, erf, logistic, log, NaN-propagating
// max/min and bf16 rounding. Each is a fixed sequence of IEEE operations (fused multiply-adds
// included), so a formula gives the same bits on every level, lane by lane; the fused loop's
// generated code (fused/jit.cc) emits the same sequences. Accuracy against a double reference
// over the whole f32 range (tests/runtime/vmath_test.cc): exp 0.96 ulp, tanh 4.8 ulp,
// erf 7 ulp (near +-1), logistic 2.5 ulp, log 1 ulp.
// Included once per level's translation unit, inside its target pragma, with HLOX_SIMD_NS
// naming the level (runtime/isa/level_*.cc), so no two levels share a symbol.
#pragma once

#include <cstdint>

#include "runtime/math/vmath_coef.h"

#ifndef HLOX_SIMD_NS
#error "define HLOX_SIMD_NS (the level's namespace) before including a runtime/isa/simd header"
#endif

namespace hlox::rt::simd::HLOX_SIMD_NS {

// exp(x): x clamped to [kExpLo, kExpHi] (NaN passes: min/max return their second operand),
// x = n*ln2 + r with |r| <= ln2/2 (ln2 split in two), e^r = 1 + r + r^2 P(r), times 2^n.
template <class S>
typename S::V Exp(typename S::V x) {
  using namespace vmath::coef;
  x = S::Max(S::Set1(kExpLo), S::Min(S::Set1(kExpHi), x));
  const typename S::V n = S::RoundNearest(S::Mul(x, S::Set1(kLog2e)));
  typename S::V r = S::Fnma(n, S::Set1(kLn2Hi), x);
  r = S::Fnma(n, S::Set1(kLn2Lo), r);
  typename S::V p = S::Fma(S::Set1(kExpP4), r, S::Set1(kExpP3));
  p = S::Fma(p, r, S::Set1(kExpP2));
  p = S::Fma(p, r, S::Set1(kExpP1));
  p = S::Fma(p, r, S::Set1(kExpP0));
  p = S::Fma(p, S::Mul(r, r), r);
  return S::Scale2(S::Add(p, S::Set1(1.0f)), n);
}

// x * P(x^2) / Q(x^2) with x = a clamped to +-c (NaN passes: min/max return their second
// operand), P's and Q's coefficients from the constant term up; *clamped (may be null) gets x.
template <class S, int kP, int kQ>
typename S::V ClampedOddRational(typename S::V a, float c, const float (&pc)[kP], const float (&qc)[kQ],
                                 typename S::V* clamped = nullptr) {
  using V = typename S::V;
  V x = S::Min(S::Set1(c), a);
  x = S::Max(S::Set1(-c), x);
  const V x2 = S::Mul(x, x);
  V p = S::Set1(pc[kP - 1]);
  for (int i = kP - 2; i >= 0; --i) p = S::Fma(p, x2, S::Set1(pc[i]));
  V q = S::Set1(qc[kQ - 1]);
  for (int i = kQ - 2; i >= 0; --i) q = S::Fma(q, x2, S::Set1(qc[i]));
  if (clamped != nullptr) *clamped = x;
  return S::Div(S::Mul(x, p), q);
}

// tanh(x) as a rational function: x clamped to +-kTanhClamp, x * A(x^2) / B(x^2) (odd degree
// 13 over even degree 6), and x itself where |x| < kTanhTiny (exact there; keeps -0).
template <class S>
typename S::V Tanh(typename S::V a) {
  using namespace vmath::coef;
  typename S::V x;
  const typename S::V r = ClampedOddRational<S>(a, kTanhClamp, kTanhA, kTanhB, &x);
  const typename S::M tiny = S::Lt(S::AndNot(S::Set1(-0.0f), a), S::Set1(kTanhTiny));
  return S::Select(tiny, x, r);
}

// erf(x) = x * P(x^2) / Q(x^2) with x clamped to +-kErfClamp (NaN passes; -0 stays -0).
template <class S>
typename S::V Erf(typename S::V a) {
  return ClampedOddRational<S>(a, vmath::coef::kErfClamp, vmath::coef::kErfP, vmath::coef::kErfQ);
}

// logistic(x) = 1 / (1 + e) with e = exp(-|x|), times e where x < 0 (no overflow).
template <class S>
typename S::V Logistic(typename S::V x) {
  using V = typename S::V;
  const V one = S::Set1(1.0f);
  const V e = Exp<S>(S::Or(x, S::Set1(-0.0f)));
  const V r = S::Div(one, S::Add(one, e));
  return S::Select(S::Lt(x, S::Zero()), S::Mul(r, e), r);
}

// log(x): x = 2^e * m with m in [sqrt(1/2), sqrt(2)) (denormals scaled by 2^23 first),
// log(m) = f + f^2 P(f) with f = m - 1 (exact), plus e*ln2 (split in two). log(0) = -inf,
// log(x < 0) = NaN, log(inf) = inf, NaN passes.
template <class S>
typename S::V Log(typename S::V x) {
  using namespace vmath::coef;
  using V = typename S::V;
  using VI = typename S::VI;
  const typename S::M denormal = S::Lt(x, S::Set1(kFltMin));
  const V xs = S::Select(denormal, S::Mul(x, S::Set1(kTwo23)), x);
  // Subtracting sqrt(1/2)'s bits puts m's range start at an exponent boundary.
  const VI d = S::SubI(S::AsInt(xs), S::Set1I(kSqrtHalfBits));
  const VI ei = S::template ShiftRightArith<23>(d);
  const V m = S::AsFloat(S::AddI(S::AndI(d, S::Set1I(0x007fffff)), S::Set1I(kSqrtHalfBits)));
  const V e = S::Sub(S::ToFloat(ei), S::Select(denormal, S::Set1(23.0f), S::Zero()));
  const V f = S::Sub(m, S::Set1(1.0f));
  V p = S::Set1(kLogP[8]);
  for (int i = 7; i >= 0; --i) p = S::Fma(p, f, S::Set1(kLogP[i]));
  const V r = S::Fma(S::Mul(f, f), p, f);
  V y = S::Fma(e, S::Set1(kLn2Hi), S::Fma(e, S::Set1(kLn2Lo), r));
  // Special inputs: 0 -> -inf, negative -> NaN, +inf and NaN -> themselves.
  y = S::Select(S::Lt(x, S::Zero()), S::Set1(__builtin_nanf("")), y);
  y = S::Select(S::Lt(S::AndNot(S::Set1(-0.0f), x), S::Set1(kFltTrueMin)), S::Set1(-__builtin_inff()), y);
  return S::Select(S::OrMask(S::IsNan(x), S::Gt(x, S::Set1(kFltMax))), x, y);
}

// NaN-propagating max/min as XLA defines them: by the comparison (b on ties), then a where a
// is NaN, then b where b is NaN.
template <class S>
typename S::V MaxNan(typename S::V a, typename S::V b) {
  typename S::V r = S::Select(S::Gt(a, b), a, b);
  r = S::Select(S::IsNan(a), a, r);
  return S::Select(S::IsNan(b), b, r);
}
template <class S>
typename S::V MinNan(typename S::V a, typename S::V b) {
  typename S::V r = S::Select(S::Lt(a, b), a, b);
  r = S::Select(S::IsNan(a), a, r);
  return S::Select(S::IsNan(b), b, r);
}

// Each lane rounded to bf16 precision (nearest even), a NaN made quiet.
template <class S>
typename S::V RoundBf16(typename S::V v) {
  using VI = typename S::VI;
  const VI x = S::AsInt(v);
  const VI hi = S::Set1I(static_cast<int32_t>(0xffff0000u));
  const VI lsb = S::AndI(S::template ShiftRightLogical<16>(x), S::Set1I(1));
  const VI r = S::AndI(S::AddI(S::AddI(x, S::Set1I(0x7fff)), lsb), hi);
  const VI nan = S::AndI(S::OrI(x, S::Set1I(0x400000)), hi);
  return S::AsFloat(S::SelectI(S::IsNan(v), nan, r));
}

}  // namespace hlox::rt::simd::HLOX_SIMD_NS
