// ragged-dot and scaled-dot against plain nested-loop references written out per case (no
// shared indexing code with the kernels), on random inputs: all three ragged modes, group
// sizes per batch, groups that stop short of or run past the ragged dimension, empty groups,
// integer and complex results; scaled-dot with f32 and with f8e4m3fn values under f8e8m0fnu
// scales. Also mulhi against 128-bit products and atan against std::atan.
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt::testing {
namespace {

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

// The group of row r for sizes starting at `s` (g of them), or -1 past the last group.
int64_t GroupOf(const std::vector<double>& s, int64_t off, int64_t g, int64_t r, int64_t rows) {
  int64_t start = 0;
  for (int64_t t = 0; t < g; ++t) {
    const int64_t end = std::min<int64_t>(rows, start + static_cast<int64_t>(s[off + t]));
    if (r >= start && r < end) return t;
    start = end;
  }
  return -1;
}

std::vector<double> Values(const std::string& shape, int64_t n, uint64_t seed) {
  std::vector<double> v(n);
  auto gen = Uniform(seed, -1, 1);
  for (int64_t i = 0; i < n; ++i) v[i] = RoundTo(S(shape).element_type(), gen(i));
  return v;
}

Value FromVector(const std::string& shape, const std::vector<double>& v) {
  return MakeArray(S(shape), [&](int64_t i) { return v[i]; });
}

// lhs [m,k] rows split into groups, group t times rhs[t]: out [m,n].
TEST(RaggedDot, NonContractingMatchesGroupedReference) {
  const int64_t m = 37, k = 19, n = 23, g = 4;
  for (const std::vector<double>& sizes : {std::vector<double>{10, 0, 20, 7}, std::vector<double>{5, 9, 3, 2},
                                           std::vector<double>{30, 4, 9, 1}}) {
    const std::vector<double> l = Values("f32[1]", m * k, 1), r = Values("f32[1]", g * k * n, 2);
    const std::string text = absl::StrCat(
        "HloModule r\nENTRY e {\n  l = f32[", m, ",", k, "] parameter(0)\n  r = f32[", g, ",", k, ",", n,
        "] parameter(1)\n  s = s32[", g, "] parameter(2)\n  ROOT d = f32[", m, ",", n,
        "] ragged-dot(l, r, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
        "rhs_group_dims={0}\n}\n");
    std::vector<double> want(m * n, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t t = GroupOf(sizes, 0, g, i, m);
      if (t < 0) continue;
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) acc += l[i * k + c] * r[(t * k + c) * n + j];
        want[i * n + j] = acc;
      }
    }
    for (int threads : {1, 4}) {
      auto got = RunText(text, {FromVector(absl::StrCat("f32[", m, ",", k, "]"), l),
                                FromVector(absl::StrCat("f32[", g, ",", k, ",", n, "]"), r),
                                FromVector(absl::StrCat("s32[", g, "]"), sizes)}, threads);
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectNear(ToDoubles(*got), want, 1e-5, absl::StrCat("sizes ", sizes[0], " threads ", threads));
    }
  }
}

// Batch dimension b with its own split per batch: lhs [b,m,k], rhs [b,g,k,n] (group dim 1),
// sizes [b,g]: out [b,m,n].
TEST(RaggedDot, PerBatchGroupSizes) {
  const int64_t b = 3, m = 6, k = 5, n = 4, g = 3;
  const std::vector<double> l = Values("f64[1]", b * m * k, 3), r = Values("f64[1]", b * g * k * n, 4);
  const std::vector<double> sizes = {2, 2, 2, 0, 6, 0, 1, 1, 1};  // batch 2 stops after 3 rows
  const std::string text =
      "HloModule r\nENTRY e {\n  l = f64[3,6,5] parameter(0)\n  r = f64[3,3,5,4] parameter(1)\n"
      "  s = s64[3,3] parameter(2)\n  ROOT d = f64[3,6,4] ragged-dot(l, r, s), lhs_batch_dims={0}, "
      "rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, "
      "rhs_group_dims={1}\n}\n";
  std::vector<double> want(b * m * n, 0.0);
  for (int64_t x = 0; x < b; ++x) {
    for (int64_t i = 0; i < m; ++i) {
      const int64_t t = GroupOf(sizes, x * g, g, i, m);
      if (t < 0) continue;
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) acc += l[(x * m + i) * k + c] * r[((x * g + t) * k + c) * n + j];
        want[(x * m + i) * n + j] = acc;
      }
    }
  }
  auto got = RunText(text, {FromVector("f64[3,6,5]", l), FromVector("f64[3,3,5,4]", r), FromVector("s64[3,3]", sizes)});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectNear(ToDoubles(*got), want, 1e-12, "per batch");
}

