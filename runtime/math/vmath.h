// Vector math for f32 arrays: exp, tanh, erf, logistic, log and correctly rounded sqrt, run by the
// active instruction-set level's kernels (isa/isa_kernels.h; the formulas, written once for every
// level, are in runtime/isa/simd/math.h, their constants in math/vmath_coef.h). Whole vectors, then the
// tail as one partial vector, so every element goes through the same instructions and results
// do not depend on where an array starts; the levels run the same IEEE operations, so results
// are the same bits on every level. Measured error against a double reference over the full
// f32 range (tests/runtime/vmath_test.cc): exp 0.96 ulp, tanh 4.8 ulp, erf 7 ulp (near +-1),
// logistic 2.5 ulp, log 1 ulp. exp clamps x to [-104, 89] and scales by 2^n exactly (overflow to inf, gradual
// underflow); tanh is a rational function (odd degree 13 over even degree 6) saturating at
// +-7.9988; logistic is 1/(1+e) with e = exp(-|x|), times e for negative x; log splits off
// the exponent and evaluates a degree-10 polynomial. NaN passes through all of them. Used by
// the fused loops (block and register paths; the generated code emits the same formulas) and
// by the unfused f32/bf16/f16 kernels, so fused and unfused results agree bit for bit.
#pragma once

#include <cstdint>

#include "runtime/isa/isa_kernels.h"

namespace hlox::rt::vmath {

// o[i] = exp(a[i]) for i < n (a and o may be the same array).
inline void ExpF32(const float* a, float* o, int64_t n) { Kernels().exp(a, o, n); }
// o[i] = tanh(a[i]) for i < n (a and o may be the same array).
inline void TanhF32(const float* a, float* o, int64_t n) { Kernels().tanh(a, o, n); }
// o[i] = erf(a[i]) for i < n (a and o may be the same array).
inline void ErfF32(const float* a, float* o, int64_t n) { Kernels().erf(a, o, n); }
// o[i] = 1 / (1 + exp(-a[i])) for i < n (a and o may be the same array).
inline void LogisticF32(const float* a, float* o, int64_t n) { Kernels().logistic(a, o, n); }
// o[i] = log(a[i]) for i < n (a and o may be the same array).
inline void LogF32(const float* a, float* o, int64_t n) { Kernels().log(a, o, n); }
// o[i] = sqrt(a[i]) for i < n, correctly rounded; a and o may alias.
inline void SqrtF32(const float* a, float* o, int64_t n) { Kernels().sqrt(a, o, n); }

}  // namespace hlox::rt::vmath
