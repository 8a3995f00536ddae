// scan, shuffle and collective-reduce on the runtime, each against a plain loop written here:
// scans forward and reverse, over an inner dimension, with several inputs, outputs and carries
// and with a computation that returns its own parameters; rotations by positive, negative and
// oversized shifts over one and two dimensions; permutes in every indices form XLA's tests use;
// collective-reduce and collective-broadcast with a dynamic root in a group of one. Each on 1 and
// 2 threads.
#include <string>
#include <vector>

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

std::vector<double> Leaf(const Value& v, size_t i) { return ToDoubles(v.tuple.at(i)); }

TEST(NewerOps, ScanPrefixSumsForwardAndReverse) {
  const char f[] = "f {\n  x = f32[] parameter(0)\n  c = f32[] parameter(1)\n  s = f32[] add(x, c)\n"
                   "  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n";
  for (bool reverse : {false, true}) {
    for (int threads : {1, 2}) {
      const std::string text = absl::StrCat("HloModule s\n", f, "ENTRY e {\n  in = f32[6] parameter(0)\n  init = f32[] parameter(1)\n",
                                            "  ROOT r = (f32[6], f32[]) scan(in, init), dimensions={0}, num_carries=1",
                                            reverse ? ", is_reverse=true" : "", ", to_apply=f\n}\n");
      auto in = MakeArray(S("f32[6]"), [](int64_t i) { return 1.0 + i * i; });
      auto init = MakeArray(S("f32[]"), [](int64_t) { return 10.0; });
      auto r = RunText(text, {in, init}, threads);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<double> want(6);
      double acc = 10;
      for (int k = 0; k < 6; ++k) {
        const int i = reverse ? 5 - k : k;
        acc += 1.0 + i * i;
        want[i] = acc;
      }
      EXPECT_EQ(Leaf(*r, 0), want) << reverse;
      EXPECT_EQ(Leaf(*r, 1), std::vector<double>{acc});
    }
  }
}

TEST(NewerOps, ScanOverAnInnerDimensionWithSeveralInputsOutputsAndCarries) {
  // Along dimension 1 of x f32[2,4,3] and y s32[2,4]: carry m (f32[2,3]) keeps the running maximum
  // of x, carry n (s32[2]) counts steps; the outputs are m and x*y at each step.
  const char f[] = "f {\n  xs = f32[2,3] parameter(0)\n  ys = s32[2] parameter(1)\n  m = f32[2,3] parameter(2)\n"
                   "  n = s32[2] parameter(3)\n  mx = f32[2,3] maximum(xs, m)\n  yf = f32[2] convert(ys)\n"
                   "  yb = f32[2,3] broadcast(yf), dimensions={0}\n  p = f32[2,3] multiply(xs, yb)\n"
                   "  one = s32[] constant(1)\n  ones = s32[2] broadcast(one), dimensions={}\n  n1 = s32[2] add(n, ones)\n"
                   "  ROOT t = (f32[2,3], f32[2,3], f32[2,3], s32[2]) tuple(mx, p, mx, n1)\n}\n";
  const std::string text = absl::StrCat(
      "HloModule s\n", f,
      "ENTRY e {\n  x = f32[2,4,3] parameter(0)\n  y = s32[2,4] parameter(1)\n  m0 = f32[2,3] parameter(2)\n"
      "  n0 = s32[2] parameter(3)\n  ROOT r = (f32[2,4,3], f32[2,4,3], f32[2,3], s32[2]) scan(x, y, m0, n0), "
      "dimensions={1}, num_carries=2, to_apply=f\n}\n");
  auto x = MakeArray(S("f32[2,4,3]"), [](int64_t i) { return ((i * 7) % 11) - 5.0; });
  auto y = MakeArray(S("s32[2,4]"), [](int64_t i) { return i % 3 - 1.0; });
  auto m0 = MakeArray(S("f32[2,3]"), [](int64_t) { return -2.0; });
  auto n0 = MakeArray(S("s32[2]"), [](int64_t i) { return 100.0 * i; });
  for (int threads : {1, 2}) {
    auto r = RunText(text, {x, y, m0, n0}, threads);
    ASSERT_TRUE(r.ok()) << r.status();
    const std::vector<double> xv = ToDoubles(x), yv = ToDoubles(y);
    std::vector<double> m(6, -2.0), want_m(24), want_p(24);
    for (int t = 0; t < 4; ++t) {
      for (int a = 0; a < 2; ++a) {
        for (int c = 0; c < 3; ++c) {
          const double xe = xv[(a * 4 + t) * 3 + c];
          m[a * 3 + c] = std::max(xe, m[a * 3 + c]);
          want_m[(a * 4 + t) * 3 + c] = m[a * 3 + c];
          want_p[(a * 4 + t) * 3 + c] = xe * yv[a * 4 + t];
        }
      }
    }
    EXPECT_EQ(Leaf(*r, 0), want_m);
    EXPECT_EQ(Leaf(*r, 1), want_p);
    EXPECT_EQ(Leaf(*r, 2), m);
    EXPECT_EQ(ToInts(r->tuple.at(3)), (std::vector<int64_t>{4, 104}));
  }
}

