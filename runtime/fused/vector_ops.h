// The op codes of the fused loop's register path (fused/vector.h) and the shape of a
// register kernel: one op over a run of f32 values with the block loop's exact math (vmath
// exp/tanh/erf/logistic/log, IEEE arithmetic, NaN-propagating max/min, bf16/f16 rounding),
// storing to a temporary or an output. The kernels themselves exist once per instruction-set
// level (runtime/isa/simd/kernels.h, reached through isa/isa_kernels.h).
#pragma once

#include <cstdint>

#include "ir/opcode.h"

namespace hlox::rt::vecops {

enum VecCode : uint8_t {
  // unary
  kExp, kTanh, kLogistic, kLog, kSqrt, kRsqrt, kAbs, kNeg, kFloor, kCeil, kRoundEven, kErf,
  // binary
  kAdd, kSub, kMul, kDiv, kMax, kMin,
  // rounding to bf16 / f16 precision (nearest even, NaN kept quiet; math/half.h's
  // RoundBf16, and HalfToFloat(FloatToHalf(x)))
  kRoundBf16, kRoundF16,
};
constexpr int kCodeCount = kRoundF16 + 1;

// How an op stores its values: to a 64-byte aligned temporary, to an output buffer, or to a
// 64-byte aligned output buffer with non-temporal stores.
enum StoreMode : uint8_t { kTemp, kOut, kStream };
constexpr int kStoreModeCount = 3;

// An op over n values of a and b (b unused by unary ops) into o; n is a multiple of 16.
using OpFn = void (*)(const float* a, const float* b, float* o, int64_t n);

// Values a micro-block kernel covers per call (OpFunction's `micro` variants, compiled for
// exactly this count so their loops unroll).
constexpr int64_t kMicroValues = 128;

// Whether the op reads only its first operand.
constexpr bool IsUnary(uint8_t code) { return code < kAdd || code >= kRoundBf16; }

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
    case Opcode::kErf: *code = kErf; return true;
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

}  // namespace hlox::rt::vecops
