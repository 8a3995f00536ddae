// Array loops and the fused register path's op kernels over a level's vector type S, written
// once (runtime/isa/simd/math.h holds the formulas). A level's translation unit includes this
// inside its target pragma with HLOX_SIMD_NS naming the level and fills its IsaKernels table
// from the functions here.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "ir/literal.h"
#include "runtime/fused/vector_ops.h"
#include "runtime/isa/simd/math.h"
#include "runtime/math/half.h"

#ifndef HLOX_SIMD_NS
#error "define HLOX_SIMD_NS (the level's namespace) before including a runtime/isa/simd header"
#endif

namespace hlox::rt::simd::HLOX_SIMD_NS {

// o[i] = f(a[i]) for i < n: whole vectors, then the tail as one partial vector (the same
// instructions for every element, so results do not depend on where an array starts).
template <class S, typename F>
inline void MapArray(const float* a, float* o, int64_t n, F f) {
  int64_t i = 0;
  for (; i + S::kLanes <= n; i += S::kLanes) S::Store(o + i, f(S::Load(a + i)));
  if (i < n) S::StoreN(o + i, f(S::LoadN(a + i, n - i)), n - i);
}

template <class S> void ExpArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, Exp<S>); }
template <class S> void TanhArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, Tanh<S>); }
template <class S> void ErfArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, Erf<S>); }
template <class S> void LogisticArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, Logistic<S>); }
template <class S> void LogArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, Log<S>); }
template <class S> void SqrtArray(const float* a, float* o, int64_t n) { MapArray<S>(a, o, n, S::Sqrt); }

template <class S, int kMode>
inline void StoreAs(float* o, typename S::V v) {
  if constexpr (kMode == vecops::kTemp) S::StoreAligned(o, v);
  else if constexpr (kMode == vecops::kOut) S::Store(o, v);
  else S::Stream(o, v);
}

// The value of op kCode on one vector of each operand.
template <class S, int kCode>
inline typename S::V OpValue(typename S::V x, typename S::V y) {
  (void)y;
  if constexpr (kCode == vecops::kExp) return Exp<S>(x);
  else if constexpr (kCode == vecops::kTanh) return Tanh<S>(x);
  else if constexpr (kCode == vecops::kErf) return Erf<S>(x);
  else if constexpr (kCode == vecops::kLogistic) return Logistic<S>(x);
  else if constexpr (kCode == vecops::kLog) return Log<S>(x);
  else if constexpr (kCode == vecops::kSqrt) return S::Sqrt(x);
  else if constexpr (kCode == vecops::kRsqrt) return S::Div(S::Set1(1.0f), S::Sqrt(x));
  else if constexpr (kCode == vecops::kAbs) return S::AndNot(S::Set1(-0.0f), x);
  else if constexpr (kCode == vecops::kNeg) return S::Xor(S::Set1(-0.0f), x);
  else if constexpr (kCode == vecops::kFloor) return S::Floor(x);
  else if constexpr (kCode == vecops::kCeil) return S::Ceil(x);
  else if constexpr (kCode == vecops::kRoundEven) return S::RoundNearest(x);
  else if constexpr (kCode == vecops::kAdd) return S::Add(x, y);
  else if constexpr (kCode == vecops::kSub) return S::Sub(x, y);
  else if constexpr (kCode == vecops::kMul) return S::Mul(x, y);
  else if constexpr (kCode == vecops::kDiv) return S::Div(x, y);
  else if constexpr (kCode == vecops::kMax) return MaxNan<S>(x, y);
  else if constexpr (kCode == vecops::kMin) return MinNan<S>(x, y);
  else if constexpr (kCode == vecops::kRoundBf16) return RoundBf16<S>(x);
  else return S::RoundF16(x);
}

// Op kCode over n values (a multiple of 16), or exactly kFixed values when kFixed > 0.
template <class S, int kMode, int kCode, int64_t kFixed>
void RunOp(const float* a, const float* b, float* o, int64_t n) {
  if constexpr (kFixed > 0) n = kFixed;
  constexpr bool kUnary = vecops::IsUnary(kCode);
#pragma GCC unroll 8
  for (int64_t i = 0; i < n; i += S::kLanes) {
    const typename S::V x = S::Load(a + i);
    const typename S::V y = kUnary ? x : S::Load(b + i);
    StoreAs<S, kMode>(o + i, OpValue<S, kCode>(x, y));
  }
}

template <class S, int kMode, int64_t kFixed, int... kCodes>
constexpr std::array<vecops::OpFn, sizeof...(kCodes)> OpRow(std::integer_sequence<int, kCodes...>) {
  return {&RunOp<S, kMode, kCodes, kFixed>...};
}

