// The f32 vector math (runtime/math/vmath.h) on every instruction-set level the CPU has, against
// std::exp / std::tanh / std::erf / std::log evaluated in double: a sweep over the whole f32 range (every
// 509th bit pattern, both signs, denormals included), dense sweeps where the formulas switch
// (exp's overflow and underflow edges, tanh's and erf's saturation, log's mantissa split) and the special
// values (+-0, +-inf, NaN). Errors are counted in ulps of the float nearest the exact result.
// Every level must give the same bits (the formulas are the same IEEE operations, lane by
// lane), and array results must not depend on the element's position (tails run as one partial
// vector).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/opcode.h"
#include "runtime/math/block_ops.h"
#include "runtime/math/vmath.h"
#include "tests/test_util.h"

namespace hlox::rt::vmath {
namespace {

using ArrayFn = void (*)(const float*, float*, int64_t);

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// |got - ref| in ulps of the float nearest ref (denormal ulp below FLT_MIN).
double UlpError(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : 1e9;
  if (std::isinf(ref) || std::isinf(got)) {
    const float r = static_cast<float>(ref);
    return got == r ? 0 : 1e9;
  }
  const float r = static_cast<float>(ref);
  int e = 0;
  std::frexp(std::isinf(r) ? std::numeric_limits<float>::max() : r, &e);
  const double ulp = std::ldexp(1.0, std::max(e, -125) - 24);
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

std::vector<float> SweepValues() {
  std::vector<float> v;
  for (uint64_t u = 0; u <= 0xffffffffull; u += 509) v.push_back(FromBits(static_cast<uint32_t>(u)));
  for (float x = -12.f; x <= 12.f; x += 1.0f / 4096) v.push_back(x);
  for (float x = 7.9f; x <= 8.1f; x = std::nextafter(x, 9.f)) {  // tanh's clamp
    v.push_back(x);
    v.push_back(-x);
  }
  for (float x = 3.9f; x <= 3.95f; x = std::nextafter(x, 4.f)) {  // erf's clamp
    v.push_back(x);
    v.push_back(-x);
  }
  for (float x = 0.70f; x <= 0.72f; x = std::nextafter(x, 1.f)) v.push_back(x);  // log's split
  for (float x = 1.40f; x <= 1.42f; x = std::nextafter(x, 2.f)) v.push_back(x);
  for (float x = 0.999f; x <= 1.001f; x = std::nextafter(x, 2.f)) v.push_back(x);  // log near 1
  for (float x = 88.0f; x <= 89.5f; x += 1.0f / 8192) v.push_back(x);  // exp overflow edge
  for (float x = -105.f; x <= -86.f; x += 1.0f / 2048) v.push_back(x);  // exp denormal range
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {0.f, -0.f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::min(), std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max()}) {
    v.push_back(x);
  }
  return v;
}

// fn over the sweep with the given level active.
std::vector<float> Apply(ArrayFn fn) {
  const std::vector<float> x = SweepValues();
  std::vector<float> y(x.size());
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

// Max ulp error of fn against ref on every level, and the same bits on every level.
template <typename Ref>
void Check(const char* name, ArrayFn fn, Ref ref, double max_ulp) {
  const std::vector<float> x = SweepValues();
  std::vector<float> first;
  hlox::testing::ForEachIsaLevel([&](IsaLevel level) {
    const std::vector<float> y = Apply(fn);
    double worst = 0;
    float worst_x = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double e = UlpError(y[i], ref(static_cast<double>(x[i])));
      if (e > worst) {
        worst = e;
        worst_x = x[i];
      }
    }
    std::printf("%s [%s]: %zu values, max error %.3f ulp (at %.9g)\n", name, std::string(IsaName(level)).c_str(),
                x.size(), worst, worst_x);
    EXPECT_LE(worst, max_ulp) << name << " at x=" << worst_x;
    if (first.empty()) {
      first = y;
      return;
    }
    size_t differ = 0, at = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::memcmp(&first[i], &y[i], 4) != 0 && differ++ == 0) at = i;
    }
    EXPECT_EQ(differ, 0u) << name << ": bits differ from the generic level's, first at x=" << x[at] << " ("
                          << first[at] << " vs " << y[at] << ")";
  });
}

TEST(VmathTest, ExpWithinOneUlpOfDouble) {
  Check("exp", ExpF32, [](double v) { return std::exp(v); }, 1.0);
}

TEST(VmathTest, TanhWithinFiveUlpsOfDouble) {
  // A rational approximation; measured 4.80 ulp near |x| = 5.9. XLA's exhaustive f32 tests
  // accept a relative error of 20 * FLT_EPSILON (up to 40 ulp), so 5 ulp is well inside.
  Check("tanh", TanhF32, [](double v) { return std::tanh(v); }, 5.0);
}

