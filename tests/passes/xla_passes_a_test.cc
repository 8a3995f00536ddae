// XLA's target-independent passes (passes/xla/), a second set, one block of tests per pass: HLO
// text in, the sites it offers (and their default choices), HLO text out after applying every
// site, the same outputs as before on seeded inputs, and the cases it must leave alone.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/passes/xla_test_util.h"

namespace hlox {
namespace {

using testing::ApplyAll;
using testing::Count;
using testing::Has;
using testing::PassCheck;
using testing::RunChecked;
using testing::RunDefault;
using testing::SiteCount;
using Outcome = testing::PassOutcome;

// sum's transposes also feed a non-candidate (mixed), so XLA's fixpoint keeps it by default;
// the reshape feeding only `scaled` moves by default; `mixed` reads a plain parameter.
constexpr char kRearranges[] = R"(HloModule r
ENTRY main {
  a = f32[4,6] parameter(0)
  b = f32[4,6] parameter(1)
  c = f32[6,4] parameter(2)
  ta = f32[6,4] transpose(a), dimensions={1,0}
  tb = f32[6,4] transpose(b), dimensions={1,0}
  sum = f32[6,4] add(ta, tb)
  ra = f32[24] reshape(a)
  two = f32[] constant(2)
  bs = f32[24] broadcast(two), dimensions={}
  scaled = f32[24] multiply(ra, bs)
  mixed = f32[6,4] subtract(ta, c)
  ROOT t = (f32[6,4], f32[24], f32[6,4]) tuple(sum, scaled, mixed)
}
)";

TEST(XlaPassesA, ReshapeMoverSinksRearranges) {
  Outcome o = ApplyAll("reshape-mover", kRearranges);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_rearrange", "sink_rearrange"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{0, 1}));
  EXPECT_TRUE(Has(o.after, "f32[4,6] add(%a, %b)")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[4,6] multiply(%a, ")) << o.after;
  EXPECT_TRUE(Has(o.after, "subtract(%ta, %c)")) << o.after;  // left alone
  EXPECT_EQ(Count(o.after, " transpose("), 2) << o.after;       // ta (for mixed), sum's new one
  const std::string def = RunDefault("reshape-mover", kRearranges);
  EXPECT_TRUE(Has(def, "add(%ta, %tb)")) << def;
  EXPECT_FALSE(Has(def, "multiply(%ra, %bs)")) << def;
}

// A transpose of a broadcast moves when the broadcast's dimensions keep their order; different
// transposes, or a rearrange of a constant as the only rearrange, are not candidates.
TEST(XlaPassesA, ReshapeMoverBroadcastOperandsAndNegatives) {
  Outcome o = ApplyAll("reshape-mover", R"(HloModule r2
ENTRY main {
  a = f32[2,3,5] parameter(0)
  v = f32[3] parameter(1)
  ta = f32[5,2,3] transpose(a), dimensions={2,0,1}
  bv = f32[5,2,3] broadcast(v), dimensions={2}
  m = f32[5,2,3] maximum(ta, bv)
  b = f32[3,2,5] parameter(2)
  tb = f32[5,2,3] transpose(b), dimensions={2,1,0}
  different = f32[5,2,3] add(ta, tb)
  k = f32[6] constant({1, 2, 3, 4, 5, 6})
  rk = f32[2,3] reshape(k)
  p = f32[2,3] parameter(3)
  const_only = f32[2,3] add(rk, p)
  ROOT t = (f32[5,2,3], f32[5,2,3], f32[2,3]) tuple(m, different, const_only)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_rearrange"}));
  EXPECT_TRUE(Has(o.after, "f32[2,3,5] maximum(%a, ")) << o.after;
  EXPECT_TRUE(Has(o.after, "broadcast(%v), dimensions={1}")) << o.after;
  EXPECT_TRUE(Has(o.after, "add(%ta, %tb)")) << o.after;
  EXPECT_TRUE(Has(o.after, "add(%rk, %p)")) << o.after;
}

constexpr char kTransposes[] = R"(HloModule t
ENTRY main {
  a = f32[8,4] parameter(0)
  b = f32[8,5] parameter(1)
  ta = f32[4,8] transpose(a), dimensions={1,0}
  d1 = f32[4,5] dot(ta, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f32[2,3,4,5] parameter(2)
  tx = f32[2,5,3,4] transpose(x), dimensions={0,3,1,2}
  y = f32[2,5,6] parameter(3)
  d2 = f32[2,3,4,6] dot(tx, y), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={1}
  z = f32[3,4,5] parameter(4)
  tz = f32[4,3,5] transpose(z), dimensions={1,0,2}
  w = f32[5,2] parameter(5)
  d3 = f32[4,3,2] dot(tz, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  img = f32[1,3,8,8] parameter(6)
  timg = f32[1,8,8,3] transpose(img), dimensions={0,2,3,1}
  k = f32[3,3,3,4] parameter(7)
  cv = f32[1,6,6,4] convolution(timg, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[4,5], f32[2,3,4,6], f32[4,3,2], f32[1,6,6,4]) tuple(d1, d2, d3, cv)
}
)";

// d1: a matrix transpose (XLA's default case); d2: a batched transpose with two free dims in
// order (offered, kept by default); d3: swaps its free dims (the result order would change: not
// offered); cv: NHWC view of an NCHW image (offered, kept by default).
TEST(XlaPassesA, TransposeFolding) {
  Outcome o = ApplyAll("transpose-folding", kTransposes);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"row_column_dot", "transpose_dot", "transpose_conv"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{1, 0, 0}));
  EXPECT_TRUE(Has(o.after, "dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}")) << o.after;
  EXPECT_TRUE(Has(o.after, "dot(%x, %y), lhs_batch_dims={0}")) << o.after;
  EXPECT_TRUE(Has(o.after, "lhs_contracting_dims={3}")) << o.after;
  EXPECT_TRUE(Has(o.after, "dot(%tz, %w)")) << o.after;
  EXPECT_TRUE(Has(o.after, "convolution(%img, %k)")) << o.after;
  EXPECT_TRUE(Has(o.after, "dim_labels=bf01_01io->b01f")) << o.after;
  const std::string def = RunDefault("transpose-folding", kTransposes);
  EXPECT_TRUE(Has(def, "dot(%a, %b)") && Has(def, "dot(%tx, %y)") && Has(def, "convolution(%timg, %k)")) << def;
}

TEST(XlaPassesA, TransposeFoldingKernelOperand) {
  Outcome o = ApplyAll("transpose-folding", R"(HloModule tk
ENTRY main {
  img = f32[1,8,8,3] parameter(0)
  k = f32[4,3,3,3] parameter(1)
  tk = f32[3,3,3,4] transpose(k), dimensions={2,3,1,0}
  ROOT cv = f32[1,6,6,4] convolution(img, tk), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"transpose_conv"}));
  EXPECT_TRUE(Has(o.after, "convolution(%img, %k)")) << o.after;
  EXPECT_TRUE(Has(o.after, "dim_labels=b01f_oi01->b01f")) << o.after;
}

constexpr char kSlices[] = R"(HloModule s
ENTRY main {
  a = f32[8,4] parameter(0)
  b = f32[8,4] parameter(1)
  a0 = f32[4,4] slice(a), slice={[0:4], [0:4]}
  b0 = f32[4,4] slice(b), slice={[0:4], [0:4]}
  a1 = f32[4,4] slice(a), slice={[4:8], [0:4]}
  b1 = f32[4,4] slice(b), slice={[4:8], [0:4]}
  s0 = f32[4,4] add(a0, b0)
  s1 = f32[4,4] add(a1, b1)
  m = f32[4,4] multiply(a0, b1)
  c = f32[2,4] slice(a), slice={[0:2], [0:4]}
  d = f32[2,4] slice(b), slice={[0:2], [0:4]}
  x = f32[2,4] subtract(c, d)
  ROOT t = (f32[4,4], f32[4,4], f32[4,4], f32[2,4]) tuple(s0, s1, m, x)
}
)";

// s0 and s1 cover both sources: one add, two slices. m mixes slice configurations; x has no
// partner.
TEST(XlaPassesA, SliceSinker) {
  Outcome o = ApplyAll("slice-sinker", kSlices);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_slices"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{1}));
  EXPECT_TRUE(Has(o.after, "f32[8,4] add(%a, %b)")) << o.after;
  EXPECT_EQ(Count(o.after, " add("), 1) << o.after;
  EXPECT_TRUE(Has(o.after, "multiply(%a0, %b1)")) << o.after;
  EXPECT_TRUE(Has(o.after, "subtract(%c, %d)")) << o.after;
}

// Two small slices of a big source: offered, but the op over the whole source would do 25x the
// work, so the default (XLA's) keeps them. Compare ops keep their direction.
TEST(XlaPassesA, SliceSinkerKeepsSmallSlicesByDefault) {
  Outcome o = ApplyAll("slice-sinker", R"(HloModule s2
ENTRY main {
  a = f32[100,4] parameter(0)
  b = f32[100,4] parameter(1)
  a0 = f32[2,4] slice(a), slice={[0:2], [0:4]}
  b0 = f32[2,4] slice(b), slice={[0:2], [0:4]}
  a1 = f32[2,4] slice(a), slice={[2:4], [0:4]}
  b1 = f32[2,4] slice(b), slice={[2:4], [0:4]}
  c0 = pred[2,4] compare(a0, b0), direction=GT
  c1 = pred[2,4] compare(a1, b1), direction=GT
  c2 = pred[2,4] compare(a1, b1), direction=LT
  ROOT t = (pred[2,4], pred[2,4], pred[2,4]) tuple(c0, c1, c2)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_slices"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{0}));
  EXPECT_TRUE(Has(o.after, "pred[100,4] compare(%a, %b), direction=GT")) << o.after;
  EXPECT_TRUE(Has(o.after, "compare(%a1, %b1), direction=LT")) << o.after;
}

// cat: widening converts move below the concatenate; nx: a narrowing convert moves above the
// transpose; pq: the pad value 1 is exact in bf16; pd: 0.1 is not, so that pad stays.
constexpr char kConverts[] = R"(HloModule c
ENTRY main {
  a = bf16[4,6] parameter(0)
  b = bf16[4,2] parameter(1)
  ca = f32[4,6] convert(a)
  cb = f32[4,2] convert(b)
  cat = f32[4,8] concatenate(ca, cb), dimensions={1}
  e = f32[4,8] exponential(cat)
  x = f32[6,4] parameter(2)
  tx = f32[4,6] transpose(x), dimensions={1,0}
  nx = bf16[4,6] convert(tx)
  p = bf16[3] parameter(3)
  cp = f32[3] convert(p)
  z = f32[] constant(0.1)
  pd = f32[5] pad(cp, z), padding=1_1
  q = bf16[3] parameter(4)
  cq = f32[3] convert(q)
  one = f32[] constant(1)
  pq = f32[5] pad(cq, one), padding=1_1
  ROOT t = (f32[4,8], bf16[4,6], f32[5], f32[5]) tuple(e, nx, pd, pq)
}
)";

TEST(XlaPassesA, ConvertMover) {
  Outcome o = ApplyAll("convert-mover", kConverts);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"widen_down", "narrow_up", "widen_down"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{1, 1, 1}));
  EXPECT_TRUE(Has(o.after, "bf16[4,8] concatenate(%a, %b)")) << o.after;
  EXPECT_TRUE(Has(o.after, "bf16[4,6] transpose(")) << o.after;
  EXPECT_TRUE(Has(o.after, "bf16[5] pad(%q, ")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[5] pad(%cp, %z)")) << o.after;
}

// A transpose with a second user stays wide (XLA moves a narrowing convert only when it is the
// only user); converts from different types do not move down together.
TEST(XlaPassesA, ConvertMoverLeavesSharedAndMixedAlone) {
  Outcome o = ApplyAll("convert-mover", R"(HloModule c2
ENTRY main {
  x = f32[6,4] parameter(0)
  tx = f32[4,6] transpose(x), dimensions={1,0}
  nx = bf16[4,6] convert(tx)
  a = bf16[4,6] parameter(1)
  b = f16[4,2] parameter(2)
  ca = f32[4,6] convert(a)
  cb = f32[4,2] convert(b)
  cat = f32[4,8] concatenate(ca, cb), dimensions={1}
  ROOT t = (bf16[4,6], f32[4,6], f32[4,8]) tuple(nx, tx, cat)
}
)");
  EXPECT_TRUE(o.rules.empty()) << o.after;
}

constexpr char kSorts[] = R"(HloModule s
by_key {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  w0 = f32[] parameter(4)
  w1 = f32[] parameter(5)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
by_key2 {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  w0 = f32[] parameter(2)
  w1 = f32[] parameter(3)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
by_second {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  w0 = f32[] parameter(2)
  w1 = f32[] parameter(3)
  ROOT gt = pred[] compare(w0, w1), direction=GT
}
ENTRY main {
  keys = f32[16] parameter(0)
  vals = s32[16] iota(), iota_dimension=0
  w = f32[16] parameter(1)
  s = (f32[16], s32[16], f32[16]) sort(keys, vals, w), dimensions={0}, to_apply=by_key
  sv = s32[16] get-tuple-element(s), index=1
  sk = f32[16] get-tuple-element(s), index=0
  s2 = (f32[16], f32[16]) sort(keys, w), dimensions={0}, to_apply=by_key2
  g = f32[16] get-tuple-element(s2), index=0
  s3 = (f32[16], f32[16]) sort(keys, w), dimensions={0}, to_apply=by_second
  g3 = f32[16] get-tuple-element(s3), index=0
  ROOT t = (s32[16], f32[16], f32[16], f32[16]) tuple(sv, sk, g, g3)
}
)";

// s drops w (unused, ignored by the comparator); s2 keeps only its keys and becomes an array
// sort; s3's unused operand decides the order, so it stays.
TEST(XlaPassesA, SortSimplifier) {
  Outcome o = ApplyAll("sort-simplifier", kSorts);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"unused_operands", "unused_operands"}));
  EXPECT_TRUE(Has(o.after, "(f32[16], s32[16]) sort(%keys, %vals)")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[16] sort(%keys)")) << o.after;
  EXPECT_TRUE(Has(o.after, "(f32[16], f32[16]) sort(%keys, %w), dimensions={0}, to_apply=%by_second")) << o.after;
  EXPECT_EQ(Count(o.after, "sort("), 3) << o.after;
}

constexpr char kLoop[] = R"(HloModule w
cond {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], s32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  n = s32[] get-tuple-element(p), index=2
  nf = f32[] convert(n)
  bn = f32[4] broadcast(nf), dimensions={}
  v2 = f32[4] multiply(v, bn)
  ROOT t = (s32[], f32[4], s32[]) tuple(i1, v2, n)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  three = s32[] constant(3)
  init = (s32[], f32[4], s32[]) tuple(z, x, three)
  w = (s32[], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

// Slot 2 enters as constant 3 and passes through: the condition and the body read the constant.
// Slot 0 enters as a constant but changes every iteration.
TEST(XlaPassesA, WhileLoopConstantSinking) {
  Outcome o = ApplyAll("while-loop-constant-sinking", kLoop);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_constant"}));
  EXPECT_EQ(Count(o.after, "s32[] constant(3)"), 3) << o.after;  // entry, condition, body
  EXPECT_TRUE(Has(o.after, "tuple(%i1, %v2, %n)")) << o.after;  // the pass-through stays
  EXPECT_FALSE(Has(o.after, "convert(%n)")) << o.after;
  auto m = ParseModule(kLoop);
  ASSERT_TRUE(m.ok());
  auto point = NextDecisionPoint(**m, "only:while-loop-constant-sinking", {});
  ASSERT_TRUE(point.ok() && point->has_value());
  EXPECT_EQ((*point)->sites[0].id, "sink_constant@main/w#2");
}

// A body shared by two loops is not rewritten (the other loop's slot need not be constant).
TEST(XlaPassesA, WhileLoopConstantSinkingLeavesSharedBodiesAlone) {
  std::string text = kLoop;
  const std::string root = "  ROOT r = f32[4] get-tuple-element(w), index=1\n";
  text.replace(text.find(root), root.size(),
               "  y = s32[] parameter(1)\n"
               "  init2 = (s32[], f32[4], s32[]) tuple(z, x, y)\n"
               "  w2 = (s32[], f32[4], s32[]) while(init2), condition=cond, body=body\n"
               "  r1 = f32[4] get-tuple-element(w), index=1\n"
               "  r2 = f32[4] get-tuple-element(w2), index=1\n"
               "  ROOT r = (f32[4], f32[4]) tuple(r1, r2)\n");
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  auto point = NextDecisionPoint(**m, "only:while-loop-constant-sinking", {});
  ASSERT_TRUE(point.ok()) << point.status();
  EXPECT_FALSE(point->has_value());
}

constexpr char kChains[] = R"(HloModule f
ENTRY main {
  x = f32[64] parameter(0)
  b = bf16[64] convert(x)
  back = f32[64] convert(b)
  h = f16[64] parameter(1)
  w = f32[64] convert(h)
  hb = bf16[64] convert(w)
  y = bf16[64] parameter(2)
  yw = f32[64] convert(y)
  yb = bf16[64] convert(yw)
  ROOT t = (f32[64], bf16[64], bf16[64]) tuple(back, hb, yb)
}
)";

// back drops a bf16 rounding (offered, kept by default; its outputs differ by bf16's step, so
// the comparison here allows 100x the f32 tolerance); hb and yb round exactly as before.
TEST(XlaPassesA, SimplifyFpConversions) {
  Outcome o = ApplyAll("simplify-fp-conversions", kChains, {.scale = 100.0});
  EXPECT_EQ(o.rules, (std::vector<std::string>{"rounding_chain", "exact_chain", "exact_chain"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{0, 1, 1}));
  EXPECT_TRUE(Has(o.after, "bf16[64] convert(%h)")) << o.after;
  EXPECT_TRUE(Has(o.after, "tuple(%x, %")) << o.after;
  EXPECT_TRUE(Has(o.after, ", %y)")) << o.after;
  const std::string def = RunDefault("simplify-fp-conversions", kChains);
  EXPECT_TRUE(Has(def, "f32[64] convert(%b)")) << def;  // the rounding stays by default
  EXPECT_FALSE(Has(def, "convert(%yw)")) << def;
}

// The exact chains give the same bits: compared at the usual tolerance, with the rounding chain
// left out. d heads a chain of its own; a single convert is no chain.
TEST(XlaPassesA, SimplifyFpConversionsExactChainsKeepBits) {
  Outcome o = ApplyAll("simplify-fp-conversions", R"(HloModule f2
ENTRY main {
  h = f16[64] parameter(0)
  w = f32[64] convert(h)
  d = f64[64] convert(w)
  hb = bf16[64] convert(d)
  s = f32[64] parameter(1)
  single = bf16[64] convert(s)
  ROOT t = (bf16[64], bf16[64]) tuple(hb, single)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"exact_chain", "exact_chain"}));  // d, then hb
  EXPECT_TRUE(Has(o.after, "bf16[64] convert(%h)")) << o.after;
  EXPECT_TRUE(Has(o.after, "bf16[64] convert(%s)")) << o.after;
}

constexpr char kTwoSlots[] = R"(HloModule w2
cond {
  p = (s32[], f32[4], s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=2
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4], s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  n = s32[] get-tuple-element(p), index=2
  k = f32[] get-tuple-element(p), index=3
  nf = f32[] convert(n)
  s = f32[] multiply(nf, k)
  bs = f32[4] broadcast(s), dimensions={}
  v2 = f32[4] add(v, bs)
  k2 = f32[] get-tuple-element(p), index=3
  ROOT t = (s32[], f32[4], s32[], f32[]) tuple(i1, v2, n, k2)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  four = s32[] constant(4)
  half = f32[] constant(0.5)
  init = (s32[], f32[4], s32[], f32[]) tuple(z, x, four, half)
  w = (s32[], f32[4], s32[], f32[]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
}
)";

// Two invariant slots of one loop: the second site applies to the body the first one rewrote.
// k2, the root's own pass-through read, stays.
TEST(XlaPassesA, WhileLoopConstantSinkingTwoSlots) {
  Outcome o = ApplyAll("while-loop-constant-sinking", kTwoSlots);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"sink_constant", "sink_constant"}));
  EXPECT_EQ(Count(o.after, "s32[] constant(4)"), 3) << o.after;  // entry, condition, body
  EXPECT_EQ(Count(o.after, "f32[] constant(0.5)"), 2) << o.after;  // entry, body
  EXPECT_TRUE(Has(o.after, "tuple(%i1, %v2, %n, %k2)")) << o.after;
}

