// More of XLA's target-independent passes (passes/xla/, the second set): for each, HLO text in,
// the sites it offers, HLO text out after applying every site, and the same outputs as before
// on seeded inputs; plus the cases each must leave alone and, where the default policy differs
// from applying everything, what the default does.
#include <map>
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

// The printed computation `name` (from its header line to its closing brace), or "".
std::string Comp(const std::string& text, const std::string& name) {
  size_t at = text.find("%" + name + " ");
  if (at == std::string::npos) return "";
  at = text.rfind('\n', at) + 1;
  return text.substr(at, text.find("\n}", at) - at);
}

// ---- while-loop-invariant-code-motion ----

// acc += exp(w) . transpose(w) for three iterations; w is passed back unchanged.
constexpr char kLoop[] = R"(HloModule w
cond {
  p = (f32[4,4], f32[4,4], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=2
  n = s32[] constant(3)
  ROOT lt = pred[] compare(k, n), direction=LT
}
body {
  p = (f32[4,4], f32[4,4], s32[]) parameter(0)
  acc = f32[4,4] get-tuple-element(p), index=0
  w = f32[4,4] get-tuple-element(p), index=1
  k = s32[] get-tuple-element(p), index=2
  e = f32[4,4] exponential(w)
  t = f32[4,4] transpose(w), dimensions={1,0}
  d = f32[4,4] dot(e, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  half = f32[] constant(0.5)
  h = f32[4,4] broadcast(half), dimensions={}
  hd = f32[4,4] multiply(d, h)
  s = f32[4,4] add(acc, hd)
  kb = s32[4,4] broadcast(k), dimensions={}
  ka = f32[4,4] convert(kb)
  s2 = f32[4,4] add(s, ka)
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  ROOT r = (f32[4,4], f32[4,4], s32[]) tuple(s2, w, k1)
}
ENTRY main {
  a = f32[4,4] parameter(0)
  w = f32[4,4] parameter(1)
  z = s32[] constant(0)
  init = (f32[4,4], f32[4,4], s32[]) tuple(a, w, z)
  l = (f32[4,4], f32[4,4], s32[]) while(init), condition=cond, body=body
  ROOT g = f32[4,4] get-tuple-element(l), index=0
}
)";

TEST(XlaPassesB, WhileLoopInvariantCodeMotionHoistsTheInvariantCone) {
  Outcome o = ApplyAll("while-loop-invariant-code-motion", kLoop);
  // e, t, d, h, hd are invariant; s, kb, ka, s2, k1 read the changing state (acc, k). Sites
  // come consumers first: hoisting hd takes its whole cone, and the others go stale.
  EXPECT_EQ(o.rules, (std::vector<std::string>(5, "invariant")));
  EXPECT_EQ(o.defaults, (std::vector<int>{1, 0, 1, 0, 1}));  // hd, h, d, t, e: broadcast, transpose not alone
  const std::string body = Comp(o.after, "body");
  const std::string entry = Comp(o.after, "main");
  EXPECT_FALSE(Has(body, "dot(")) << o.after;
  EXPECT_FALSE(Has(body, "exponential(")) << o.after;
  EXPECT_TRUE(Has(entry, "dot(") && Has(entry, "exponential(")) << o.after;
  EXPECT_TRUE(Has(body, "convert(") && Has(body, "compare(") == false) << o.after;
  EXPECT_TRUE(Has(body, "index=3")) << o.after;  // hd rides in the loop state, alone
  EXPECT_FALSE(Has(body, "index=4")) << o.after;
}

TEST(XlaPassesB, WhileLoopInvariantCodeMotionDefaultLeavesCheapOpsAlone) {
  const std::string after = RunDefault("while-loop-invariant-code-motion", R"(HloModule c
cond {
  p = (f32[8], f32[], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=2
  n = s32[] constant(4)
  ROOT lt = pred[] compare(k, n), direction=LT
}
body {
  p = (f32[8], f32[], s32[]) parameter(0)
  acc = f32[8] get-tuple-element(p), index=0
  x = f32[] get-tuple-element(p), index=1
  k = s32[] get-tuple-element(p), index=2
  b = f32[8] broadcast(x), dimensions={}
  s = f32[8] add(acc, b)
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  ROOT r = (f32[8], f32[], s32[]) tuple(s, x, k1)
}
ENTRY main {
  a = f32[8] parameter(0)
  x = f32[] parameter(1)
  z = s32[] constant(0)
  init = (f32[8], f32[], s32[]) tuple(a, x, z)
  ROOT l = (f32[8], f32[], s32[]) while(init), condition=cond, body=body
}
)");
  EXPECT_TRUE(Has(Comp(after, "body"), "broadcast(")) << after;  // cheap and bigger: stays
  EXPECT_FALSE(Has(Comp(after, "main"), "broadcast(")) << after;
}

// A hoisted fusion takes a copy of its fused computation: every fusion body keeps one caller.
TEST(XlaPassesB, WhileLoopInvariantCodeMotionCopiesFusionBodies) {
  Outcome o = ApplyAll("while-loop-invariant-code-motion", R"(HloModule f
fused_exp {
  p = f32[4] parameter(0)
  ROOT e = f32[4] exponential(p)
}
cond {
  p = (f32[4], f32[4], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=2
  n = s32[] constant(3)
  ROOT lt = pred[] compare(k, n), direction=LT
}
body {
  p = (f32[4], f32[4], s32[]) parameter(0)
  acc = f32[4] get-tuple-element(p), index=0
  w = f32[4] get-tuple-element(p), index=1
  k = s32[] get-tuple-element(p), index=2
  f = f32[4] fusion(w), kind=kLoop, calls=fused_exp
  g = f32[4] multiply(f, f)
  s = f32[4] add(acc, f)
  s2 = f32[4] add(s, g)
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  ROOT r = (f32[4], f32[4], s32[]) tuple(s2, w, k1)
}
ENTRY main {
  a = f32[4] parameter(0)
  w = f32[4] parameter(1)
  z = s32[] constant(0)
  init = (f32[4], f32[4], s32[]) tuple(a, w, z)
  l = (f32[4], f32[4], s32[]) while(init), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(l), index=0
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>(2, "invariant")));  // g (with f), then f
  EXPECT_FALSE(Has(Comp(o.after, "body"), "fusion(")) << o.after;
  EXPECT_EQ(Count(Comp(o.after, "main"), " fusion("), 2) << o.after;
  auto m = ParseModule(o.after);
  ASSERT_TRUE(m.ok()) << m.status();
  int fused = 0;
  for (const auto& c : (*m)->computations()) {
    if (!c->is_fusion_computation()) continue;
    ++fused;
    int callers = 0;
    for (const auto& other : (*m)->computations()) {
      for (const auto& i : other->instructions()) {
        for (const Computation* callee : i->called_computations()) callers += callee == c.get();
      }
    }
    EXPECT_EQ(callers, 1) << c->name() << "\n" << o.after;
  }
  EXPECT_EQ(fused, 2) << o.after;
}

// A loop whose body is shared with another loop is left alone (flatten-call-graph first).
constexpr char kSharedBody[] = R"(HloModule s
cond {
  p = (f32[4], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=1
  n = s32[] constant(2)
  ROOT lt = pred[] compare(k, n), direction=LT
}
body {
  p = (f32[4], s32[]) parameter(0)
  v = f32[4] get-tuple-element(p), index=0
  k = s32[] get-tuple-element(p), index=1
  two = f32[] constant(2)
  b = f32[4] broadcast(two), dimensions={}
  e = f32[4] exponential(b)
  s = f32[4] add(v, e)
  one = s32[] constant(1)
  k1 = s32[] add(k, one)
  ROOT r = (f32[4], s32[]) tuple(s, k1)
}
cond2 {
  p = (f32[4], s32[]) parameter(0)
  k = s32[] get-tuple-element(p), index=1
  n = s32[] constant(2)
  ROOT lt = pred[] compare(k, n), direction=LT
}
ENTRY main {
  a = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (f32[4], s32[]) tuple(a, z)
  l1 = (f32[4], s32[]) while(init), condition=cond, body=body
  l2 = (f32[4], s32[]) while(init), condition=cond2, body=body
  g1 = f32[4] get-tuple-element(l1), index=0
  ROOT t = (f32[4], (f32[4], s32[])) tuple(g1, l2)
}
)";

TEST(XlaPassesB, WhileLoopInvariantCodeMotionLeavesSharedBodiesAlone) {
  Outcome o = ApplyAll("while-loop-invariant-code-motion", kSharedBody);
  EXPECT_TRUE(o.rules.empty());
  EXPECT_TRUE(Has(Comp(o.after, "body"), "exponential(")) << o.after;
}

// ---- flatten-call-graph ----

constexpr char kShared[] = R"(HloModule f
sq {
  p = f32[4] parameter(0)
  ROOT m = f32[4] multiply(p, p)
}
neg {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
twice {
  p = f32[4] parameter(0)
  c = f32[4] call(p), to_apply=sq
  ROOT e = f32[4] exponential(c)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=sq
  c2 = f32[4] call(c1), to_apply=sq
  pr = pred[] parameter(1)
  c3 = f32[4] conditional(pr, c2, x), true_computation=sq, false_computation=neg
  t1 = f32[4] call(c3), to_apply=twice
  t2 = f32[4] call(t1), to_apply=twice
  zero = f32[] constant(0)
  r1 = f32[] reduce(t2, zero), dimensions={0}, to_apply=add
  r2 = f32[] reduce(c1, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[4], f32[], f32[]) tuple(t2, r1, r2)
}
)";

TEST(XlaPassesB, FlattenCallGraphGivesEachCallSiteItsOwnCallee) {
  Outcome o = ApplyAll("flatten-call-graph", kShared);
  // sq: the first call keeps it; c2 and the conditional's branch and twice's call are sites
  // (twice's own call of sq is copied with twice, not offered twice); the reducer stays shared.
  EXPECT_EQ(o.rules, (std::vector<std::string>{"shared_call", "shared_branch", "shared_call", "shared_call"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{1, 1, 1, 1}));
  // Every computation but the reducer is now referenced exactly once.
  auto m = ParseModule(o.after);
  ASSERT_TRUE(m.ok()) << m.status();
  std::map<std::string, int> refs;
  for (const auto& c : (*m)->computations()) {
    for (const auto& i : c->instructions()) {
      for (const Computation* callee : i->called_computations()) ++refs[callee->name()];
    }
  }
  EXPECT_EQ(refs.size(), 9u) << o.after;  // 5 sq, neg, 2 twice, add
  for (const auto& [name, n] : refs) EXPECT_EQ(n, name == "add" ? 2 : 1) << name << "\n" << o.after;
  EXPECT_EQ(Count(o.after, "to_apply=%add"), 2) << o.after;
}

TEST(XlaPassesB, FlattenCallGraphLeavesSingleCallersAndReducersAlone) {
  Outcome o = ApplyAll("flatten-call-graph", R"(HloModule n
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
sq {
  p = f32[4] parameter(0)
  ROOT m = f32[4] multiply(p, p)
}
ENTRY main {
  x = f32[4] parameter(0)
  c1 = f32[4] call(x), to_apply=sq
  zero = f32[] constant(0)
  r1 = f32[] reduce(c1, zero), dimensions={0}, to_apply=add
  r2 = f32[] reduce(x, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[]) tuple(r1, r2)
}
)");
  EXPECT_TRUE(o.rules.empty());
  EXPECT_FALSE(Has(o.after, "sq.1")) << o.after;
}

// while-loop-invariant-code-motion leaves a shared body alone; after flattening it hoists.
TEST(XlaPassesB, FlattenCallGraphLetsLoopMotionHoistFromSharedBodies) {
  // Each loop owns a body after flattening, and both hoist (the loop value is also
  // read whole: the entry root gets the old state shape back).
  auto m = ParseModule(kSharedBody);
  ASSERT_TRUE(m.ok());
  auto flat = RunPipeline(**m, "seq:flatten-call-graph,while-loop-invariant-code-motion", {});
  ASSERT_TRUE(flat.ok()) << flat.status();
  const std::string after = PrintModule(**flat);
  EXPECT_EQ(Count(after, "exponential("), 2) << after;
  EXPECT_FALSE(Has(Comp(after, "body"), "exponential(")) << after;
  EXPECT_TRUE(VerifyModule(**flat).ok()) << after;
  auto before_v = testing::RunSeeded(**m, 5);
  auto after_v = testing::RunSeeded(**flat, 5);
  ASSERT_TRUE(before_v.ok() && after_v.ok());
  EXPECT_EQ(testing::CompareValues(*before_v, *after_v), "");
}

// ---- dot-decomposer ----

TEST(XlaPassesB, DotDecomposerCanonicalizesToBatchMatmul) {
  Outcome o = ApplyAll("dot-decomposer", R"(HloModule d
ENTRY main {
  a = f32[2,3,4,5] parameter(0)
  b = f32[5,3,6] parameter(1)
  d1 = f32[3,2,4,6] dot(a, b), lhs_batch_dims={1}, rhs_batch_dims={1}, lhs_contracting_dims={3}, rhs_contracting_dims={0}
  x = f32[8,16] parameter(2)
  w = f32[16,4] parameter(3)
  d2 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y = f32[2,8,16] parameter(4)
  d3 = f32[2,8,4] dot(y, w), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  p = f32[4,2,3] parameter(5)
  q = f32[3,2,6] parameter(6)
  d4 = f32[4,6] dot(p, q), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
  ROOT t = (f32[3,2,4,6], f32[8,4], f32[2,8,4], f32[4,6]) tuple(d1, d2, d3, d4)
}
)");
  // d2 is already canonical ([m, k] x [k, n]).
  EXPECT_EQ(o.rules, (std::vector<std::string>(3, "non_canonical_dot")));
  EXPECT_TRUE(Has(o.after, "f32[3,2,4,5] transpose(%a), dimensions={1,0,2,3}")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[3,8,6] dot(")) << o.after;
  EXPECT_TRUE(Has(o.after, "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}"))
      << o.after;
  EXPECT_TRUE(Has(o.after, "f32[16,16] reshape(%y)")) << o.after;  // d3: a free reshape, no transpose
  EXPECT_FALSE(Has(o.after, "transpose(%y)")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[4,6] reshape(%p)")) << o.after;  // d4: k = 2*3 on both sides
  EXPECT_TRUE(Has(o.after, "f32[2,3,6] transpose(%q), dimensions={1,0,2}")) << o.after;
  EXPECT_TRUE(Has(o.after, "dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}")) << o.after;
}

TEST(XlaPassesB, DotDecomposerLeavesCanonicalDotsAlone) {
  Outcome o = ApplyAll("dot-decomposer", R"(HloModule c
ENTRY main {
  a = f32[2,8,16] parameter(0)
  b = f32[2,16,4] parameter(1)
  bm = f32[2,8,4] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  k = f32[16,8] parameter(2)
  v = f32[16] parameter(3)
  mv = f32[8] dot(k, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = (f32[2,8,4], f32[8]) tuple(bm, mv)
}
)");
  EXPECT_TRUE(o.rules.empty());
}

// ---- gather-simplifier ----

TEST(XlaPassesB, GatherSimplifier) {
  Outcome o = ApplyAll("gather-simplifier", R"(HloModule g
ENTRY main {
  x = f32[5,4] parameter(0)
  i3 = s32[3,1] parameter(1)
  full = f32[3,5,2] gather(x, i3), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={5,2}
  e = f32[10,8] parameter(2)
  i1 = s32[1,1] parameter(3)
  row = f32[1,8] gather(e, i1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  rows = f32[3,8] gather(e, i3), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
  ROOT t = (f32[3,5,2], f32[1,8], f32[3,8]) tuple(full, row, rows)
}
)");
  // rows gathers three rows: a real gather, left alone.
  EXPECT_EQ(o.rules, (std::vector<std::string>{"full_slice", "dynamic_slice"}));
  EXPECT_TRUE(Has(o.after, "f32[5,2] slice(%x), slice={[0:5], [0:2]}")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[3,5,2] broadcast(")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[1,8] dynamic-slice(%e,")) << o.after;
  EXPECT_EQ(Count(o.after, " gather("), 1) << o.after;
}

// ---- tree-reduction-rewriter ----

TEST(XlaPassesB, TreeReductionRewriterSplitsLongReductions) {
  Outcome o = ApplyAll("tree-reduction-rewriter", R"(HloModule r
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
ENTRY main {
  a = f32[4,100] parameter(0)
  zero = f32[] constant(0)
  s = f32[4] reduce(a, zero), dimensions={1}, to_apply=add
  b = f32[64,3] parameter(1)
  ninf = f32[] constant(-inf)
  m = f32[3] reduce(b, ninf), dimensions={0}, to_apply=max
  one = f32[] constant(1)
  biased = f32[4] reduce(a, one), dimensions={1}, to_apply=add
  c = f32[4,16] parameter(2)
  short = f32[4] reduce(c, zero), dimensions={1}, to_apply=add
  ROOT t = (f32[4], f32[3], f32[4], f32[4]) tuple(s, m, biased, short)
}
)");
  // biased: init 1 is not add's identity; short: 16 elements fit one window.
  EXPECT_EQ(o.rules, (std::vector<std::string>(2, "long_reduction")));
  EXPECT_TRUE(Has(o.after, "f32[4,128] pad(%a, %zero), padding=0_0x0_28")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[4,4,32] reshape(")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[2,32,3] reshape(%b)")) << o.after;  // 64 = 2 * 32: no pad
  EXPECT_EQ(Count(o.after, " reduce("), 6) << o.after;
}

// ---- result-caster ----

TEST(XlaPassesB, ResultCaster) {
  Outcome o = ApplyAll("result-caster", R"(HloModule c
ENTRY main {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  d = bf16[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  h = bf16[4,8] parameter(2)
  k = bf16[8,3] parameter(3)
  up = f32[4,3] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (bf16[4,3], f32[4,3]) tuple(d, up)
}
)");
  // up widens (operand-upcaster's case), it does not narrow.
  EXPECT_EQ(o.rules, (std::vector<std::string>{"narrow_result"}));
  EXPECT_TRUE(Has(o.after, "f32[4,3] dot(%a, %b)")) << o.after;
  EXPECT_TRUE(Has(o.after, "bf16[4,3] convert(")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[4,3] dot(%h, %k)")) << o.after;
}

// ---- dynamic-index-splitter ----

TEST(XlaPassesB, DynamicIndexSplitter) {
  Outcome o = ApplyAll("dynamic-index-splitter", R"(HloModule s
ENTRY main {
  x = f32[5,6] parameter(0)
  v = s32[2] parameter(1)
  ds = f32[2,3] dynamic-slice(x, v), dynamic_slice_sizes={2,3}
  u = f32[2,3] parameter(2)
  dus = f32[5,6] dynamic-update-slice(x, u, v)
  i = s32[] parameter(3)
  j = s32[] parameter(4)
  scalar = f32[2,3] dynamic-slice(x, i, j), dynamic_slice_sizes={2,3}
  ROOT t = (f32[2,3], f32[5,6], f32[2,3]) tuple(ds, dus, scalar)
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>(2, "vector_index")));  // not `scalar`
  EXPECT_EQ(Count(o.after, "s32[1] slice(%v), slice={[1:2]}"), 2) << o.after;
  EXPECT_FALSE(Has(o.after, "dynamic-slice(%x, %v)")) << o.after;
  EXPECT_FALSE(Has(o.after, "dynamic-update-slice(%x, %u, %v)")) << o.after;
  EXPECT_TRUE(Has(o.after, "dynamic-slice(%x, %i, %j)")) << o.after;
}

}  // namespace
}  // namespace hlox