TEST(NewerOps, ScanWhoseComputationReturnsItsParameters) {
  // to_apply passes the slice through as the next carry and the old carry out: the outputs are the
  // input shifted by one step, starting from the initial value. Each step's slice must survive as
  // the carry although a new slice is read for the next step.
  const char f[] = "f {\n  x = s32[2] parameter(0)\n  c = s32[2] parameter(1)\n  ROOT t = (s32[2], s32[2]) tuple(c, x)\n}\n";
  const std::string text = absl::StrCat("HloModule s\n", f,
                                        "ENTRY e {\n  in = s32[5,2] parameter(0)\n  init = s32[2] parameter(1)\n"
                                        "  ROOT r = (s32[5,2], s32[2]) scan(in, init), dimensions={0}, num_carries=1, to_apply=f\n}\n");
  auto in = MakeArray(S("s32[5,2]"), [](int64_t i) { return i; });
  auto init = MakeArray(S("s32[2]"), [](int64_t i) { return -1.0 - i; });
  auto r = RunText(text, {in, init});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(r->tuple.at(0)), (std::vector<int64_t>{-1, -2, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ToInts(r->tuple.at(1)), (std::vector<int64_t>{8, 9}));
  // One carry and no outputs, result not a tuple: the last slice.
  auto last = RunText(absl::StrCat("HloModule s\ng {\n  x = s32[2] parameter(0)\n  c = s32[2] parameter(1)\n  ROOT r = s32[2] add(x, c)\n}\n",
                                   "ENTRY e {\n  in = s32[5,2] parameter(0)\n  init = s32[2] parameter(1)\n"
                                   "  ROOT r = s32[2] scan(in, init), dimensions={0}, num_carries=1, to_apply=g\n}\n"),
                      {in, init});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(ToInts(*last), (std::vector<int64_t>{0 + 2 + 4 + 6 + 8 - 1, 1 + 3 + 5 + 7 + 9 - 2}));
}

// x[a][b] rotated: result[a][b] = x[(a + s0) mod 3][(b + s1) mod 4].
TEST(NewerOps, RotateShuffles) {
  auto x = MakeArray(S("f32[3,4]"), [](int64_t i) { return i; });
  auto mod = [](int64_t v, int64_t n) { return ((v % n) + n) % n; };
  for (const std::vector<int64_t>& sh : std::vector<std::vector<int64_t>>{{1, 0}, {0, 1}, {2, -1}, {-4, 9}, {3, 4}}) {
    for (int threads : {1, 2}) {
      const std::string text = absl::StrCat("HloModule s\nENTRY e {\n  x = f32[3,4] parameter(0)\n",
                                            "  ROOT r = f32[3,4] shuffle(x), dimensions={0,1}, mode=rotate, shifts={", sh[0], ",",
                                            sh[1], "}\n}\n");
      auto r = RunText(text, {x}, threads);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<double> want;
      for (int a = 0; a < 3; ++a) {
        for (int b = 0; b < 4; ++b) want.push_back(mod(a + sh[0], 3) * 4 + mod(b + sh[1], 4));
      }
      EXPECT_EQ(ToDoubles(*r), want) << sh[0] << "," << sh[1];
    }
  }
  // One dimension only, of a 1-D s8 array (XLA's rotate-by-one case).
  auto r = RunText("HloModule s\nENTRY e {\n  x = s8[4] parameter(0)\n  ROOT r = s8[4] shuffle(x), dimensions={0}, mode=rotate, shifts={1}\n}\n",
                   {MakeArray(S("s8[4]"), [](int64_t i) { return 10 + i; })});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToInts(*r), (std::vector<int64_t>{11, 12, 13, 10}));
}

