// Small floats from their decoded codes: with at most 256 codes, a table of every finite code
// sorted by value is simpler to trust than bit tricks per format. Encoding is a binary search
// in it, then the same nearest/tie rule over the two neighbouring values.
#include "ir/small_float.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

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

// Every finite code of a format by value (-0 before +0), with the largest finite value and
// the value one step beyond it (where rounding would land next).
struct Codebook {
  std::vector<std::pair<double, uint8_t>> finite;
  double max = 0, beyond = 0;
  uint8_t max_code = 0;
};

Codebook BuildCodebook(const SmallFloatFormat& f) {
  Codebook b;
  for (int c = 0; c < CodeCount(f); ++c) {
    double v = SmallFloatDecode(f, static_cast<uint8_t>(c));
    if (std::isfinite(v)) b.finite.emplace_back(v, static_cast<uint8_t>(c));
  }
  std::sort(b.finite.begin(), b.finite.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first < y.first;
    return std::signbit(x.first) > std::signbit(y.first);
  });
  b.max = b.finite.back().first;
  b.max_code = b.finite.back().second;
  double below = 0;
  for (const auto& [v, c] : b.finite) {
    if (v < b.max) below = v;
  }
  b.beyond = f.mantissa_bits == 0 ? 2 * b.max : b.max + (b.max - below);
  return b;
}

bool SameFormat(const SmallFloatFormat& x, const SmallFloatFormat& y) {
  return x.exponent_bits == y.exponent_bits && x.mantissa_bits == y.mantissa_bits &&
         x.bias == y.bias && x.has_sign == y.has_sign && x.specials == y.specials;
}

// The codebook of `f`: built once for the formats of the element types; another format (a
// caller's own) gets one built into `scratch`.
const Codebook& CodebookOf(const SmallFloatFormat& f, Codebook& scratch) {
  static const auto* known = [] {
    auto* books = new std::vector<std::pair<SmallFloatFormat, Codebook>>;
    for (PrimitiveType t : kSmallFloatTypes) {
      const SmallFloatFormat g = *SmallFloatFormatOf(t);
      books->emplace_back(g, BuildCodebook(g));
    }
    return books;
  }();
  for (const auto& [g, book] : *known) {
    if (SameFormat(g, f)) return book;
  }
  scratch = BuildCodebook(f);
  return scratch;
}

// Nearest finite code to the finite value `v`: ties go to the zero of v's sign, else to the
// even code (round half to even, as the mantissa's last bit is the code's last bit). Only the
// codes of the two values around `v` (both zeros, at most) can be nearest.
uint8_t NearestFinite(const Codebook& b, double v) {
  const auto& t = b.finite;
  const auto hi = std::lower_bound(t.begin(), t.end(), v,
                                   [](const auto& e, double x) { return e.first < x; });
  auto first = hi == t.begin() ? hi : std::prev(hi);
  while (first != t.begin() && std::prev(first)->first == first->first) --first;
  auto last = hi;
  while (last != t.end() && last->first == hi->first) ++last;
  int best = -1;
  double best_err = std::numeric_limits<double>::infinity();
  bool best_sign_ok = false;
  for (auto it = first; it != last; ++it) {
    const auto [d, c] = *it;
    const double err = std::fabs(d - v);
    const bool sign_ok = std::signbit(d) == std::signbit(v);
    const bool tie_wins = (sign_ok && !best_sign_ok) ||
                          (sign_ok == best_sign_ok && (c & 1) < (best & 1)) ||
                          (sign_ok == best_sign_ok && (c & 1) == (best & 1) && c < best);
    if (err < best_err || (err == best_err && tie_wins)) {
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
  Codebook scratch;
  const Codebook& b = CodebookOf(f, scratch);
  const double mid = (b.max + b.beyond) / 2;
  const bool overflow = std::fabs(v) > mid || (std::fabs(v) == mid && (b.max_code & 1));
  if (overflow || (!f.has_sign && v < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("value ", v, " is out of range for ", type_name,
                                                   " (largest finite value ", b.max, ")"));
  }
  return NearestFinite(b, v);
}

uint8_t SmallFloatEncodeSaturating(const SmallFloatFormat& f, double v) {
  absl::StatusOr<uint8_t> c = SmallFloatEncode(f, v, "");
  if (c.ok()) return *c;
  if (HasInf(f) && !std::isnan(v)) return *SmallFloatEncode(f, std::copysign(INFINITY, v), "");
  if (HasNan(f)) return NanCode(f, std::signbit(v));
  Codebook scratch;
  const Codebook& b = CodebookOf(f, scratch);
  return NearestFinite(b, f.has_sign ? std::copysign(b.max, v) : (v < 0 ? 0 : b.max));
}

namespace {

// `v` rounded to the nearest f16 value (ties to even), kept in a double; overflow is infinity.
double RoundToHalf(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  const double a = std::fabs(v);
  if (a >= 65520.0) return std::copysign(INFINITY, v);  // past the tie above f16's 65504
  int e = 0;
  std::frexp(a, &e);                                      // a = m * 2^e, m in [0.5, 1)
  const int lead = std::max(e - 1, -14);                  // subnormals share 2^-14's step
  const double step = std::ldexp(1.0, lead - 10);
  return std::copysign(std::nearbyint(a / step) * step, v);
}

}  // namespace

uint8_t SmallFloatConvert(PrimitiveType t, double v) {
  switch (t) {
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
      v = RoundToHalf(v);
      break;
    case PrimitiveType::kF4E2M1FN:
      if (std::isnan(v)) return 0x8;
      v = RoundToHalf(v);
      break;
    case PrimitiveType::kF8E8M0FNU:
      v = static_cast<float>(v);
      break;
    default:
      break;
  }
  return SmallFloatEncodeSaturating(*SmallFloatFormatOf(t), v);
}

}  // namespace hlox
