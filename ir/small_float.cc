// Small floats by exhaustive search: with at most 256 codes, decoding every candidate is
// simpler to trust than bit tricks per format, and only constants and conversions use it.
#include "ir/small_float.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace hlox {

std::optional<SmallFloatFormat> SmallFloatFormatOf(PrimitiveType t) {
  using S = SmallFloatSpecials;
  switch (t) {
    case PrimitiveType::kF8E5M2:
      return SmallFloatFormat{5, 2, 15, true, S::kIeee};
    case PrimitiveType::kF8E4M3FN:
      return SmallFloatFormat{4, 3, 7, true, S::kFiniteNan};
    case PrimitiveType::kF8E4M3B11FNUZ:
      return SmallFloatFormat{4, 3, 11, true, S::kUnsignedZeroNan};
    case PrimitiveType::kF8E5M2FNUZ:
      return SmallFloatFormat{5, 2, 16, true, S::kUnsignedZeroNan};
    case PrimitiveType::kF8E4M3FNUZ:
      return SmallFloatFormat{4, 3, 8, true, S::kUnsignedZeroNan};
    case PrimitiveType::kF8E3M4:
      return SmallFloatFormat{3, 4, 3, true, S::kIeee};
    case PrimitiveType::kF8E4M3:
      return SmallFloatFormat{4, 3, 7, true, S::kIeee};
    case PrimitiveType::kF4E2M1FN:
      return SmallFloatFormat{2, 1, 1, true, S::kNone};
    case PrimitiveType::kF8E8M0FNU:
      return SmallFloatFormat{8, 0, 127, false, S::kNanOnly};
    default:
      return std::nullopt;
  }
}

namespace {

int CodeCount(const SmallFloatFormat& f) { return 1 << (f.exponent_bits + f.mantissa_bits + (f.has_sign ? 1 : 0)); }

bool IsNanCode(const SmallFloatFormat& f, uint32_t code) {
  uint32_t exp_mask = (1u << f.exponent_bits) - 1, man_mask = (1u << f.mantissa_bits) - 1;
  uint32_t exp = (code >> f.mantissa_bits) & exp_mask, man = code & man_mask;
  switch (f.specials) {
    case SmallFloatSpecials::kIeee:
      return exp == exp_mask && man != 0;
    case SmallFloatSpecials::kFiniteNan:
      return exp == exp_mask && man == man_mask;
    case SmallFloatSpecials::kUnsignedZeroNan:
      return code == 1u << (f.exponent_bits + f.mantissa_bits);
    case SmallFloatSpecials::kNanOnly:
      return code == static_cast<uint32_t>(CodeCount(f) - 1);
    case SmallFloatSpecials::kNone:
      return false;
  }
  return false;
}

bool HasNan(const SmallFloatFormat& f) { return f.specials != SmallFloatSpecials::kNone; }
bool HasInf(const SmallFloatFormat& f) { return f.specials == SmallFloatSpecials::kIeee; }

// The NaN code the parser writes for `nan` / `-nan`.
uint8_t NanCode(const SmallFloatFormat& f, bool negative) {
  int body = f.exponent_bits + f.mantissa_bits;
  switch (f.specials) {
    case SmallFloatSpecials::kIeee: {  // quiet NaN: top mantissa bit set
      uint32_t c = (((1u << f.exponent_bits) - 1) << f.mantissa_bits) | (1u << (f.mantissa_bits - 1));
      return static_cast<uint8_t>(c | (negative ? 1u << body : 0));
    }
    case SmallFloatSpecials::kFiniteNan:
      return static_cast<uint8_t>(((1u << body) - 1) | (negative ? 1u << body : 0));
    case SmallFloatSpecials::kUnsignedZeroNan:
      return static_cast<uint8_t>(1u << body);
    default:
      return static_cast<uint8_t>(CodeCount(f) - 1);
  }
}

// Largest finite value and the value one step beyond it (where rounding would land next).
void FiniteRange(const SmallFloatFormat& f, double* max, double* beyond) {
  *max = 0;
  double below = 0;
  for (int c = 0; c < CodeCount(f); ++c) {
    double v = SmallFloatDecode(f, static_cast<uint8_t>(c));
    if (std::isfinite(v) && v > *max) {
      below = *max;
      *max = v;
    } else if (std::isfinite(v) && v > below && v < *max) {
      below = v;
    }
  }
  *beyond = f.mantissa_bits == 0 ? 2 * *max : *max + (*max - below);
}

// Nearest finite code to the finite value `v`: ties go to the zero of v's sign, else to the
// even code (round half to even, as the mantissa's last bit is the code's last bit).
uint8_t NearestFinite(const SmallFloatFormat& f, double v) {
  int best = -1;
  double best_err = std::numeric_limits<double>::infinity();
  bool best_sign_ok = false;
  for (int c = 0; c < CodeCount(f); ++c) {
    double d = SmallFloatDecode(f, static_cast<uint8_t>(c));
    if (!std::isfinite(d)) continue;
    double err = std::fabs(d - v);
    bool sign_ok = std::signbit(d) == std::signbit(v);
    bool better = err < best_err || (err == best_err && ((sign_ok && !best_sign_ok) ||
                                                         (sign_ok == best_sign_ok && (c & 1) == 0 && (best & 1) == 1)));
    if (better) {
      best = c;
      best_err = err;
      best_sign_ok = sign_ok;
    }
  }
  return static_cast<uint8_t>(best);
}

}  // namespace

