// XLA's target-independent passes (passes/xla/): for each, HLO text in, the sites it offers,
// HLO text out after applying every site, and the same outputs as before on seeded inputs (the
// fusion tests' independent comparison); plus the cases each must leave alone.
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

TEST(XlaPasses, ZeroSizedElimination) {
  Outcome o = ApplyAll("zero-sized-elim", R"(HloModule z
ENTRY main {
  a = f32[0,4] parameter(0)
  b = f32[3] parameter(1)
  n = f32[0,4] negate(a)
  e = f32[0,4] exponential(n)
  c = f32[3] negate(b)
  ROOT t = (f32[0,4], f32[3]) tuple(e, c)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"zero_sized", "zero_sized"}));
  EXPECT_FALSE(Has(o.after, "exponential"));
  EXPECT_TRUE(Has(o.after, "negate(%b)")) << o.after;  // the non-empty value stays
}

TEST(XlaPasses, OptBarrierExpander) {
  Outcome o = ApplyAll("opt-barrier-expander", R"(HloModule b
ENTRY main {
  a = f32[4] parameter(0)
  t = (f32[4]) tuple(a)
  o = (f32[4]) opt-barrier(t)
  g = f32[4] get-tuple-element(o), index=0
  ROOT n = f32[4] negate(g)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"opt_barrier"}));
  EXPECT_FALSE(Has(o.after, "opt-barrier")) << o.after;
}

TEST(XlaPasses, LogisticExpanderKeepsByDefaultAndExpandsWhenAsked) {
  const std::string text = R"(HloModule l
ENTRY main {
  a = f32[16] parameter(0)
  ROOT l = f32[16] logistic(a)
}
)";
  Outcome o = ApplyAll("logistic-expander", text);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"logistic"}));
  EXPECT_FALSE(Has(o.after, "logistic("));
  EXPECT_TRUE(Has(o.after, "exponential(") && Has(o.after, "divide("));
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok());
  auto def = RunPipeline(**m, "only:logistic-expander", {});  // default policy: keep
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(Has(PrintModule(**def), "logistic("));
}

TEST(XlaPasses, BroadcastCanonicalizer) {
  Outcome o = ApplyAll("broadcast-canonicalizer", R"(HloModule b
ENTRY main {
  a = f32[3,5] parameter(0)
  b = f32[5,2,3] broadcast(a), dimensions={2,0}
  s = f32[4] parameter(1)
  sorted = f32[4,6] broadcast(s), dimensions={0}
  ROOT t = (f32[5,2,3], f32[4,6]) tuple(b, sorted)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"unsorted_broadcast"}));
  EXPECT_TRUE(Has(o.after, "transpose(")) << o.after;
  EXPECT_TRUE(Has(o.after, "dimensions={0,2}")) << o.after;
}

TEST(XlaPasses, OperandUpcaster) {
  Outcome o = ApplyAll("operand-upcaster", R"(HloModule u
ENTRY main {
  a = bf16[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  ROOT d = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"narrow_operand"}));
  EXPECT_TRUE(Has(o.after, "f32[4,8]{1,0} convert(") || Has(o.after, "f32[4,8] convert(")) << o.after;
}

TEST(XlaPasses, DotDimensionSorter) {
  Outcome o = ApplyAll("dot-dimension-sorter", R"(HloModule s
ENTRY main {
  a = f32[3,4,5] parameter(0)
  b = f32[5,4,6] parameter(1)
  ROOT d = f32[3,6] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"unsorted_contracting"}));
  EXPECT_TRUE(Has(o.after, "lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}")) << o.after;
}

