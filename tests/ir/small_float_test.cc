// The small-float encoder (a binary search over each format's sorted codes) against a plain scan
// of every code, and `convert`'s rule (SmallFloatConvert) where it differs from one rounding.
#include "ir/small_float.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace hlox {
namespace {

int Codes(const SmallFloatFormat& f) {
  return 1 << (f.exponent_bits + f.mantissa_bits + (f.has_sign ? 1 : 0));
}

// The nearest finite code by looking at all of them: least error, then the code whose sign is
// v's, then the even code, then the lower code.
int NearestByScan(const SmallFloatFormat& f, double v) {
  int best = -1;
  double best_err = std::numeric_limits<double>::infinity();
  for (int c = 0; c < Codes(f); ++c) {
    const double d = SmallFloatDecode(f, static_cast<uint8_t>(c));
    if (!std::isfinite(d)) continue;
    const double err = std::fabs(d - v);
    if (err > best_err) continue;
    if (err == best_err) {
      const double b = SmallFloatDecode(f, static_cast<uint8_t>(best));
      const bool sign = std::signbit(d) == std::signbit(v), best_sign = std::signbit(b) == std::signbit(v);
      if (sign != best_sign ? !sign : (c & 1) >= (best & 1)) continue;
    }
    best = c;
    best_err = err;
  }
  return best;
}

TEST(SmallFloat, TheListHoldsExactlyTheTypesWithAFormat) {
  int with_format = 0;
#define HLOX_COUNT_FORMAT(e, s, b, k) with_format += SmallFloatFormatOf(PrimitiveType::e).has_value() ? 1 : 0;
  HLOX_PRIMITIVE_TYPE_LIST(HLOX_COUNT_FORMAT)
#undef HLOX_COUNT_FORMAT
  EXPECT_EQ(with_format, static_cast<int>(std::size(kSmallFloatTypes)));
  for (PrimitiveType t : kSmallFloatTypes) EXPECT_TRUE(SmallFloatFormatOf(t).has_value()) << PrimitiveTypeName(t);
}

TEST(SmallFloat, EncodeFindsTheCodeAScanFinds) {
  std::mt19937_64 rng(7);
  for (PrimitiveType t : kSmallFloatTypes) {
    const SmallFloatFormat f = *SmallFloatFormatOf(t);
    std::vector<double> values;
    for (int c = 0; c < Codes(f); ++c) {
      const double d = SmallFloatDecode(f, static_cast<uint8_t>(c));
      if (std::isfinite(d)) values.push_back(d);
    }
    const size_t n = values.size();
    double largest = 0;
    for (double a : values) largest = std::max(largest, std::fabs(a));
    std::sort(values.begin(), values.end());
    for (size_t i = 0; i + 1 < n; ++i) {
      const double mid = (values[i] + values[i + 1]) / 2;  // every tie, and just either side
      for (double v : {mid, std::nextafter(mid, -INFINITY), std::nextafter(mid, INFINITY)}) {
        values.push_back(v);
      }
    }
    std::uniform_real_distribution<double> any(f.has_sign ? -largest : 0, largest);
    for (int k = 0; k < 2000; ++k) values.push_back(any(rng));
    for (double v : values) {
      if (!f.has_sign && v < 0) continue;
      absl::StatusOr<uint8_t> got = SmallFloatEncode(f, v, "t");
      ASSERT_TRUE(got.ok()) << PrimitiveTypeName(t) << " " << v << ": " << got.status();
      ASSERT_EQ(int{*got}, NearestByScan(f, v)) << PrimitiveTypeName(t) << " " << v;
    }
  }
}

TEST(SmallFloat, ConvertRoundsThroughF16WhereXlaDoes) {
  // 1 + 1/8 + 2^-12 is nearer 1.25 than 1 in f8e5m2, but f16 rounds it to the tie 1.125 first,
  // which goes to the even code (1.0), as XLA's f32 -> f16 -> f8e5m2 convert does.
  const double v = 1.125 + std::ldexp(1.0, -12);
  const SmallFloatFormat e5m2 = *SmallFloatFormatOf(PrimitiveType::kF8E5M2);
  EXPECT_EQ(SmallFloatEncodeSaturating(e5m2, v), 0x3d);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E5M2, v), 0x3c);
  // f8e4m3 converts directly (one rounding): 1 + 1/16 + 2^-14 goes up.
  const double w = 1.0625 + std::ldexp(1.0, -14);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E4M3, w),
            SmallFloatEncodeSaturating(*SmallFloatFormatOf(PrimitiveType::kF8E4M3), w));
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E4M3, w), 0x39);
}

TEST(SmallFloat, ConvertOverflowAndNanFollowTheType) {
  // f8e4m3fn has no infinity: past 464 (the tie above 448) is NaN, not 448.
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E4M3FN, 464), 0x7e);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E4M3FN, 465), 0x7f);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E4M3FN, -1e6), 0xff);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E5M2, 1e6), 0x7c);   // +inf
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E5M2, 65520), 0x7c); // f16 overflows first
  // f4e2m1fn has neither: overflow saturates to +-6, NaN is -0.
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF4E2M1FN, 100), 0x7);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF4E2M1FN, -6.5), 0xf);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF4E2M1FN, std::nan("")), 0x8);
  // Subnormals of f16 on the way: 2^-20 is a f16 subnormal, and f8e5m2's smallest value is
  // 2^-16, so it rounds to zero; 1.5 * 2^-16 is a tie that goes to the even code 2 (2^-15).
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E5M2, std::ldexp(1.0, -20)), 0x00);
  EXPECT_EQ(SmallFloatConvert(PrimitiveType::kF8E5M2, std::ldexp(1.5, -16)), 0x02);
}

}  // namespace
}  // namespace hlox