double SmallFloatDecode(const SmallFloatFormat& f, uint8_t code) {
  uint32_t c = code & static_cast<uint32_t>(CodeCount(f) - 1);
  bool negative = f.has_sign && (c >> (f.exponent_bits + f.mantissa_bits)) != 0;
  if (IsNanCode(f, c)) {  // the fnuz NaN uses the sign bit but is not negative
    bool signed_nan = negative && f.specials != SmallFloatSpecials::kUnsignedZeroNan;
    return signed_nan ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
  }
  uint32_t exp_mask = (1u << f.exponent_bits) - 1, man_mask = (1u << f.mantissa_bits) - 1;
  uint32_t exp = (c >> f.mantissa_bits) & exp_mask, man = c & man_mask;
  double r;
  if (HasInf(f) && exp == exp_mask) {
    r = std::numeric_limits<double>::infinity();
  } else if (exp == 0 && f.mantissa_bits > 0) {  // subnormal
    r = std::ldexp(static_cast<double>(man), 1 - f.bias - f.mantissa_bits);
  } else {
    r = std::ldexp(1.0 + std::ldexp(static_cast<double>(man), -f.mantissa_bits), static_cast<int>(exp) - f.bias);
  }
  return negative ? -r : r;
}

absl::StatusOr<uint8_t> SmallFloatEncode(const SmallFloatFormat& f, double v, const std::string& type_name) {
  if (std::isnan(v)) {
    if (!HasNan(f)) return absl::InvalidArgumentError(absl::StrCat(type_name, " has no NaN"));
    return NanCode(f, std::signbit(v));
  }
  if (std::isinf(v)) {
    if (!HasInf(f)) return absl::InvalidArgumentError(absl::StrCat(type_name, " has no infinity"));
    uint32_t c = ((1u << f.exponent_bits) - 1) << f.mantissa_bits;
    return static_cast<uint8_t>(c | (v < 0 ? 1u << (f.exponent_bits + f.mantissa_bits) : 0));
  }
  double max, beyond;
  FiniteRange(f, &max, &beyond);
  double mid = (max + beyond) / 2;
  uint8_t max_code = NearestFinite(f, max);
  bool overflow = std::fabs(v) > mid || (std::fabs(v) == mid && (max_code & 1));
  if (overflow || (!f.has_sign && v < 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("value ", v, " is out of range for ", type_name, " (largest finite value ", max, ")"));
  }
  return NearestFinite(f, v);
}

uint8_t SmallFloatEncodeSaturating(const SmallFloatFormat& f, double v) {
  absl::StatusOr<uint8_t> c = SmallFloatEncode(f, v, "");
  if (c.ok()) return *c;
  if (HasInf(f) && !std::isnan(v)) return *SmallFloatEncode(f, std::copysign(INFINITY, v), "");
  if (HasNan(f)) return NanCode(f, std::signbit(v));
  double max, beyond;
  FiniteRange(f, &max, &beyond);
  return NearestFinite(f, f.has_sign ? std::copysign(max, v) : (v < 0 ? 0 : max));
}

}  // namespace hlox
