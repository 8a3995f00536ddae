// The generic level's "vector" type (runtime/isa/isa_kernels.h): one f32 lane, so the same templated
// formulas run on any x86-64 CPU. Every operation is the IEEE operation the vector levels
// run (fused multiply-add through std::fma, which glibc runs as the FMA instruction where the
// CPU has one and exactly in software otherwise), so element results match theirs bit for bit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "ir/literal.h"
#include "runtime/math/half.h"

#ifndef HLOX_SIMD_NS
#error "define HLOX_SIMD_NS (the level's namespace) before including a runtime/isa/simd header"
#endif

namespace hlox::rt::simd::HLOX_SIMD_NS {

struct Scalar {
  using V = float;
  using VI = uint32_t;
  using M = bool;
  static constexpr int kLanes = 1;

  static V Load(const float* p) { return *p; }
  static V LoadAligned(const float* p) { return *p; }
  static void Store(float* p, V v) { *p = v; }
  static void StoreAligned(float* p, V v) { *p = v; }
  static void Stream(float* p, V v) { *p = v; }
  static V LoadN(const float* p, int64_t n) { return n > 0 ? *p : 0.0f; }
  static void StoreN(float* p, V v, int64_t n) {
    if (n > 0) *p = v;
  }

  static V Zero() { return 0.0f; }
  static V Set1(float f) { return f; }
  static V Add(V a, V b) { return a + b; }
  static V Sub(V a, V b) { return a - b; }
  static V Mul(V a, V b) { return a * b; }
  static V Div(V a, V b) { return a / b; }
  static V Min(V a, V b) { return a < b ? a : b; }  // b when either is NaN, as minps
  static V Max(V a, V b) { return a > b ? a : b; }
  static V Fma(V a, V b, V c) { return std::fma(a, b, c); }
  // c - a*b. (b negated, not a: a NaN a keeps its sign, as vfnmadd keeps it; the formulas pass
  // constants as b.)
  static V Fnma(V a, V b, V c) { return std::fma(a, -b, c); }
  static V Sqrt(V a) { return std::sqrt(a); }
  static V RoundNearest(V a) { return std::nearbyint(a); }
  static V Floor(V a) { return std::floor(a); }
  static V Ceil(V a) { return std::ceil(a); }
  static V And(V a, V b) { return AsFloat(AsInt(a) & AsInt(b)); }
  static V Or(V a, V b) { return AsFloat(AsInt(a) | AsInt(b)); }
  static V Xor(V a, V b) { return AsFloat(AsInt(a) ^ AsInt(b)); }
  static V AndNot(V a, V b) { return AsFloat(~AsInt(a) & AsInt(b)); }
  // p * 2^n as Avx2::Scale2 (two exact power-of-two factors, one rounding).
  static V Scale2(V p, V n) {
    if (n != n) return p;  // NaN n comes with a NaN p; vector levels return p's NaN too
    const int32_t ni = static_cast<int32_t>(n);
    const int32_t n1 = ni >> 1, n2 = ni - n1;
    return p * AsFloat(static_cast<uint32_t>(n1 + 127) << 23) * AsFloat(static_cast<uint32_t>(n2 + 127) << 23);
  }

  static M Lt(V a, V b) { return a < b; }
  static M Gt(V a, V b) { return a > b; }
  static M IsNan(V a) { return a != a; }
  static M OrMask(M a, M b) { return a || b; }
  static bool Any(M m) { return m; }
  static V Select(M m, V t, V f) { return m ? t : f; }

  static VI AsInt(V a) { return std::bit_cast<uint32_t>(a); }
  static V AsFloat(VI a) { return std::bit_cast<float>(a); }
  static VI Set1I(int32_t x) { return static_cast<uint32_t>(x); }
  static VI AddI(VI a, VI b) { return a + b; }
  static VI SubI(VI a, VI b) { return a - b; }
  static VI AndI(VI a, VI b) { return a & b; }
  static VI OrI(VI a, VI b) { return a | b; }
  template <int kBits> static VI ShiftRightLogical(VI a) { return a >> kBits; }
  template <int kBits> static VI ShiftRightArith(VI a) {
    return static_cast<uint32_t>(static_cast<int32_t>(a) >> kBits);
  }
  template <int kBits> static VI ShiftLeft(VI a) { return a << kBits; }
  static V ToFloat(VI a) { return static_cast<float>(static_cast<int32_t>(a)); }
  static VI SelectI(M m, VI t, VI f) { return m ? t : f; }

  static V LoadF16(const uint16_t* p) { return HalfToFloat(*p); }
  static void StoreF16(uint16_t* p, V v) { *p = FloatToHalf(v); }
  static V LoadBf16(const uint16_t* p) { return fused::Bf16BitsToFloat(*p); }
  static void StoreBf16(uint16_t* p, V v) { *p = fused::FloatToBf16Bits(v); }
  static V RoundF16(V v) { return HalfToFloat(FloatToHalf(v)); }
};

}  // namespace hlox::rt::simd::HLOX_SIMD_NS
