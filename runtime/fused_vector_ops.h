// Register kernels of the fused loop's register path (fused_vector.h): the op codes a
// VectorProgram is built from, and RunOp / OpFunction (the same as a plain function per op and
// store mode), which run one op over a sub-block's 16-lane registers with the block loop's exact math (vmath exp/logistic, Eigen's packet tanh/log,
// IEEE arithmetic, NaN-propagating max/min, bf16/f16 rounding), storing to a temporary or an
// output. Internal to fused_vector.cc.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

// GCC 12 reports false maybe-uninitialized warnings inside Eigen's AVX-512 tanh/log.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "ir/opcode.h"
#include "runtime/fused_half.h"
#include "runtime/vmath.h"

namespace hlox::rt::vecops {

enum VecCode : uint8_t {
  // unary
  kExp, kTanh, kLogistic, kLog, kSqrt, kRsqrt, kAbs, kNeg, kFloor, kCeil, kRoundEven,
  // binary
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  // rounding to bf16 / f16 precision (nearest even, NaN kept quiet; fused_half.h's
  // RoundBf16, and HalfToFloat(FloatToHalf(x)))
  kRoundBf16, kRoundF16,
};

// The code of a unary / binary opcode the register path implements; false otherwise.
inline bool UnaryCode(Opcode op, uint8_t* code) {
  switch (op) {
    case Opcode::kExp: *code = kExp; return true;
    case Opcode::kTanh: *code = kTanh; return true;
    case Opcode::kLogistic: *code = kLogistic; return true;
    case Opcode::kLog: *code = kLog; return true;
    case Opcode::kSqrt: *code = kSqrt; return true;
    case Opcode::kRsqrt: *code = kRsqrt; return true;
    case Opcode::kAbs: *code = kAbs; return true;
    case Opcode::kNegate: *code = kNeg; return true;
    case Opcode::kFloor: *code = kFloor; return true;
    case Opcode::kCeil: *code = kCeil; return true;
    case Opcode::kRoundNearestEven: *code = kRoundEven; return true;
    default: return false;
  }
}

inline bool BinaryCode(Opcode op, uint8_t* code) {
  switch (op) {
    case Opcode::kAdd: *code = kAdd; return true;
    case Opcode::kSubtract: *code = kSub; return true;
    case Opcode::kMultiply: *code = kMul; return true;
    case Opcode::kDivide: *code = kDiv; return true;
    case Opcode::kMaximum: *code = kMax; return true;
    case Opcode::kMinimum: *code = kMin; return true;
    default: return false;
  }
}

#if defined(__AVX512F__)
// How an op stores its registers: to an aligned temporary, to an output buffer, or to a
// 64-byte aligned output buffer with non-temporal stores.
enum StoreMode { kTemp, kOut, kStream };

template <int kMode>
inline void Store(float* o, __m512 v) {
  if constexpr (kMode == kTemp) _mm512_store_ps(o, v);
  else if constexpr (kMode == kOut) _mm512_storeu_ps(o, v);
  else _mm512_stream_ps(o, v);
}

template <int kMode, typename F>
inline void Loop1(const float* a, float* o, int64_t nv, F f) {
  for (int64_t v = 0; v < nv; ++v) Store<kMode>(o + 16 * v, f(_mm512_loadu_ps(a + 16 * v)));
}

template <int kMode, typename F>
inline void Loop2(const float* a, const float* b, float* o, int64_t nv, F f) {
  for (int64_t v = 0; v < nv; ++v) {
    Store<kMode>(o + 16 * v, f(_mm512_loadu_ps(a + 16 * v), _mm512_loadu_ps(b + 16 * v)));
  }
}

// NaN-propagating max/min exactly as fused::MaxNan/MinNan: pick by the comparison (b on
// ties), then a where a is NaN, then b where b is NaN.
inline __m512 MaxNan16(__m512 a, __m512 b) {
  __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), b, a);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), b);
}
inline __m512 MinNan16(__m512 a, __m512 b) {
  __m512 r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a);
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
  return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q), b);
}

// Each lane rounded to bf16 precision, bit-identical to fused::RoundBf16.
inline __m512 RoundBf16x16(__m512 v) {
  const __m512i x = _mm512_castps_si512(v);
  const __m512i hi = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
  const __m512i r = _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), hi);
  const __m512i nan = _mm512_and_si512(_mm512_or_si512(x, _mm512_set1_epi32(0x400000)), hi);
  const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_castsi512_ps(_mm512_mask_mov_epi32(r, is_nan, nan));
}