TEST(NewerOps, PermuteShufflesInEachIndicesForm) {
  auto x = MakeArray(S("f32[3,2]"), [](int64_t i) { return 10.0 * (i / 2) + (i % 2); });  // x[a][b] = 10a + b
  struct Case {
    std::string attrs;
    std::vector<double> want;
  };
  for (const Case& c : std::vector<Case>{
           // One dimension, coordinates shared along dimension 1: rows 2, 0, 1.
           {"dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {2}, {0}, {1} }", {20, 21, 0, 1, 10, 11}},
           // Both dimensions in order, one coordinate pair per element.
           {"dimensions={0,1}, mode=permute, indices=s32[3,2,2]{2,1,0} { { {2,0}, {0,1} }, { {0,0}, {2,1} }, { {1,0}, {1,1} } }",
            {20, 1, 0, 21, 10, 11}},
           // Both dimensions listed in reverse: each pair is (coordinate of dim 1, coordinate of dim 0).
           {"dimensions={1,0}, mode=permute, indices=s32[3,2,2]{2,1,0} { { {0,2}, {1,0} }, { {0,0}, {1,2} }, { {0,1}, {1,1} } }",
            {20, 1, 0, 21, 10, 11}},
           // Narrow index type.
           {"dimensions={1}, mode=permute, indices=s8[1,2,1]{2,1,0} { { {1}, {0} } }", {1, 0, 11, 10, 21, 20}},
       }) {
    for (int threads : {1, 2}) {
      auto r = RunText("HloModule s\nENTRY e {\n  x = f32[3,2] parameter(0)\n  ROOT r = f32[3,2] shuffle(x), " + c.attrs + "\n}\n",
                       {x}, threads);
      ASSERT_TRUE(r.ok()) << c.attrs << ": " << r.status();
      EXPECT_EQ(ToDoubles(*r), c.want) << c.attrs;
    }
  }
  // Rank 1, the coordinate held directly.
  auto r = RunText("HloModule s\nENTRY e {\n  x = f32[4] parameter(0)\n"
                   "  ROOT r = f32[4] shuffle(x), dimensions={0}, mode=permute, indices=s32[4]{0} {3, 1, 0, 2}\n}\n",
                   {MakeArray(S("f32[4]"), [](int64_t i) { return 5.0 + i; })});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), (std::vector<double>{8, 6, 5, 7}));
}

TEST(NewerOps, RootedCollectivesInAGroupOfOne) {
  const char add[] = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n";
  auto x = MakeArray(S("f32[5]"), [](int64_t i) { return 0.5 * i - 1; });
  auto root = MakeArray(S("s32[1]"), [](int64_t) { return 0.0; });
  auto r = RunText(absl::StrCat("HloModule c\n", add,
                                "ENTRY e {\n  x = f32[5] parameter(0)\n  ROOT r = f32[5] collective-reduce(x), replica_groups={{0}}, "
                                "to_apply=add\n}\n"),
                   {x});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(ToDoubles(*r), ToDoubles(x));
  for (const std::string op : {"collective-reduce", "collective-broadcast"}) {
    r = RunText(absl::StrCat("HloModule c\n", add, "ENTRY e {\n  x = f32[5] parameter(0)\n  root = s32[1] parameter(1)\n",
                             "  ROOT r = f32[5] ", op, "(x, root), replica_groups={{0}}, has_dynamic_root=true",
                             op == "collective-reduce" ? ", to_apply=add" : "", "\n}\n"),
                {x, root});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status();
    EXPECT_EQ(ToDoubles(*r), ToDoubles(x)) << op;
  }
}

// The kernels check what verification checks, so a module run without verification (RunText
// parses but does not verify) gets an error, not an out-of-bounds read.
TEST(NewerOps, KernelsRefuseWhatVerificationRejects) {
  auto x = MakeArray(S("f32[2,3]"), [](int64_t i) { return i; });
  for (const std::string& attrs : {std::string("dimensions={5}, mode=rotate, shifts={1}"),
                                   std::string("dimensions={0}, mode=permute, indices=s32[3]{0} {0, 1, 0}"),
                                   std::string("dimensions={0,1}, mode=permute, indices=s32[2,3]{1,0} { {0,0,0}, {1,1,1} }")}) {
    auto r = RunText("HloModule s\nENTRY e {\n  x = f32[2,3] parameter(0)\n  ROOT r = f32[2,3] shuffle(x), " + attrs + "\n}\n", {x});
    ASSERT_FALSE(r.ok()) << attrs;
    EXPECT_NE(r.status().message().find("shuffle"), std::string::npos) << r.status();
  }
  auto r = RunText("HloModule s\nf {\n  a = f32[] parameter(0)\n  c = f32[] parameter(1)\n  ROOT t = (f32[], f32[]) tuple(a, c)\n}\n"
                   "ENTRY e {\n  x = f32[4] parameter(0)\n  c = f32[] parameter(1)\n"
                   "  ROOT r = (f32[4], f32[]) scan(x, c), dimensions={3}, num_carries=1, to_apply=f\n}\n",
                   {MakeArray(S("f32[4]"), [](int64_t i) { return i; }), MakeArray(S("f32[]"), [](int64_t) { return 0.0; })});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("scan dimension outside"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace hlox::rt
