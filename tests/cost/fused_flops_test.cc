// FLOPs of fusions by the runtime's fused-loop rules (cost/fused_flops.h) on hand-written
// fusions: an expensive producer under a broadcast (computed once on the register path and
// when the block loop hoists it, once per consumer element otherwise), a reduce over a shared
// producer, shared subexpressions (once, not once per user), the same value under two index
// maps (once per map), and a body the fused loop cannot compile (unfused, once per op). Each
// expected count follows the runtime's rule; the old demand rule (FusionFlopsRule::kDemand)
// gives a different count for each, which the tests check too, so they fail under it.
#include <string>

#include "absl/strings/str_cat.h"
#include "cost/analytical.h"
#include "cost/fused_flops.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace hlox {
namespace {

constexpr double kT = kTranscendentalFlops;

// A module whose entry calls `body` (a fused computation named "fused") on parameters of the
// given shapes; returns null (and fails the test) when it does not parse.
std::unique_ptr<Module> FusionModule(const std::string& body, const std::vector<std::string>& params,
                                     const std::string& result) {
  std::string text = "HloModule m\nfused {\n" + body + "}\nENTRY main {\n";
  std::string args;
  for (size_t k = 0; k < params.size(); ++k) {
    text += "  x" + std::to_string(k) + " = " + params[k] + " parameter(" + std::to_string(k) + ")\n";
    args += (k ? ", x" : "x") + std::to_string(k);
  }
  text += "  ROOT f = " + result + " fusion(" + args + "), kind=kLoop, calls=fused\n}\n";
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? *std::move(m) : nullptr;
}

double Flops(const Module& m, FusionFlopsRule rule = FusionFlopsRule::kRuntime) {
  AnalyticalOptions o;
  o.fusion_flops = rule;
  return ComputeAnalyticalCost(m, o).flops;
}

// exp(p) broadcast to [n, 32], negated: pure f32 math, so the register path runs it and
// computes exp's whole [n] once when n <= 65536; beyond that the block loop recomputes it per
// consumer element (too big to hoist).
std::unique_ptr<Module> BroadcastExp(int n, bool block_loop) {
  const std::string s = std::to_string(n), b = "f32[" + s + ",32]";
  std::string body = "  p = f32[" + s + "] parameter(0)\n  e = f32[" + s + "] exponential(p)\n  bc = " + b +
                     " broadcast(e), dimensions={0}\n  ng = " + b + " negate(bc)\n";
  if (block_loop) {  // a select keeps it off the register path
    body += "  z = f32[] constant(0)\n  zb = " + b + " broadcast(z), dimensions={}\n  c = pred[" + s +
            ",32] compare(bc, zb), direction=GT\n  ROOT r = " + b + " select(c, ng, bc)\n";
  } else {
    body += "  ROOT r = " + b + " negate(ng)\n";
  }
  return FusionModule(body, {"f32[" + s + "]"}, b);
}

TEST(FusedFlopsTest, RegisterPathComputesBroadcastSourceOnce) {
  auto m = BroadcastExp(20000, false);
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(Flops(*m), kT * 20000 + 2.0 * 20000 * 32);
  // The old rule recomputed exp per element (20000 > 16384).
  EXPECT_DOUBLE_EQ(Flops(*m, FusionFlopsRule::kDemand), (kT + 2) * 20000 * 32);
}

TEST(FusedFlopsTest, BigBroadcastSourceIsRecomputedPerElement) {
  auto m = BroadcastExp(100000, false);  // > 65536: no register path, too big to hoist
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(Flops(*m), (kT + 2) * 100000 * 32);
}

TEST(FusedFlopsTest, BlockLoopHoistsOnlySmallOperands) {
  // Block loop: exp of 10000 (<= 16384, replicated 32x) is computed once per evaluator;
  // exp of 20000 is recomputed for each of its 32 consumers. bc is shared by ng, c and r
  // (one evaluation), c and r cost 1 per element each.
  auto small = BroadcastExp(10000, true);
  auto big = BroadcastExp(20000, true);
  ASSERT_TRUE(small && big);
  EXPECT_DOUBLE_EQ(Flops(*small), kT * 10000 + 3.0 * 10000 * 32);
  EXPECT_DOUBLE_EQ(Flops(*big), (kT + 3) * 20000 * 32);
  // The old rule summed bc's demand over its three users: exp counted three times.
  EXPECT_DOUBLE_EQ(Flops(*big, FusionFlopsRule::kDemand), (3 * kT + 3) * 20000 * 32);
}

TEST(FusedFlopsTest, SharedSubexpressionsCountOnce) {
  // x_{k+1} = x_k * x_k + x_k: every x_k has two users at every level. The fused loop
  // evaluates each node once per element (the block memo / register program); counting per
  // user triples at each level (x_k is read twice by m_k and once by x_{k+1}; 20000
  // elements, above the old rule's cap for small values).
  std::string body = "  p = f32[20000] parameter(0)\n  x0 = f32[20000] exponential(p)\n";
  const int levels = 6;
  for (int k = 0; k < levels; ++k) {
    absl::StrAppend(&body, "  m", k, " = f32[20000] multiply(x", k, ", x", k, ")\n");
    absl::StrAppend(&body, k + 1 == levels ? "  ROOT " : "  ", "x", k + 1, " = f32[20000] add(m", k, ", x", k,
                    ")\n");
  }
  auto m = FusionModule(body, {"f32[20000]"}, "f32[20000]");
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(Flops(*m), kT * 20000 + 2.0 * levels * 20000);
  EXPECT_GT(Flops(*m, FusionFlopsRule::kDemand), 100 * Flops(*m));
}

TEST(FusedFlopsTest, ReduceOverSharedProducer) {
  // sum(e + e * e) over [64, 256] rows: e = exp(p) once per input element, the add and the
  // multiply once, the reduce one add per input element.
  auto m = FusionModule(
      "  p = f32[64,256] parameter(0)\n  e = f32[64,256] exponential(p)\n"
      "  q = f32[64,256] multiply(e, e)\n  s = f32[64,256] add(e, q)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[64] reduce(s, z), dimensions={1}, to_apply=add\n"
      "}\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n",
      {"f32[64,256]"}, "f32[64]");
  ASSERT_TRUE(m);
  const double n = 64 * 256;
  EXPECT_DOUBLE_EQ(Flops(*m), kT * n + 3 * n);
  EXPECT_DOUBLE_EQ(Flops(*m, FusionFlopsRule::kDemand), 3 * kT * n + 3 * n);
}

TEST(FusedFlopsTest, SameValueUnderTwoIndexMapsIsComputedTwice) {
  // Each index map asks e for a fresh index set, so e is evaluated once per map (b1, and the
  // reverse under b2; block loop:
  // the select keeps it off the register path; 20000 is too big to hoist).
  auto m = FusionModule(
      "  p = f32[20000] parameter(0)\n  e = f32[20000] exponential(p)\n"
      "  b1 = f32[20000,32] broadcast(e), dimensions={0}\n  v = f32[20000] reverse(e), dimensions={0}\n"
      "  b2 = f32[20000,32] broadcast(v), dimensions={0}\n"
      "  c = pred[20000,32] compare(b1, b2), direction=GT\n"
      "  ROOT r = f32[20000,32] select(c, b1, b2)\n",
      {"f32[20000]"}, "f32[20000,32]");
  ASSERT_TRUE(m);
  const double n = 20000.0 * 32;
  EXPECT_DOUBLE_EQ(Flops(*m), 2 * kT * n + 2 * n);
  // The old rule: each map's demand summed over its two users, e counted four times.
  EXPECT_DOUBLE_EQ(Flops(*m, FusionFlopsRule::kDemand), 4 * kT * n + 2 * n);
}

TEST(FusedFlopsTest, BodyTheFusedLoopCannotCompileRunsUnfused) {
  // A reduce that is not an output: the runtime runs the body op by op, each op once.
  auto m = FusionModule(
      "  p = f32[64,256] parameter(0)\n  z = f32[] constant(0)\n"
      "  r = f32[64] reduce(p, z), dimensions={1}, to_apply=add\n"
      "  b = f32[64,256] broadcast(r), dimensions={0}\n  e = f32[64,256] exponential(b)\n"
      "  ROOT s = f32[64,256] subtract(e, p)\n"
      "}\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n",
      {"f32[64,256]"}, "f32[64,256]");
  ASSERT_TRUE(m);
  const Computation* fused = m->FindComputation("fused");
  ASSERT_NE(fused, nullptr);
  EXPECT_FALSE(FusedLoopSupported(*fused));
  const double n = 64 * 256;
  EXPECT_DOUBLE_EQ(Flops(*m), n + kT * n + n);
  // Unfused, the broadcast result and exp's result travel through memory (4 kernels' traffic
  // instead of the fusion's one read of p and one write).
  EXPECT_GT(ComputeAnalyticalCost(*m).bytes_moved, 4 * n * 4);
}

}  // namespace
}  // namespace hlox
