// Scalar semantics of XLA's elementwise ops, one small function each, shared by the
// elementwise kernels and fused loops: integer division/remainder by zero and overflow, shifts
// with out-of-range amounts, integer power, NaN-propagating max/min, sign, rounding,
// reduce-precision and TOTALORDER comparison keys.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hlox::rt::scalar {

template <typename T> inline constexpr bool kIsComplex = false;
template <typename T> inline constexpr bool kIsComplex<std::complex<T>> = true;

// x / y for integers: y == 0 gives -1 (all ones for unsigned); INT_MIN / -1 gives INT_MIN.
template <typename T> T IntDiv(T x, T y) {
  if (y == 0) return static_cast<T>(-1);
  if constexpr (std::is_signed_v<T>) {
    if (x == std::numeric_limits<T>::min() && y == -1) return x;
  }
  return static_cast<T>(x / y);
}
// x % y for integers: y == 0 gives x; INT_MIN % -1 gives 0. Sign follows x (C semantics).
template <typename T> T IntRem(T x, T y) {
  if (y == 0) return x;
  if constexpr (std::is_signed_v<T>) {
    if (x == std::numeric_limits<T>::min() && y == -1) return 0;
  }
  return static_cast<T>(x % y);
}
// Wrapping integer arithmetic (no signed-overflow UB).
template <typename T> T WrapAdd(T x, T y) { using U = std::make_unsigned_t<T>; return static_cast<T>(static_cast<U>(x) + static_cast<U>(y)); }
template <typename T> T WrapSub(T x, T y) { using U = std::make_unsigned_t<T>; return static_cast<T>(static_cast<U>(x) - static_cast<U>(y)); }
template <typename T> T WrapMul(T x, T y) {
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;  // avoid int promotion UB
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(x)) * static_cast<W>(static_cast<U>(y))));
}
template <typename T> T WrapNeg(T x) { return WrapSub<T>(T{0}, x); }

// Shifts: an amount >= bit width (read as unsigned) gives 0, or the sign fill for arithmetic.
template <typename T> T ShiftLeft(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(x) << static_cast<U>(amount));
}
template <typename T> T ShiftRightLogical(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  if (static_cast<U>(amount) >= sizeof(T) * 8) return 0;
  return static_cast<T>(static_cast<U>(x) >> static_cast<U>(amount));
}
template <typename T> T ShiftRightArithmetic(T x, T amount) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  S sx = static_cast<S>(x);
  if (static_cast<U>(amount) >= sizeof(T) * 8) return static_cast<T>(sx < 0 ? S(-1) : S(0));
  return static_cast<T>(static_cast<S>(sx >> static_cast<U>(amount)));
}

// Integer power by squaring; a negative exponent gives 1 when x == 1, else 0 (XLA's evaluator).
template <typename T> T IntPow(T x, T e) {
  if constexpr (std::is_signed_v<T>) {
    if (e < 0) return x == 1 ? 1 : 0;
  }
  T result = 1;
  T base = x;
  using U = std::make_unsigned_t<T>;
  U ue = static_cast<U>(e);
  while (ue) {
    if (ue & 1) result = WrapMul<T>(result, base);
    base = WrapMul<T>(base, base);
    ue >>= 1;
  }
  return result;
}

// Floating max/min propagate NaN (XLA semantics); -0/+0 compare equal and return x.
template <typename T> T FMax(T x, T y) { return (std::isnan(x) || x >= y) ? x : y; }
template <typename T> T FMin(T x, T y) { return (std::isnan(x) || x <= y) ? x : y; }

template <typename T> T FSign(T x) {
  if (std::isnan(x) || x == T(0)) return x;
  return x > 0 ? T(1) : T(-1);
}
template <typename T> T ISign(T x) {
  if constexpr (std::is_signed_v<T>) return static_cast<T>((x > 0) - (x < 0));
  else return static_cast<T>(x != 0);
}

// Round half away from zero / half to even.
template <typename T> T RoundAfz(T x) { return std::round(x); }
template <typename T> T RoundEven(T x) { return std::nearbyint(x); }

template <typename T> T Logistic(T x) {
  if constexpr (kIsComplex<T>) return T(1) / (T(1) + std::exp(-x));
  else return T(1) / (T(1) + std::exp(-x));
}

template <typename T> int CountLeadingZeros(T x) {
  using U = std::make_unsigned_t<T>;
  return std::countl_zero(static_cast<U>(x));
}
template <typename T> int PopCount(T x) {
  using U = std::make_unsigned_t<T>;
  return std::popcount(static_cast<U>(x));
}

// Key whose signed-integer order is IEEE totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +NaN).
inline int32_t TotalOrderKey(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? (i ^ 0x7fffffff) : i;
}
inline int64_t TotalOrderKey(double f) {
  int64_t i;
  std::memcpy(&i, &f, 8);
  return i < 0 ? (i ^ 0x7fffffffffffffffll) : i;
}

// reduce-precision: rounds the mantissa to nearest even at `mantissa_bits`, then flushes
// exponents out of the reduced range to zero/infinity; NaN stays NaN (inf if no mantissa bits).
template <typename Fp> Fp ReducePrecision(Fp input, int exponent_bits, int mantissa_bits) {
  using Uint = std::conditional_t<sizeof(Fp) == 4, uint32_t, uint64_t>;
  constexpr int kSrcMantissa = std::numeric_limits<Fp>::digits - 1;
  constexpr int kSrcExponent = sizeof(Fp) * 8 - 1 - kSrcMantissa;
  Uint v;
  std::memcpy(&v, &input, sizeof(Fp));
  if (mantissa_bits < kSrcMantissa) {
    const Uint last_bit_mask = Uint{1} << (kSrcMantissa - mantissa_bits);
    const Uint base_bias = (last_bit_mask >> 1) - 1;
    const Uint last_bit = (v & last_bit_mask) >> (kSrcMantissa - mantissa_bits);
    const Uint truncation_mask = ~(last_bit_mask - 1);
    v = (v + last_bit + base_bias) & truncation_mask;
  }
  if (exponent_bits < kSrcExponent) {
    const Uint sign_mask = Uint{1} << (sizeof(Fp) * 8 - 1);
    const Uint exp_mask = ((Uint{1} << kSrcExponent) - 1) << kSrcMantissa;
    const Uint bias = (Uint{1} << (kSrcExponent - 1)) - 1;
    const Uint reduced_bias = (Uint{1} << (exponent_bits - 1)) - 1;
    const Uint max_exp = bias + reduced_bias;
    const Uint min_exp = bias - reduced_bias;
    const Uint x_exp = v & exp_mask;
    if (x_exp > (max_exp << kSrcMantissa)) {
      v = (v & sign_mask) | exp_mask;
    } else if (x_exp <= (min_exp << kSrcMantissa)) {
      v = v & sign_mask;
    }
  }
  Fp result;
  std::memcpy(&result, &v, sizeof(Fp));
  if (std::isnan(input)) return mantissa_bits > 0 ? input : std::numeric_limits<Fp>::infinity();
  return result;
}

}  // namespace hlox::rt::scalar
