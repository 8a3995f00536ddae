// Block math for the fused loop: elementwise operations over contiguous blocks of float,
// double or int64 values, written as plain loops (or Eigen array expressions for the
// transcendental functions, which Eigen vectorizes; f32 exp, tanh, erf, logistic and log use
// runtime/math/vmath.h) so a block stays in registers and L1.
// Each function returns false for an opcode it does not implement; called with n == 0 it
// touches no memory, which is how the compiler asks what is supported.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

// GCC 12 reports false maybe-uninitialized warnings inside Eigen's packet exp/tanh.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/primitive_type.h"
#include "runtime/math/vmath.h"

namespace hlox::rt::fused {

template <typename T>
using ConstMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using Map = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;

// NaN-propagating max/min as XLA defines them.
template <typename T> inline T MaxNan(T a, T b) {
  T r = a > b ? a : b;
  r = a != a ? a : r;
  return b != b ? b : r;
}
template <typename T> inline T MinNan(T a, T b) {
  T r = a < b ? a : b;
  r = a != a ? a : r;
  return b != b ? b : r;
}

template <typename T>
bool UnaryFloat(Opcode op, const T* a, T* o, int64_t n) {
  // f32 exp, tanh, erf, logistic, log and sqrt: runtime/math/vmath.h, the active level's kernels (the
  // register path and the generated code run the same formulas). sqrt is correctly rounded
  // everywhere.
  if constexpr (std::is_same_v<T, float>) {
    switch (op) {
      case Opcode::kExp: vmath::ExpF32(a, o, n); return true;
      case Opcode::kTanh: vmath::TanhF32(a, o, n); return true;
      case Opcode::kErf: vmath::ErfF32(a, o, n); return true;
      case Opcode::kLogistic: vmath::LogisticF32(a, o, n); return true;
      case Opcode::kLog: vmath::LogF32(a, o, n); return true;
      case Opcode::kSqrt: vmath::SqrtF32(a, o, n); return true;
      default: break;
    }
  }
  ConstMap<T> x(a, n);
  Map<T> y(o, n);
  switch (op) {
    case Opcode::kAbs: for (int64_t i = 0; i < n; ++i) o[i] = std::fabs(a[i]); return true;
    case Opcode::kNegate: for (int64_t i = 0; i < n; ++i) o[i] = -a[i]; return true;
    case Opcode::kCopy: for (int64_t i = 0; i < n; ++i) o[i] = a[i]; return true;
    case Opcode::kExp: y = x.exp(); return true;
    case Opcode::kExpm1: y = x.expm1(); return true;
    case Opcode::kLog: y = x.log(); return true;
    case Opcode::kLog1p: y = x.log1p(); return true;
    case Opcode::kTanh: y = x.tanh(); return true;
    case Opcode::kLogistic: y = (T(1) + (-x).exp()).inverse(); return true;
    case Opcode::kSqrt: for (int64_t i = 0; i < n; ++i) o[i] = std::sqrt(a[i]); return true;
    case Opcode::kRsqrt: for (int64_t i = 0; i < n; ++i) o[i] = T(1) / std::sqrt(a[i]); return true;
    case Opcode::kCbrt: for (int64_t i = 0; i < n; ++i) o[i] = std::cbrt(a[i]); return true;
    case Opcode::kFloor: for (int64_t i = 0; i < n; ++i) o[i] = std::floor(a[i]); return true;
    case Opcode::kCeil: for (int64_t i = 0; i < n; ++i) o[i] = std::ceil(a[i]); return true;
    case Opcode::kRoundNearestAfz: for (int64_t i = 0; i < n; ++i) o[i] = std::round(a[i]); return true;
    case Opcode::kRoundNearestEven: for (int64_t i = 0; i < n; ++i) o[i] = std::nearbyint(a[i]); return true;
    case Opcode::kSin: for (int64_t i = 0; i < n; ++i) o[i] = std::sin(a[i]); return true;
    case Opcode::kCos: for (int64_t i = 0; i < n; ++i) o[i] = std::cos(a[i]); return true;
    case Opcode::kTan: for (int64_t i = 0; i < n; ++i) o[i] = std::tan(a[i]); return true;
    case Opcode::kErf: for (int64_t i = 0; i < n; ++i) o[i] = std::erf(a[i]); return true;
    case Opcode::kAcos: for (int64_t i = 0; i < n; ++i) o[i] = std::acos(a[i]); return true;
    case Opcode::kAtan: for (int64_t i = 0; i < n; ++i) o[i] = std::atan(a[i]); return true;
    case Opcode::kAcosh: for (int64_t i = 0; i < n; ++i) o[i] = std::acosh(a[i]); return true;
    case Opcode::kAsin: for (int64_t i = 0; i < n; ++i) o[i] = std::asin(a[i]); return true;
    case Opcode::kAsinh: for (int64_t i = 0; i < n; ++i) o[i] = std::asinh(a[i]); return true;
    case Opcode::kAtanh: for (int64_t i = 0; i < n; ++i) o[i] = std::atanh(a[i]); return true;
    case Opcode::kCosh: for (int64_t i = 0; i < n; ++i) o[i] = std::cosh(a[i]); return true;
    case Opcode::kSinh: for (int64_t i = 0; i < n; ++i) o[i] = std::sinh(a[i]); return true;
    case Opcode::kSign:
      for (int64_t i = 0; i < n; ++i) {
        T v = a[i];
        o[i] = v > 0 ? T(1) : (v < 0 ? T(-1) : v);
      }
      return true;
    default:
      return false;
  }
}

template <typename T>
bool BinaryFloat(Opcode op, const T* a, const T* b, T* o, int64_t n) {
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + b[i]; return true;
    case Opcode::kSubtract: for (int64_t i = 0; i < n; ++i) o[i] = a[i] - b[i]; return true;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * b[i]; return true;
    case Opcode::kDivide: for (int64_t i = 0; i < n; ++i) o[i] = a[i] / b[i]; return true;
    case Opcode::kMaximum: for (int64_t i = 0; i < n; ++i) o[i] = MaxNan(a[i], b[i]); return true;
    case Opcode::kMinimum: for (int64_t i = 0; i < n; ++i) o[i] = MinNan(a[i], b[i]); return true;
    case Opcode::kPower: for (int64_t i = 0; i < n; ++i) o[i] = std::pow(a[i], b[i]); return true;
    case Opcode::kAtan2: for (int64_t i = 0; i < n; ++i) o[i] = std::atan2(a[i], b[i]); return true;
    case Opcode::kRemainder: for (int64_t i = 0; i < n; ++i) o[i] = std::fmod(a[i], b[i]); return true;
    default:
      return false;
  }
}