constexpr char kConditionals[] = R"(HloModule c
t_branch {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
f_branch {
  p = f32[4] parameter(0)
  ROOT e = f32[4] exponential(p)
}
b2 {
  p = f32[4] parameter(0)
  ROOT a = f32[4] abs(p)
}
ENTRY main {
  x = f32[4] parameter(0)
  yes = pred[] constant(false)
  c1 = f32[4] conditional(yes, x, x), true_computation=t_branch, false_computation=f_branch
  i = s32[] constant(7)
  c2 = f32[4] conditional(i, x, x, x), branch_computations={t_branch, f_branch, b2}
  live = pred[] parameter(1)
  c3 = f32[4] conditional(live, x, x), true_computation=t_branch, false_computation=f_branch
  ROOT t = (f32[4], f32[4], f32[4]) tuple(c1, c2, c3)
}
)";

TEST(XlaPasses, ConditionalSimplifierRunsTheFixedBranch) {
  Outcome o = ApplyAll("conditional-simplifier", kConditionals);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"fixed_branch", "fixed_branch"}));  // not c3
  EXPECT_TRUE(Has(o.after, "to_apply=%f_branch")) << o.after;  // false -> the false branch
  EXPECT_TRUE(Has(o.after, "to_apply=%b2")) << o.after;        // index 7 of 3 -> the last
  EXPECT_EQ(o.after.find("conditional(%yes"), std::string::npos);
  EXPECT_TRUE(Has(o.after, "conditional(%live")) << o.after;
}

TEST(XlaPasses, WhileLoopSimplifierDropsZeroTripLoops) {
  Outcome o = ApplyAll("while-loop-simplifier", R"(HloModule w
never {
  p = (f32[4], s32[]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  p = (f32[4], s32[]) parameter(0)
  v = f32[4] get-tuple-element(p), index=0
  n = f32[4] negate(v)
  k = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[4], s32[]) tuple(n, k)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (f32[4], s32[]) tuple(x, z)
  w = (f32[4], s32[]) while(init), condition=never, body=body
  ROOT r = f32[4] get-tuple-element(w), index=0
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"zero_trip"}));
  EXPECT_FALSE(Has(o.after, "while(")) << o.after;
}

TEST(XlaPasses, MapInliner) {
  Outcome o = ApplyAll("map-inliner", R"(HloModule m
add_f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(y, x)
}
two {
  x = f32[] parameter(0)
  ROOT c = f32[] constant(2)
}
complex_f {
  x = f32[] parameter(0)
  e = f32[] exponential(x)
  ROOT n = f32[] negate(e)
}
ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  m1 = f32[8] map(a, b), dimensions={0}, to_apply=add_f
  m2 = f32[8] map(a), dimensions={0}, to_apply=two
  m3 = f32[8] map(a), dimensions={0}, to_apply=complex_f
  ROOT t = (f32[8], f32[8], f32[8]) tuple(m1, m2, m3)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"inline_map", "inline_map"}));  // not the two-op body
  EXPECT_TRUE(Has(o.after, "add(%b, %a)")) << o.after;  // operands in the body's order
  EXPECT_TRUE(Has(o.after, "map(%a), dimensions={0}, to_apply=%complex_f")) << o.after;
}


