// Floating-point types of 8 bits or fewer (the f8 family, f4e2m1fn): their encodings as data,
// decoding to double, and rounding a double to the nearest code. One table serves the parser
// (range checks, constants), literals and the printer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "ir/primitive_type.h"

namespace hlox {

// Every element type of 8 bits or fewer that is a float, in a fixed order (dense indexes).
inline constexpr PrimitiveType kSmallFloatTypes[] = {
    PrimitiveType::kF8E5M2,     PrimitiveType::kF8E4M3FN,   PrimitiveType::kF8E4M3B11FNUZ,
    PrimitiveType::kF8E5M2FNUZ, PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E3M4,
    PrimitiveType::kF8E4M3,     PrimitiveType::kF4E2M1FN,   PrimitiveType::kF8E8M0FNU};

// How a small float spends its special codes.
enum class SmallFloatSpecials : uint8_t {
  kIeee,             // all-ones exponent: infinities (mantissa 0) and NaNs, as in IEEE 754
  kFiniteNan,        // "fn": no infinities; only the all-ones code (either sign) is NaN
  kUnsignedZeroNan,  // "fnuz": no infinities, no -0; the negative-zero code is the one NaN
  kNanOnly,          // "fnu" (e8m0): no sign, no zero, no infinities; the all-ones code is NaN
  kNone,             // f4e2m1fn: every code is a finite number
};

struct SmallFloatFormat {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  bool has_sign = true;
  SmallFloatSpecials specials = SmallFloatSpecials::kIeee;
};

// The format of `t`, or nullopt when `t` is not a float of 8 bits or fewer.
std::optional<SmallFloatFormat> SmallFloatFormatOf(PrimitiveType t);

// The value of `code` (low bits used) in `f`; NaN for NaN codes.
double SmallFloatDecode(const SmallFloatFormat& f, uint8_t code);

// The code nearest to `v` (ties to the even code), following XLA's parser: a finite value
// whose rounding overflows the largest finite value, infinities where the format has none,
// NaN where it has none, and negative values of an unsigned format are errors whose message
// names `type_name`. Tiny values round to zero (or the smallest value) silently.
absl::StatusOr<uint8_t> SmallFloatEncode(const SmallFloatFormat& f, double v, const std::string& type_name);

// Like SmallFloatEncode but never fails: overflow saturates to infinity, NaN or the largest
// value, whichever the format has (for conversions outside the parser).
uint8_t SmallFloatEncodeSaturating(const SmallFloatFormat& f, double v);

// `v` converted to the small float type `t` as XLA's `convert` does on CPU: f8e5m2, f8e4m3fn,
// f8e4m3b11fnuz and f4e2m1fn are reached through f16 (rounded to f16 first, then to the type:
// two roundings, as XLA's emitter does), f8e8m0fnu through f32, the others directly. Overflow
// goes where SmallFloatEncodeSaturating sends it, and NaN to f4e2m1fn is -0 (XLA's choice for a
// type without NaN). Requires SmallFloatFormatOf(t). The one rounding rule for every value the
// runtime writes into a small float: conversions, and arithmetic computed wider.
uint8_t SmallFloatConvert(PrimitiveType t, double v);

}  // namespace hlox
