// Opcode/type combinations at the edge of XLA's operation semantics, each against a plain
// reference: complex atan2, 4-bit integer arithmetic, comparison and conversion (wrapping as
// XLA's s4/u4 do), dot without dimension numbers (no contraction: scalar product, outer
// product), and get-dimension-size in a computation whose signature names its parameters
// differently from the parameter instructions.
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::RunText;
using testing::S;
using testing::ToDoubles;
using testing::ToInts;

std::vector<std::complex<double>> Complexes(const Value& v) {
  std::vector<std::complex<double>> out;
  const auto* p = v.array->as<std::complex<float>>();
  for (int64_t i = 0; i < v.array->element_count(); ++i) out.emplace_back(p[i]);
  return out;
}

TEST(OpsEdge, ComplexAtan2FollowsXlaFormula) {
  const char* text = "HloModule a\nENTRY e {\n  y = c64[5] parameter(0)\n  x = c64[5] parameter(1)\n"
                     "  ROOT r = c64[5] atan2(y, x)\n}\n";
  const std::vector<std::complex<double>> ys = {{1, 0}, {0.5, 0.25}, {-1, 2}, {0.1, -0.3}, {2, 1}};
  const std::vector<std::complex<double>> xs = {{1, 0}, {-0.5, 1}, {3, -1}, {0.7, 0.2}, {-1, -1}};
  Value y = MakeArray(S("c64[5]"), [](int64_t) { return 0.0; }), x = MakeArray(S("c64[5]"), [](int64_t) { return 0.0; });
  for (int i = 0; i < 5; ++i) {
    y.array->as<std::complex<float>>()[i] = std::complex<float>(ys[i]);
    x.array->as<std::complex<float>>()[i] = std::complex<float>(xs[i]);
  }
  auto r = RunText(text, {y, x});
  ASSERT_TRUE(r.ok()) << r.status();
  const auto got = Complexes(*r);
  const std::complex<double> i(0, 1);
  for (int k = 0; k < 5; ++k) {
    const std::complex<double> yk(std::complex<float>(ys[k])), xk(std::complex<float>(xs[k]));
    const std::complex<double> want = -i * std::log((xk + i * yk) / std::sqrt(xk * xk + yk * yk));
    EXPECT_NEAR(std::abs(got[k] - want), 0.0, 1e-5 * std::max(1.0, std::abs(want))) << k;
  }
  // Real operands reduce to the real atan2.
  EXPECT_NEAR(got[0].real(), std::atan2(1.0, 1.0), 1e-6);
}

// Wraps v to a signed (or unsigned) 4-bit value.
int64_t Wrap4(int64_t v, bool is_signed) { return is_signed ? (((v & 15) ^ 8) - 8) : (v & 15); }

TEST(OpsEdge, FourBitIntegersWrap) {
  for (bool sgn : {true, false}) {
    const std::string t = sgn ? "s4" : "u4";
    const int64_t lo = sgn ? -8 : 0;
    // Every pair of 4-bit values.
    auto a = MakeArray(S(t + "[256]"), [lo](int64_t i) { return static_cast<double>(lo + i / 16); });
    auto b = MakeArray(S(t + "[256]"), [lo](int64_t i) { return static_cast<double>(lo + i % 16); });
    for (const std::string op : {"add", "multiply", "subtract"}) {
      const std::string text = absl::StrCat("HloModule m\nENTRY e {\n  a = ", t, "[256] parameter(0)\n  b = ", t,
                                            "[256] parameter(1)\n  ROOT r = ", t, "[256] ", op, "(a, b)\n}\n");
      auto r = RunText(text, {a, b}, 2);
      ASSERT_TRUE(r.ok()) << t << " " << op << ": " << r.status();
      const std::vector<int64_t> got = ToInts(*r);
      for (int64_t k = 0; k < 256; ++k) {
        const int64_t x = lo + k / 16, y = lo + k % 16;
        const int64_t want = Wrap4(op == "add" ? x + y : op == "multiply" ? x * y : x - y, sgn);
        ASSERT_EQ(got[k], want) << t << " " << op << " " << x << " " << y;
      }
    }
    const std::string cmp = absl::StrCat("HloModule m\nENTRY e {\n  a = ", t, "[256] parameter(0)\n  b = ", t,
                                         "[256] parameter(1)\n  ROOT r = pred[256] compare(a, b), direction=LT\n}\n");
    auto r = RunText(cmp, {a, b});
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<int64_t> got = ToInts(*r);
    for (int64_t k = 0; k < 256; ++k) EXPECT_EQ(got[k], (k / 16 < k % 16) ? 1 : 0) << t << " " << k;
  }
}