// Each pass on its test modules with random choices per site (not only all or the default):
// later sites see what earlier ones did, so partly applied groups, chains and stale sites are
// exercised; every result must verify and compute the same outputs.
TEST(XlaPassesA, RandomChoicesPreserveOutputs) {
  struct Case {
    const char* label;
    const char* text;
    double scale;  // tolerance scale: rounding chains drop a bf16 rounding
  };
  const std::vector<Case> cases = {
      {"reshape-mover", kRearranges, 1},      {"transpose-folding", kTransposes, 1},
      {"slice-sinker", kSlices, 1},           {"convert-mover", kConverts, 1},
      {"sort-simplifier", kSorts, 1},         {"while-loop-constant-sinking", kLoop, 1},
      {"while-loop-constant-sinking", kTwoSlots, 1}, {"simplify-fp-conversions", kChains, 100}};
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    const std::string pipeline = std::string("only:") + c.label;
    auto m = ParseModule(c.text);
    ASSERT_TRUE(m.ok()) << m.status();
    auto before = testing::RunSeeded(**m, 5);
    ASSERT_TRUE(before.ok()) << before.status();
    auto point = NextDecisionPoint(**m, pipeline, {});
    ASSERT_TRUE(point.ok() && point->has_value()) << c.label;
    for (int round = 0; round < 6; ++round) {
      DecisionVector v;
      for (size_t k = 0; k < (*point)->sites.size(); ++k) v.push_back(static_cast<int>(rng() % 2));
      auto after = RunPipeline(**m, pipeline, {{(*point)->key, v}});
      ASSERT_TRUE(after.ok()) << c.label << ": " << after.status();
      EXPECT_TRUE(VerifyModule(**after).ok()) << c.label << ": " << VerifyModule(**after);
      auto got = testing::RunSeeded(**after, 5);
      ASSERT_TRUE(got.ok()) << c.label << ": " << got.status();
      EXPECT_EQ(testing::CompareValues(*before, *got, c.scale), "") << c.label << PrintModule(**after);
    }
  }
}

}  // namespace
}  // namespace hlox