// Ragged contracting dimension: lhs [m,k], rhs [k,n], k split into groups: out [g,m,n], result
// t summing group t's part of k only.
TEST(RaggedDot, ContractingGivesOneResultPerGroup) {
  const int64_t m = 7, k = 12, n = 5, g = 3;
  const std::vector<double> l = Values("f32[1]", m * k, 5), r = Values("f32[1]", k * n, 6);
  const std::vector<double> sizes = {4, 0, 6};  // the last 2 columns of k are in no group
  const std::string text =
      "HloModule r\nENTRY e {\n  l = f32[7,12] parameter(0)\n  r = f32[12,5] parameter(1)\n  s = s32[3] parameter(2)\n"
      "  ROOT d = f32[3,7,5] ragged-dot(l, r, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
      "lhs_ragged_dims={1}\n}\n";
  std::vector<double> want(g * m * n, 0.0);
  for (int64_t t = 0; t < g; ++t) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) {
          if (GroupOf(sizes, 0, g, c, k) == t) acc += l[i * k + c] * r[c * n + j];
        }
        want[(t * m + i) * n + j] = acc;
      }
    }
  }
  auto got = RunText(text, {FromVector("f32[7,12]", l), FromVector("f32[12,5]", r), FromVector("s32[3]", sizes)});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectNear(ToDoubles(*got), want, 1e-5, "contracting");
}

// Ragged batch dimension: a batched dot over the batch rows inside the groups, zero after.
TEST(RaggedDot, BatchModeIsADotOverTheGroupedRows) {
  const std::vector<double> l = Values("f32[1]", 4 * 2 * 3, 7), r = Values("f32[1]", 4 * 3 * 2, 8);
  const std::string text =
      "HloModule r\nENTRY e {\n  l = f32[4,2,3] parameter(0)\n  r = f32[4,3,2] parameter(1)\n  s = s32[2] parameter(2)\n"
      "  ROOT d = f32[4,2,2] ragged-dot(l, r, s), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={0}\n}\n";
  std::vector<double> want(4 * 2 * 2, 0.0);
  for (int64_t x = 0; x < 3; ++x) {  // sizes {1, 2}: batch rows 0..2 grouped, row 3 not
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < 3; ++c) acc += l[(x * 2 + i) * 3 + c] * r[(x * 3 + c) * 2 + j];
        want[(x * 2 + i) * 2 + j] = acc;
      }
    }
  }
  auto got = RunText(text, {FromVector("f32[4,2,3]", l), FromVector("f32[4,3,2]", r), FromVector("s32[2]", {1, 2})});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectNear(ToDoubles(*got), want, 1e-5, "batch");
}

TEST(RaggedDot, IntegerAndComplexResults) {
  // s8 operands, s32 result: exact integer sums.
  const std::string ints =
      "HloModule r\nENTRY e {\n  l = s8[3,2] parameter(0)\n  r = s8[2,2,1] parameter(1)\n  s = s32[2] parameter(2)\n"
      "  ROOT d = s32[3,1] ragged-dot(l, r, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
      "lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n";
  auto got = RunText(ints, {FromVector("s8[3,2]", {100, 100, -100, 7, 3, 4}), FromVector("s8[2,2,1]", {100, 2, -1, 10}),
                            FromVector("s32[2]", {1, 2})});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(ToInts(*got), (std::vector<int64_t>{100 * 100 + 100 * 2, 100 + 70, -3 + 40}));
  // c64: (1+2i)(3-i) = 5+5i in group 0; row 1 past the groups is zero.
  const std::string cx =
      "HloModule r\nENTRY e {\n  a = f32[2,1] parameter(0)\n  b = f32[2,1] parameter(1)\n  l = c64[2,1] complex(a, b)\n"
      "  r = c64[1,1,1] constant({ { {(3, -1)} } })\n  s = s32[1] constant({1})\n"
      "  d = c64[2,1] ragged-dot(l, r, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
      "lhs_ragged_dims={0}, rhs_group_dims={0}\n  ROOT im = f32[2,1] imag(d)\n}\n";
  got = RunText(cx, {FromVector("f32[2,1]", {1, 9}), FromVector("f32[2,1]", {2, 9})});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(ToDoubles(*got), (std::vector<double>{5, 0}));
}