TEST(OpsEdge, FourBitConvertWrapsIntsAndSaturatesFloats) {
  auto ints = MakeArray(S("s32[6]"), [](int64_t i) { return std::vector<double>{20, -9, 7, -8, 15, 16}[i]; });
  auto r = RunText("HloModule m\nENTRY e {\n  a = s32[6] parameter(0)\n  ROOT r = s4[6] convert(a)\n}\n", {ints});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(*r), (std::vector<int64_t>{4, 7, 7, -8, -1, 0}));
  r = RunText("HloModule m\nENTRY e {\n  a = s32[6] parameter(0)\n  ROOT r = u4[6] convert(a)\n}\n", {ints});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(*r), (std::vector<int64_t>{4, 7, 7, 8, 15, 0}));
  auto floats = MakeArray(S("f32[5]"), [](int64_t i) { return std::vector<double>{100.0, -100.0, 3.7, -3.7, NAN}[i]; });
  r = RunText("HloModule m\nENTRY e {\n  a = f32[5] parameter(0)\n  ROOT r = s4[5] convert(a)\n}\n", {floats});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(*r), (std::vector<int64_t>{7, -8, 3, -3, 0}));
  // And back: s4 -> f32 is exact.
  auto s4 = MakeArray(S("s4[3]"), [](int64_t i) { return std::vector<double>{-8, 0, 7}[i]; });
  r = RunText("HloModule m\nENTRY e {\n  a = s4[3] parameter(0)\n  ROOT r = f32[3] convert(a)\n}\n", {s4});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), (std::vector<double>{-8, 0, 7}));
}

TEST(OpsEdge, DotWithoutDimensionNumbersContractsNothing) {
  auto x = MakeArray(S("f32[]"), [](int64_t) { return 3.0; }), y = MakeArray(S("f32[]"), [](int64_t) { return -2.5; });
  auto r = RunText("HloModule d\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                   "  ROOT r = f32[] dot(x, y)\n}\n", {x, y});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), std::vector<double>{-7.5});
  auto u = MakeArray(S("f32[3]"), [](int64_t i) { return i + 1.0; }), v = MakeArray(S("f32[4]"), [](int64_t i) { return i - 1.5; });
  r = RunText("HloModule d\nENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[4] parameter(1)\n"
              "  ROOT r = f32[3,4] dot(x, y)\n}\n", {u, v});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) for (int j = 0; j < 4; ++j) want.push_back((i + 1.0) * (j - 1.5));
  EXPECT_EQ(ToDoubles(*r), want);
}

TEST(OpsEdge, GetDimensionSizeWithRenamedSignatureParameters) {
  // The runtime takes a bounded dimension's argument at its bound (a smaller one is refused).
  auto p = MakeArray(S("f32[8]"), [](int64_t i) { return static_cast<double>(i); });
  auto r = RunText("HloModule g\nENTRY e (arg: f32[<=8]) -> s32[] {\n  p = f32[<=8] parameter(0)\n"
                   "  ROOT r = s32[] get-dimension-size(p), dimensions={0}\n}\n", {p});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(*r), std::vector<int64_t>{8});
}

}  // namespace
}  // namespace hlox::rt