// IsaKernels::op for vector type S.
template <class S>
vecops::OpFn OpFunction(uint8_t code, vecops::StoreMode mode, bool micro) {
  constexpr auto kCodes = std::make_integer_sequence<int, vecops::kCodeCount>();
  using Row = std::array<vecops::OpFn, vecops::kCodeCount>;
  static constexpr Row kAny[vecops::kStoreModeCount] = {
      OpRow<S, vecops::kTemp, 0>(kCodes), OpRow<S, vecops::kOut, 0>(kCodes), OpRow<S, vecops::kStream, 0>(kCodes)};
  static constexpr Row kMicro[vecops::kStoreModeCount] = {OpRow<S, vecops::kTemp, vecops::kMicroValues>(kCodes),
                                                          OpRow<S, vecops::kOut, vecops::kMicroValues>(kCodes),
                                                          OpRow<S, vecops::kStream, vecops::kMicroValues>(kCodes)};
  if (code >= vecops::kCodeCount || mode >= vecops::kStoreModeCount) return nullptr;
  return micro ? kMicro[mode][code] : kAny[mode][code];
}

// d[i] = the float of half value s[i] (IsaKernels::half_to_f32; f16 or bf16 per fused::HalfType).
template <class S>
void HalfToF32(uint8_t type, const uint16_t* s, float* d, int64_t n) {
  int64_t i = 0;
  if (type == fused::kHalfF16) {
    for (; i + S::kLanes <= n; i += S::kLanes) S::Store(d + i, S::LoadF16(s + i));
    for (; i < n; ++i) d[i] = HalfToFloat(s[i]);
  } else {
    for (; i + S::kLanes <= n; i += S::kLanes) S::Store(d + i, S::LoadBf16(s + i));
    for (; i < n; ++i) d[i] = fused::Bf16BitsToFloat(s[i]);
  }
}

// d[i] = s[i] narrowed to the half type (IsaKernels::f32_to_half).
template <class S>
void F32ToHalf(uint8_t type, const float* s, uint16_t* d, int64_t n) {
  int64_t i = 0;
  if (type == fused::kHalfF16) {
    for (; i + S::kLanes <= n; i += S::kLanes) S::StoreF16(d + i, S::Load(s + i));
    for (; i < n; ++i) d[i] = FloatToHalf(s[i]);
  } else {
    for (; i + S::kLanes <= n; i += S::kLanes) S::StoreBf16(d + i, S::Load(s + i));
    for (; i < n; ++i) d[i] = fused::FloatToBf16Bits(s[i]);
  }
}

// x[i] rounded to f16 precision in place, i < n.
template <class S>
void RoundF16Array(float* x, int64_t n) {
  MapArray<S>(x, x, n, S::RoundF16);
}

// One output row of a depthwise f32 convolution (IsaKernels::depthwise_row): per output
// position and block of kBlock channels, accumulators take every tap (outer taps, then kx) in
// kernel order from zero and are stored once.
template <class S, int kVectors>
void DepthwiseRow(const int64_t* pl, int64_t wl, int64_t kl, int64_t C, const float* in_b, const int64_t* bases,
                  const float* const* wrows, int64_t taps, float* orow) {
  constexpr int64_t kBlock = kVectors * S::kLanes;
  for (int64_t c0 = 0; c0 < C; c0 += kBlock) {
    const int64_t cn = C - c0 < kBlock ? C - c0 : kBlock;
    int64_t lanes[kVectors];
    for (int j = 0; j < kVectors; ++j) {
      const int64_t r = cn - S::kLanes * j;
      lanes[j] = r < 0 ? 0 : r > S::kLanes ? S::kLanes : r;
    }
    const bool full = cn == kBlock;
    for (int64_t ox = 0; ox < wl; ++ox) {
      typename S::V acc[kVectors];
      for (int j = 0; j < kVectors; ++j) acc[j] = S::Zero();
      for (int64_t v = 0; v < taps; ++v) {
        for (int64_t kx = 0; kx < kl; ++kx) {
          const int64_t ip = pl != nullptr ? pl[ox * kl + kx] : 0;
          if (ip < 0) continue;
          const float* x = in_b + (bases[v] + ip) * C + c0;
          const float* w = wrows[v] + kx * C + c0;
          if (full) {
#pragma GCC unroll 8
            for (int j = 0; j < kVectors; ++j) {
              acc[j] = S::Fma(S::Load(x + j * S::kLanes), S::Load(w + j * S::kLanes), acc[j]);
            }
          } else {
            for (int j = 0; j < kVectors; ++j) {
              acc[j] = S::Fma(S::LoadN(x + j * S::kLanes, lanes[j]), S::LoadN(w + j * S::kLanes, lanes[j]), acc[j]);
            }
          }
        }
      }
      float* o = orow + ox * C + c0;
      for (int j = 0; j < kVectors; ++j) S::StoreN(o + j * S::kLanes, acc[j], lanes[j]);
    }
  }
}

}  // namespace hlox::rt::simd::HLOX_SIMD_NS