constexpr int kNear = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr int kDown = _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC;
constexpr int kUp = _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC;
inline __m512 SignMask16() { return _mm512_castsi512_ps(_mm512_set1_epi32(INT32_MIN)); }

// Runs op kCode over nv registers.
template <int kMode, int kCode>
inline void RunOpC(const float* a, const float* b, float* o, int64_t nv) {
  using Eigen::internal::Packet16f;
  if constexpr (kCode == kExp) Loop1<kMode>(a, o, nv, [](__m512 x) { return vmath::Exp16(x); });
  else if constexpr (kCode == kTanh) Loop1<kMode>(a, o, nv, [](__m512 x) { return Eigen::internal::ptanh<Packet16f>(x); });
  else if constexpr (kCode == kLogistic) Loop1<kMode>(a, o, nv, [](__m512 x) { return vmath::Logistic16(x); });
  else if constexpr (kCode == kLog) Loop1<kMode>(a, o, nv, [](__m512 x) { return Eigen::internal::plog<Packet16f>(x); });
  else if constexpr (kCode == kSqrt) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_sqrt_ps(x); });
  else if constexpr (kCode == kRsqrt) {
    Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(x)); });
  }
  else if constexpr (kCode == kAbs) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_andnot_ps(SignMask16(), x); });
  else if constexpr (kCode == kNeg) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_xor_ps(SignMask16(), x); });
  else if constexpr (kCode == kFloor) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_roundscale_ps(x, kDown); });
  else if constexpr (kCode == kCeil) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_roundscale_ps(x, kUp); });
  else if constexpr (kCode == kRoundEven) Loop1<kMode>(a, o, nv, [](__m512 x) { return _mm512_roundscale_ps(x, kNear); });
  else if constexpr (kCode == kAdd) Loop2<kMode>(a, b, o, nv, [](__m512 x, __m512 y) { return _mm512_add_ps(x, y); });
  else if constexpr (kCode == kSub) Loop2<kMode>(a, b, o, nv, [](__m512 x, __m512 y) { return _mm512_sub_ps(x, y); });
  else if constexpr (kCode == kMul) Loop2<kMode>(a, b, o, nv, [](__m512 x, __m512 y) { return _mm512_mul_ps(x, y); });
  else if constexpr (kCode == kDiv) Loop2<kMode>(a, b, o, nv, [](__m512 x, __m512 y) { return _mm512_div_ps(x, y); });
  else if constexpr (kCode == kMax) Loop2<kMode>(a, b, o, nv, MaxNan16);
  else if constexpr (kCode == kMin) Loop2<kMode>(a, b, o, nv, MinNan16);
  else if constexpr (kCode == kRoundBf16) Loop1<kMode>(a, o, nv, RoundBf16x16);
  else if constexpr (kCode == kRoundF16) Loop1<kMode>(a, o, nv, fused::RoundF16x16);
}

// An op over nv registers of a and b (b unused by unary ops) into o, as a plain function.
using OpFn = void (*)(const float* a, const float* b, float* o, int64_t nv);

// RunOpC over exactly kNv registers (known when compiling, so the loop unrolls); nv unused.
template <int kMode, int kCode, int kNv>
void RunOpFixed(const float* a, const float* b, float* o, int64_t /*nv*/) {
  RunOpC<kMode, kCode>(a, b, o, kNv);
}

template <int kMode, int kNv, int... kCodes>
constexpr std::array<OpFn, sizeof...(kCodes)> OpTable(std::integer_sequence<int, kCodes...>) {
  if constexpr (kNv == 0) return {&RunOpC<kMode, kCodes>...};
  else return {&RunOpFixed<kMode, kCodes, kNv>...};
}

// The function running op `code` with store mode `mode` (null for an unknown code) over the
// nv registers it is passed, or with kNv > 0 over exactly kNv registers whatever nv says.
template <int kNv = 0>
inline OpFn OpFunction(uint8_t code, StoreMode mode) {
  constexpr auto kCodes = std::make_integer_sequence<int, kRoundF16 + 1>();
  static constexpr std::array<OpFn, kRoundF16 + 1> kTables[3] = {
      OpTable<kTemp, kNv>(kCodes), OpTable<kOut, kNv>(kCodes), OpTable<kStream, kNv>(kCodes)};
  return code <= kRoundF16 ? kTables[mode][code] : nullptr;
}

// Runs op `code` over nv registers of a and b (b unused by unary ops) into o.
inline void RunOp(uint8_t code, const float* a, const float* b, float* o, int64_t nv, StoreMode mode) {
  if (OpFn fn = OpFunction<>(code, mode)) fn(a, b, o, nv);
}

#endif

}  // namespace hlox::rt::vecops

#pragma GCC diagnostic pop