TEST(RaggedDot, NegativeGroupSizeIsARunError) {
  const std::string text =
      "HloModule r\nENTRY e {\n  l = f32[3,2] parameter(0)\n  r = f32[2,2,1] parameter(1)\n  s = s32[2] parameter(2)\n"
      "  ROOT d = f32[3,1] ragged-dot(l, r, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
      "lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n";
  auto got = RunText(text, {FromVector("f32[3,2]", {1, 2, 3, 4, 5, 6}), FromVector("f32[2,2,1]", {1, 1, 1, 1}),
                            FromVector("s32[2]", {2, -1})});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("negative"), std::string::npos) << got.status();
}

// scaled-dot: lhs [4,8] with scales [4,2] (blocks of 4 along k), rhs [8,3] with scales [2,3].
TEST(ScaledDot, AppliesBlockScalesBeforeContracting) {
  const std::vector<double> l = Values("f32[1]", 32, 9), r = Values("f32[1]", 24, 10);
  const std::vector<double> ls = {1, 2, 0.5, 4, 8, 0.25, 1, 1}, rs = {2, 4, 0.5, 1, 16, 0.125};
  // out[i,j] = sum_c lhs[i,c] * ls[i, c/4] * rhs[c,j] * rs[c/4, j]
  auto reference = [&](const std::vector<double>& lv, const std::vector<double>& rv) {
    std::vector<double> out(12, 0.0);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int c = 0; c < 8; ++c) out[i * 3 + j] += lv[i * 8 + c] * ls[i * 2 + c / 4] * rv[c * 3 + j] * rs[(c / 4) * 3 + j];
      }
    }
    return out;
  };
  const std::vector<double> want = reference(l, r);
  const std::string f32 =
      "HloModule s\nENTRY e {\n  l = f32[4,8] parameter(0)\n  r = f32[8,3] parameter(1)\n  ls = f32[4,2] parameter(2)\n"
      "  rs = f32[2,3] parameter(3)\n  ROOT d = f32[4,3] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}\n}\n";
  auto got = RunText(f32, {FromVector("f32[4,8]", l), FromVector("f32[8,3]", r), FromVector("f32[4,2]", ls),
                           FromVector("f32[2,3]", rs)});
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectNear(ToDoubles(*got), want, 1e-5, "f32");
  // The same through f8e4m3fn values and f8e8m0fnu scales (inputs chosen exact in both).
  std::vector<double> l8(32), r8(24);
  for (int i = 0; i < 32; ++i) l8[i] = (i % 7) - 3 + (i % 2) * 0.5;
  for (int i = 0; i < 24; ++i) r8[i] = (i % 5) - 2;
  std::vector<double> want8 = reference(l8, r8);
  const std::string f8 =
      "HloModule s\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,3] parameter(1)\n  c = f32[4,2] parameter(2)\n"
      "  d = f32[2,3] parameter(3)\n  l = f8e4m3fn[4,8] convert(a)\n  r = f8e4m3fn[8,3] convert(b)\n"
      "  ls = f8e8m0fnu[4,2] convert(c)\n  rs = f8e8m0fnu[2,3] convert(d)\n"
      "  ROOT o = bf16[4,3] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  got = RunText(f8, {FromVector("f32[4,8]", l8), FromVector("f32[8,3]", r8), FromVector("f32[4,2]", ls),
                     FromVector("f32[2,3]", rs)});
  ASSERT_TRUE(got.ok()) << got.status();
  for (double& w : want8) w = RoundTo(PrimitiveType::kBF16, w);
  ExpectNear(ToDoubles(*got), want8, 0, "f8");
}