TEST(VmathTest, ErfWithinSevenUlpsOfDouble) {
  // A rational function of x^2, fitted for hlox: 1.1 ulp in exact arithmetic, up to about 6.6
  // ulp near |x| = 3.9 where erf is close to 1 and the f32 evaluation's roundings add up.
  Check("erf", ErfF32, [](double v) { return std::erf(v); }, 7.0);
}

TEST(VmathTest, LogisticWithinFewUlpsOfDouble) {
  Check("logistic", LogisticF32, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }, 3.0);
}

TEST(VmathTest, LogWithinOneUlpOfDouble) {
  Check("log", LogF32, [](double v) { return v < 0 ? std::nan("") : std::log(v); }, 1.0);
}

TEST(VmathTest, RuntimeBlockMathIsVmath) {
  // The fused block loop and the unfused kernels reach the same functions (fused::UnaryFloat).
  const std::vector<float> x = SweepValues();
  const int64_t n = static_cast<int64_t>(x.size());
  for (auto [op, fn] : {std::pair<Opcode, ArrayFn>{Opcode::kExp, ExpF32}, std::pair<Opcode, ArrayFn>{Opcode::kTanh, TanhF32},
                        std::pair<Opcode, ArrayFn>{Opcode::kErf, ErfF32},
                        std::pair<Opcode, ArrayFn>{Opcode::kLogistic, LogisticF32},
                        std::pair<Opcode, ArrayFn>{Opcode::kLog, LogF32}}) {
    std::vector<float> a(x.size()), b(x.size());
    ASSERT_TRUE(fused::UnaryFloat<float>(op, x.data(), a.data(), n));
    fn(x.data(), b.data(), n);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * 4)) << OpcodeName(op);
  }
}

TEST(VmathTest, SqrtIsCorrectlyRounded) {
  // Bit-identical to std::sqrt (IEEE, correctly rounded) on the whole sweep, denormals and
  // negatives included: fused and unfused sqrt must agree to the bit.
  const std::vector<float> x = SweepValues();
  hlox::testing::ForEachIsaLevel([&](IsaLevel) {
    const std::vector<float> y = Apply(SqrtF32);
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::sqrt(x[i]);
      differ += std::memcmp(&want, &y[i], 4) != 0 && !(std::isnan(want) && std::isnan(y[i]));
    }
    EXPECT_EQ(differ, 0u);
  });
}

TEST(VmathTest, SpecialValues) {
  hlox::testing::ForEachIsaLevel([](IsaLevel) {
  const float inf = std::numeric_limits<float>::infinity();
  const float in[7] = {inf, -inf, 0.f, -0.f, std::numeric_limits<float>::quiet_NaN(), 1e-40f, -2.f};
  float e[7], t[7], l[7], f[7];
  ExpF32(in, e, 7);
  TanhF32(in, t, 7);
  LogF32(in, l, 7);
  ErfF32(in, f, 7);
  EXPECT_EQ(f[0], 1.f);
  EXPECT_EQ(f[1], -1.f);
  EXPECT_EQ(f[2], 0.f);
  EXPECT_TRUE(std::signbit(f[3]));
  EXPECT_TRUE(std::isnan(f[4]));
  EXPECT_NEAR(f[5], 1.1283791670955126 * 1e-40, 3e-45);  // 2 denormal ulps
  EXPECT_NEAR(f[6], std::erf(-2.0), 5e-7);
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0.f);
  EXPECT_EQ(e[2], 1.f);
  EXPECT_EQ(e[3], 1.f);
  EXPECT_TRUE(std::isnan(e[4]));
  EXPECT_EQ(e[5], 1.f);
  EXPECT_EQ(t[0], 1.f);
  EXPECT_EQ(t[1], -1.f);
  EXPECT_EQ(t[2], 0.f);
  EXPECT_TRUE(std::signbit(t[3]));
  EXPECT_TRUE(std::isnan(t[4]));
  EXPECT_EQ(t[5], 1e-40f);  // tiny (denormal) x: tanh(x) == x
  EXPECT_EQ(l[0], inf);
  EXPECT_TRUE(std::isnan(l[1]));
  EXPECT_EQ(l[2], -inf);
  EXPECT_EQ(l[3], -inf);
  EXPECT_TRUE(std::isnan(l[4]));
  EXPECT_NEAR(l[5], std::log(1e-40), 1e-4);
  EXPECT_TRUE(std::isnan(l[6]));
  });
}

TEST(VmathTest, ResultsIndependentOfPosition) {
  // Every length 1..40 and offset: tail lanes (masked) give the same bits as full vectors.
  hlox::testing::ForEachIsaLevel([](IsaLevel) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -3.f + 0.37f * static_cast<float>(i);
  std::vector<float> full(64), part(64);
  TanhF32(x.data(), full.data(), 64);
  for (int64_t off = 0; off < 16; ++off) {
    for (int64_t n = 1; n + off <= 48; ++n) {
      TanhF32(x.data() + off, part.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(part[i], full[off + i]) << off << " " << n;
    }
  }
  });
}

}  // namespace
}  // namespace hlox::rt::vmath