// Binary op with one scalar operand s (the first operand when scalar_first); add, subtract,
// multiply, divide, maximum and minimum only.
template <typename T>
bool BinaryFloatScalar(Opcode op, const T* a, T s, bool scalar_first, T* o, int64_t n) {
  switch (op) {
    case Opcode::kAdd: for (int64_t i = 0; i < n; ++i) o[i] = a[i] + s; return true;
    case Opcode::kMultiply: for (int64_t i = 0; i < n; ++i) o[i] = a[i] * s; return true;
    case Opcode::kSubtract:
      if (scalar_first) for (int64_t i = 0; i < n; ++i) o[i] = s - a[i];
      else for (int64_t i = 0; i < n; ++i) o[i] = a[i] - s;
      return true;
    case Opcode::kDivide:
      if (scalar_first) for (int64_t i = 0; i < n; ++i) o[i] = s / a[i];
      else for (int64_t i = 0; i < n; ++i) o[i] = a[i] / s;
      return true;
    case Opcode::kMaximum: for (int64_t i = 0; i < n; ++i) o[i] = MaxNan(a[i], s); return true;
    case Opcode::kMinimum: for (int64_t i = 0; i < n; ++i) o[i] = MinNan(a[i], s); return true;
    default:
      return false;
  }
}

template <typename T>
void CompareBlock(ComparisonDirection d, const T* a, const T* b, int64_t* o, int64_t n) {
  switch (d) {
    case ComparisonDirection::kEq: for (int64_t i = 0; i < n; ++i) o[i] = a[i] == b[i]; break;
    case ComparisonDirection::kNe: for (int64_t i = 0; i < n; ++i) o[i] = a[i] != b[i]; break;
    case ComparisonDirection::kGe: for (int64_t i = 0; i < n; ++i) o[i] = a[i] >= b[i]; break;
    case ComparisonDirection::kGt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] > b[i]; break;
    case ComparisonDirection::kLe: for (int64_t i = 0; i < n; ++i) o[i] = a[i] <= b[i]; break;
    case ComparisonDirection::kLt: for (int64_t i = 0; i < n; ++i) o[i] = a[i] < b[i]; break;
  }
}

// Bits of an integer/pred type held in int64 storage (0 when not such a type).
int IntBits(PrimitiveType t);
bool IsUnsignedIntOrPred(PrimitiveType t);
// Wraps int64 values to type t (sign- or zero-extending its low bits; pred -> 0/1).
void WrapToType(PrimitiveType t, int64_t* x, int64_t n);
// Rounds float values to bf16/f16 precision when t is one of them (no-op otherwise).
void RoundToType(PrimitiveType t, float* x, int64_t n);

bool UnaryInt(Opcode op, PrimitiveType t, const int64_t* a, int64_t* o, int64_t n);
bool BinaryInt(Opcode op, PrimitiveType t, const int64_t* a, const int64_t* b, int64_t* o,
               int64_t n);

}  // namespace hlox::rt::fused

#pragma GCC diagnostic pop
