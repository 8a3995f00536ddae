// Opcode/type combinations at the edge of XLA's operation semantics, each against a plain
// reference: complex atan2, 4-bit integer arithmetic, comparison and conversion (wrapping as
// XLA's s4/u4 do), the bit-counting ops and logical shift on 2- and 4-bit integers, dot without
// dimension numbers (no contraction: scalar product, outer product), complex convolution,
// ragged-all-to-all in a group of one, get-dimension-size in a computation whose signature
// names its parameters differently from the parameter instructions, and windows of scalars.
#include <cmath>
#include <complex>
#include <tuple>

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

// clz, popcnt and the logical right shift see only the type's own bits (not the byte that
// holds them): every value and every shift amount of s2, u2, s4 and u4.
TEST(OpsEdge, NarrowIntegerBitOpsSeeOnlyTheirBits) {
  for (const auto& [t, bits, sgn] : std::vector<std::tuple<std::string, int, bool>>{
           {"s4", 4, true}, {"u4", 4, false}, {"s2", 2, true}, {"u2", 2, false}}) {
    const int64_t n = int64_t{1} << bits, lo = sgn ? -n / 2 : 0;
    auto value = [&](int64_t k) { return lo + k; };
    auto a = MakeArray(S(absl::StrCat(t, "[", n * n, "]")), [&](int64_t i) { return static_cast<double>(value(i / n)); });
    auto b = MakeArray(S(absl::StrCat(t, "[", n * n, "]")), [&](int64_t i) { return static_cast<double>(value(i % n)); });
    const std::string shape = absl::StrCat(t, "[", n * n, "]");
    auto unary = [&](const std::string& op) {
      return RunText(absl::StrCat("HloModule m\nENTRY e {\n  a = ", shape, " parameter(0)\n  ROOT r = ", shape, " ",
                                  op, "(a)\n}\n"), {a});
    };
    auto clz = unary("count-leading-zeros");
    auto pop = unary("popcnt");
    auto srl = RunText(absl::StrCat("HloModule m\nENTRY e {\n  a = ", shape, " parameter(0)\n  b = ", shape,
                                    " parameter(1)\n  ROOT r = ", shape, " shift-right-logical(a, b)\n}\n"), {a, b});
    ASSERT_TRUE(clz.ok() && pop.ok() && srl.ok()) << t << ": " << clz.status() << pop.status() << srl.status();
    const std::vector<int64_t> c = ToInts(*clz), p = ToInts(*pop), r = ToInts(*srl);
    const uint64_t mask = static_cast<uint64_t>(n - 1);
    for (int64_t i = 0; i < n * n; ++i) {
      const uint64_t x = static_cast<uint64_t>(value(i / n)) & mask, amount = static_cast<uint64_t>(value(i % n)) & mask;
      int want_clz = bits;
      for (uint64_t v = x; v; v >>= 1) --want_clz;
      const uint64_t shifted = amount >= static_cast<uint64_t>(bits) ? 0 : x >> amount;
      // Read results back as the type: the top bit of a signed one is its sign.
      auto as_type = [&](uint64_t u) {
        return sgn && (u & (mask ^ (mask >> 1))) ? static_cast<int64_t>(u) - n : static_cast<int64_t>(u);
      };
      if (i % n == 0) {
        EXPECT_EQ(c[i], as_type(want_clz)) << t << " clz " << x;
        EXPECT_EQ(p[i], as_type(__builtin_popcountll(x))) << t << " popcnt " << x;
      }
      EXPECT_EQ(r[i], as_type(shifted)) << t << " " << x << " >> " << amount;
    }
  }
}

// A complex convolution against the direct sum over the window (1-D, padded, two features).
TEST(OpsEdge, ComplexConvolutionMatchesDirectSum) {
  for (const std::string t : {"c64", "c128"}) {
    const std::string text = absl::StrCat(
        "HloModule c\nENTRY e {\n  x = ", t, "[1,6,2] parameter(0)\n  k = ", t, "[3,2,2] parameter(1)\n"
        "  ROOT r = ", t, "[1,6,2] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n}\n");
    std::vector<std::complex<double>> xs(12), ks(12);
    for (int i = 0; i < 12; ++i) {
      xs[i] = {0.25 * i - 1, 0.5 - 0.125 * i};
      ks[i] = {0.1 * (i % 5) - 0.2, 0.3 - 0.05 * i};
    }
    auto fill = [&](const std::string& shape, const std::vector<std::complex<double>>& v) {
      Value out = MakeArray(S(shape), [](int64_t) { return 0.0; });
      for (size_t i = 0; i < v.size(); ++i) {
        if (t == "c64") out.array->as<std::complex<float>>()[i] = std::complex<float>(v[i]);
        else out.array->as<std::complex<double>>()[i] = v[i];
      }
      return out;
    };
    auto r = RunText(text, {fill(t + "[1,6,2]", xs), fill(t + "[3,2,2]", ks)});
    ASSERT_TRUE(r.ok()) << t << ": " << r.status();
    for (int o = 0; o < 6; ++o) {
      for (int f = 0; f < 2; ++f) {
        std::complex<double> want = 0;
        for (int w = 0; w < 3; ++w) {
          const int pos = o + w - 1;
          if (pos < 0 || pos >= 6) continue;
          for (int c = 0; c < 2; ++c) want += xs[pos * 2 + c] * ks[(w * 2 + c) * 2 + f];
        }
        const std::complex<double> got = t == "c64" ? std::complex<double>(r->array->as<std::complex<float>>()[o * 2 + f])
                                                     : r->array->as<std::complex<double>>()[o * 2 + f];
        EXPECT_NEAR(std::abs(got - want), 0.0, t == "c64" ? 1e-5 : 1e-12) << t << " " << o << " " << f;
      }
    }
  }
}