// Half types expand through f32 and round once (four f16 roundings drift through deep models).
TEST(XlaPasses, LogisticExpanderComputesHalfTypesInF32) {
  Outcome o = ApplyAll("logistic-expander", R"(HloModule h
ENTRY main {
  a = f16[64] parameter(0)
  ROOT l = f16[64] logistic(a)
}
)");
  EXPECT_TRUE(Has(o.after, "f32[64] convert(") && Has(o.after, "f16[64] convert(")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[64] exponential(")) << o.after;
}


// Q, K and V projections of one input: one dot over the concatenated weights, then slices; a
// fourth dot that reads one of them is not merged (it depends on a member).
TEST(XlaPasses, DotMergerSharedLhs) {
  Outcome o = ApplyAll("dot-merger", R"(HloModule qkv
ENTRY main {
  x = f32[8,16] parameter(0)
  wq = f32[16,4] parameter(1)
  wk = f32[16,4] parameter(2)
  wv = f32[16,6] parameter(3)
  q = f32[8,4] dot(x, wq), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  k = f32[8,4] dot(x, wk), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  v = f32[8,6] dot(x, wv), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  qt = f32[16,8] transpose(x), dimensions={1,0}
  w2 = f32[16,4] dot(qt, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dep = f32[8,4] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,4], f32[8,4], f32[8,6], f32[8,4]) tuple(q, k, v, dep)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"shared_lhs"}));
  EXPECT_TRUE(Has(o.after, "f32[16,14] concatenate(")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[8,14] dot(")) << o.after;
  EXPECT_TRUE(Has(o.after, "slice={[0:8], [8:14]}")) << o.after;
  EXPECT_TRUE(Has(o.after, "dot(%x, %w2)")) << o.after;  // the dependent one stays apart
}

// Shared right operand: the left operands stack along their free dimension; batch dims stay.
TEST(XlaPasses, DotMergerSharedRhsWithBatch) {
  Outcome o = ApplyAll("dot-merger", R"(HloModule b
ENTRY main {
  w = f32[2,16,5] parameter(0)
  a = f32[2,3,16] parameter(1)
  b = f32[2,7,16] parameter(2)
  c = f32[2,7,15] parameter(3)
  da = f32[2,3,5] dot(a, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  db = f32[2,7,5] dot(b, w), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = (f32[2,3,5], f32[2,7,5]) tuple(da, db)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"shared_rhs"}));
  EXPECT_TRUE(Has(o.after, "f32[2,10,16] concatenate(")) << o.after;
  EXPECT_TRUE(Has(o.after, "slice={[0:2], [3:10], [0:5]}")) << o.after;
}

TEST(XlaPasses, DotMergerLeavesIncompatibleDotsAlone) {
  Outcome o = ApplyAll("dot-merger", R"(HloModule n
ENTRY main {
  x = f32[8,16] parameter(0)
  w1 = f32[16,4] parameter(1)
  w2 = f32[16,4,2] parameter(2)
  y = f32[8,16] parameter(3)
  d1 = f32[8,4] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[8,4,2] dot(x, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d3 = f32[8,4] dot(y, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[8,4], f32[8,4,2], f32[8,4]) tuple(d1, d2, d3)
}
)");
  // d1/d2: w2 has two free dims; d1/d3 share w1 but x and y agree, so that pair merges.
  EXPECT_EQ(o.rules, (std::vector<std::string>{"shared_rhs"}));
  EXPECT_TRUE(Has(o.after, "f32[16,16] concatenate(%x, %y)")) << o.after;
}


// Layer norm as PyTorch/XLA writes it (batch-norm-training over a [1, tokens, hidden] view) and
// an inference batch norm in bf16: expanded into reductions and elementwise ops, same outputs.
TEST(XlaPasses, BatchNormExpander) {
  Outcome o = ApplyAll("batchnorm-expander", R"(HloModule bn
ENTRY main {
  x = f32[1,12,16] parameter(0)
  s = f32[12] parameter(1)
  b = f32[12] parameter(2)
  t = (f32[1,12,16], f32[12], f32[12]) batch-norm-training(x, s, b), epsilon=1e-05, feature_index=1
  out = f32[1,12,16] get-tuple-element(t), index=0
  var = f32[12] get-tuple-element(t), index=2
  h = bf16[4,6,3] parameter(3)
  hs = bf16[6] parameter(4)
  hb = bf16[6] parameter(5)
  hm = bf16[6] parameter(6)
  hv = bf16[6] parameter(7)
  e = bf16[6] exponential(hv)
  i = bf16[4,6,3] batch-norm-inference(h, hs, hb, hm, e), epsilon=0.001, feature_index=1
  ROOT r = (f32[1,12,16], f32[12], bf16[4,6,3]) tuple(out, var, i)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"batch_norm_training", "batch_norm_inference"}));
  EXPECT_FALSE(Has(o.after, "batch-norm")) << o.after;
  EXPECT_TRUE(Has(o.after, "rsqrt(") && Has(o.after, "reduce(")) << o.after;
}

}  // namespace
}  // namespace hlox