// mulhi: the high half of the double-width product, signed or unsigned by the type.
TEST(Mulhi, HighHalfOfTheWideProduct) {
  struct Case { const char* type; int bits; bool is_signed; };
  for (const Case c : {Case{"s8", 8, true}, Case{"u8", 8, false}, Case{"s16", 16, true}, Case{"u16", 16, false},
                       Case{"s32", 32, true}, Case{"u32", 32, false}, Case{"s64", 64, true}, Case{"u64", 64, false},
                       Case{"s4", 4, true}, Case{"u4", 4, false}}) {
    const std::string t = c.type;
    std::vector<double> x, y;
    const __int128 lo = c.is_signed ? -(static_cast<__int128>(1) << (c.bits - 1)) : 0;
    const __int128 hi = c.is_signed ? (static_cast<__int128>(1) << (c.bits - 1)) - 1 : (static_cast<__int128>(1) << c.bits) - 1;
    // Extremes and small values (exact in double up to 2^53; the 64-bit cases use values that are).
    const __int128 big = c.bits == 64 ? (static_cast<__int128>(1) << 52) : hi;
    const __int128 small = c.bits == 64 && c.is_signed ? -(static_cast<__int128>(1) << 52) : lo;
    const std::vector<__int128> vals = {small, big, 0, 1, hi / 3, c.is_signed ? -1 : 2, small / 2 + 1, 3};
    for (__int128 a : vals) for (__int128 b : vals) { x.push_back(static_cast<double>(a)); y.push_back(static_cast<double>(b)); }
    const std::string n = std::to_string(x.size());
    const std::string text = "HloModule m\nENTRY e {\n  x = " + t + "[" + n + "] parameter(0)\n  y = " + t + "[" + n +
                             "] parameter(1)\n  ROOT r = " + t + "[" + n + "] mulhi(x, y)\n}\n";
    auto got = RunText(text, {FromVector(t + "[" + n + "]", x), FromVector(t + "[" + n + "]", y)});
    ASSERT_TRUE(got.ok()) << t << ": " << got.status();
    const std::vector<int64_t> g = ToInts(*got);
    for (size_t i = 0; i < x.size(); ++i) {
      const __int128 p = static_cast<__int128>(x[i]) * static_cast<__int128>(y[i]);
      const __int128 want = p >> c.bits;  // arithmetic shift: floor division by 2^bits
      EXPECT_EQ(g[i], static_cast<int64_t>(want)) << t << " " << x[i] << " * " << y[i];
    }
  }
  // mulhi of floats is a verifier error.
  auto bad = RunText("HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT r = f32[2] mulhi(x, x)\n}\n",
                     {FromVector("f32[2]", {1, 2})});
  EXPECT_FALSE(bad.ok());
}

TEST(Atan, MatchesStdAtanOnRealAndComplex) {
  std::vector<double> x;
  for (int i = 0; i < 101; ++i) x.push_back((i - 50) * 0.37);
  for (const std::string t : {"f32", "f64", "bf16", "f16"}) {
    const std::string text = "HloModule a\nENTRY e {\n  x = " + t + "[101] parameter(0)\n  ROOT r = " + t + "[101] atan(x)\n}\n";
    auto got = RunText(text, {FromVector(t + "[101]", x)});
    ASSERT_TRUE(got.ok()) << t << ": " << got.status();
    std::vector<double> want;
    const PrimitiveType pt = S(t + "[1]").element_type();
    for (double v : x) want.push_back(RoundTo(pt, std::atan(RoundTo(pt, v))));
    ExpectNear(ToDoubles(*got), want, t == "f64" ? 1e-15 : t == "f32" ? 1e-7 : 1e-2, t);
  }
  const std::string cx = "HloModule a\nENTRY e {\n  x = f64[3] parameter(0)\n  y = f64[3] parameter(1)\n"
                         "  z = c128[3] complex(x, y)\n  a = c128[3] atan(z)\n  re = f64[3] real(a)\n  im = f64[3] imag(a)\n"
                         "  ROOT t = (f64[3], f64[3]) tuple(re, im)\n}\n";
  auto got = RunText(cx, {FromVector("f64[3]", {0.5, -2, 3}), FromVector("f64[3]", {0.25, 1, -4})});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->tuple.size(), 2u);
  const std::vector<double> re = ToDoubles(got->tuple[0]), im = ToDoubles(got->tuple[1]);
  const std::complex<double> in[3] = {{0.5, 0.25}, {-2, 1}, {3, -4}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(re[i], std::atan(in[i]).real(), 1e-14);
    EXPECT_NEAR(im[i], std::atan(in[i]).imag(), 1e-14);
  }
}

}  // namespace
}  // namespace hlox::rt::testing