// ragged-all-to-all in a group of one: the updates for peer 0 (row 0 of 2-D offsets) move
// ragged rows of the input into the output buffer; everything else of the output stays.
TEST(OpsEdge, RaggedAllToAllMovesThePeerZeroRows) {
  for (const std::string idx : {"s32[1]", "s64[1,2]"}) {
    const bool two = idx == "s64[1,2]";
    const std::string text = absl::StrCat(
        "HloModule r\nENTRY e {\n  in = f32[6,2] parameter(0)\n  out = f32[5,2] parameter(1)\n"
        "  io = ", idx, " parameter(2)\n  ss = ", idx, " parameter(3)\n  oo = ", idx, " parameter(4)\n"
        "  rs = ", idx, " parameter(5)\n"
        "  ROOT r = f32[5,2] ragged-all-to-all(in, out, io, ss, oo, rs), replica_groups={{0}}\n}\n");
    auto in = MakeArray(S("f32[6,2]"), [](int64_t i) { return 100.0 + i; });
    auto out = MakeArray(S("f32[5,2]"), [](int64_t i) { return -1.0 - i; });
    // One update: rows [1, 3) -> [2, 4); with two: also row 5 -> row 0.
    auto ix = [&](std::vector<double> one, std::vector<double> both) {
      return MakeArray(S(idx), [&](int64_t i) { return two ? both[i] : one[i]; });
    };
    auto r = RunText(text, {in, out, ix({1}, {1, 5}), ix({2}, {2, 1}), ix({2}, {2, 0}), ix({2}, {2, 1})});
    ASSERT_TRUE(r.ok()) << idx << ": " << r.status();
    std::vector<double> want;
    for (int i = 0; i < 10; ++i) want.push_back(-1.0 - i);
    for (int row = 0; row < 2; ++row) for (int c = 0; c < 2; ++c) want[(2 + row) * 2 + c] = 100.0 + (1 + row) * 2 + c;
    if (two) for (int c = 0; c < 2; ++c) want[c] = 100.0 + 5 * 2 + c;
    EXPECT_EQ(ToDoubles(*r), want) << idx;
    // An update past the end of the output is an error naming the rows.
    auto bad = RunText(text, {in, out, ix({1}, {1, 5}), ix({2}, {2, 1}), ix({4}, {4, 0}), ix({2}, {2, 1})});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("outside"), std::string::npos) << bad.status();
  }
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

// reduce-window and select-and-scatter of scalars, written without window= as XLA's parser tests
// do: the one window holds the one element.
TEST(OpsEdge, ScalarWindowsWithoutAWindowAttribute) {
  const char add[] = "add {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT s = f32[] add(l, r)\n}\n";
  const char ge[] = "ge {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT c = pred[] compare(l, r), direction=GE\n}\n";
  auto x = MakeArray(S("f32[]"), [](int64_t) { return 42.0; });
  auto y = MakeArray(S("f32[]"), [](int64_t) { return 1.5; });
  auto z = MakeArray(S("f32[]"), [](int64_t) { return 2.0; });
  auto r = RunText(absl::StrCat("HloModule w\n", add, "ENTRY e {\n  x = f32[] parameter(0)\n  i = f32[] parameter(1)\n",
                                "  ROOT w = f32[] reduce-window(x, i), to_apply=add\n}\n"),
                   {x, y});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), std::vector<double>{43.5});
  // The operand's only element is selected; the output starts at init (2) and gains the source (1.5).
  r = RunText(absl::StrCat("HloModule s\n", add, ge, "ENTRY e {\n  x = f32[] parameter(0)\n  s = f32[] parameter(1)\n",
                           "  i = f32[] parameter(2)\n  ROOT r = f32[] select-and-scatter(x, s, i), select=ge, scatter=add\n}\n"),
              {x, y, z});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), std::vector<double>{3.5});
}

}  // namespace
}  // namespace hlox::rt
