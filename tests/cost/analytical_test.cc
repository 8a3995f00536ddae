// Analytical costs on small hand-checked modules: op count, exact dot/conv FLOPs, bytes moved
// with and without fusion, scratchpad traffic limits, peak memory; and a corpus smoke check.
#include <cmath>

#include "cost/analytical.h"
#include "cost/scratchpad.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->name() == name) return i.get();
    }
  }
  return nullptr;
}

TEST(AnalyticalTest, DotFlopsAreExact) {
  auto m = Parse(R"(HloModule dot
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})");
  ASSERT_TRUE(m);
  // 2 * (2*3*5 outputs) * 4 contracted.
  EXPECT_DOUBLE_EQ(InstructionFlops(*Find(*m, "d")), 240);
  EXPECT_DOUBLE_EQ(ComputeAnalyticalCost(*m).flops, 240);
}

TEST(AnalyticalTest, ConvolutionFlopsCountOnlyRealTaps) {
  auto m = Parse(R"(HloModule conv
ENTRY e {
  x = f32[1,5,5,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  same = f32[1,5,5,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT strided = f32[1,2,2,4] convolution(x, k), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f
})");
  ASSERT_TRUE(m);
  // Per spatial dim with padding 1: outputs 0 and 4 see 2 real taps, 1..3 see 3: 13 pairs.
  // 2 * batch 1 * out features 4 * in features 2 * 13 * 13.
  EXPECT_DOUBLE_EQ(InstructionFlops(*Find(*m, "same")), 2.0 * 4 * 2 * 13 * 13);
  // Stride 2, no padding: 2 outputs x 3 taps per dim, all real.
  EXPECT_DOUBLE_EQ(InstructionFlops(*Find(*m, "strided")), 2.0 * 4 * 2 * 6 * 6);
}

TEST(AnalyticalTest, GroupedConvolutionFlops) {
  auto m = Parse(R"(HloModule gconv
ENTRY e {
  x = f32[2,4,6] parameter(0)
  k = f32[3,2,6] parameter(1)
  ROOT c = f32[2,4,6] convolution(x, k), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f, feature_group_count=3
})");
  ASSERT_TRUE(m);
  // Spatial 4, kernel 3, pad 1: 2+3+3+2 = 10 pairs; kernel input features 2 per group.
  EXPECT_DOUBLE_EQ(InstructionFlops(*Find(*m, "c")), 2.0 * 2 * 6 * 2 * 10);
}

constexpr char kUnfused[] = R"(HloModule unfused
ENTRY e {
  p0 = f32[100] parameter(0)
  p1 = f32[100] parameter(1)
  c = f32[] constant(2)
  a = f32[100] add(p0, p1)
  e = f32[100] exponential(a)
  ROOT m = f32[100] multiply(e, p0)
})";

constexpr char kFused[] = R"(HloModule fused
fused_computation {
  q0 = f32[100] parameter(0)
  q1 = f32[100] parameter(1)
  a = f32[100] add(q0, q1)
  e = f32[100] exponential(a)
  ROOT m = f32[100] multiply(e, q0)
}
ENTRY e {
  p0 = f32[100] parameter(0)
  p1 = f32[100] parameter(1)
  ROOT f = f32[100] fusion(p0, p1), kind=kLoop, calls=fused_computation
})";

TEST(AnalyticalTest, OpCountExcludesParametersConstantsAndTuples) {
  auto m = Parse(kUnfused);
  ASSERT_TRUE(m);
  EXPECT_EQ(OpCount(*m), 3);
  auto f = Parse(kFused);
  ASSERT_TRUE(f);
  EXPECT_EQ(OpCount(*f), 1);  // a fusion is one op
}

TEST(AnalyticalTest, BytesMovedFollowFusion) {
  auto u = Parse(kUnfused);
  auto f = Parse(kFused);
  ASSERT_TRUE(u && f);
  AnalyticalCost cu = ComputeAnalyticalCost(*u);
  AnalyticalCost cf = ComputeAnalyticalCost(*f);
  // Unfused: add reads 800 writes 400; exp reads 400 writes 400; multiply reads 800 writes 400.
  EXPECT_DOUBLE_EQ(cu.bytes_moved, 3200);
  // Fused: reads p0, p1 once, writes the result once.
  EXPECT_DOUBLE_EQ(cf.bytes_moved, 1200);
  // Same arithmetic either way: 100 adds, 100 exps, 100 multiplies.
  EXPECT_DOUBLE_EQ(cu.flops, 100 + 100 * kTranscendentalFlops + 100);
  EXPECT_DOUBLE_EQ(cf.flops, cu.flops);
  EXPECT_LT(cf.roofline_seconds, cu.roofline_seconds);
}

TEST(AnalyticalTest, RooflineUsesPeaks) {
  auto u = Parse(kUnfused);
  ASSERT_TRUE(u);
  AnalyticalOptions o;
  o.peaks.gflops_1 = 1;          // 1e9 flop/s
  o.peaks.bandwidth_gbs_1 = 1;   // 1e9 B/s
  o.overhead = OverheadRule::kFlat;
  o.peaks.kernel_overhead_us = o.peaks.fusion_overhead_us = 0;  // the classic roofline
  // Kernels: add max(100, 1200) + exp max(800, 800) + multiply max(100, 1200), in ns.
  EXPECT_NEAR(ComputeAnalyticalCost(*u, o).roofline_seconds, 3200e-9, 1e-15);
}

TEST(AnalyticalTest, RooflineAddsKernelOverheads) {
  auto u = Parse(kUnfused);
  auto f = Parse(kFused);
  ASSERT_TRUE(u && f);
  AnalyticalOptions o;
  o.peaks.gflops_1 = 1;
  o.peaks.bandwidth_gbs_1 = 1;
  o.overhead = OverheadRule::kFlat;
  o.peaks.kernel_overhead_us = 2;
  o.peaks.fusion_overhead_us = 3;
  // Three plain kernels: 3200 ns + 3 x 2 us. One fusion: max(1000, 1200) ns + 2 us + 3 us.
  EXPECT_NEAR(ComputeAnalyticalCost(*u, o).roofline_seconds, 3200e-9 + 6e-6, 1e-15);
  EXPECT_NEAR(ComputeAnalyticalCost(*f, o).roofline_seconds, 1200e-9 + 5e-6, 1e-15);
}

TEST(AnalyticalTest, ScratchpadTrafficLimits) {
  auto u = Parse(kUnfused);
  ASSERT_TRUE(u);
  const Computation& e = *u->entry();
  ScratchpadTarget t;
  t.line_bytes = 4;
  // A scratchpad of one line: every kernel streams, traffic = bytes moved in the simulation; the
  // model keeps a streaming kernel's last-step share of its tensors (a third of the line here),
  // which a dead tensor takes with it.
  t.scratchpad_bytes = 4;
  absl::StatusOr<TrafficReport> sim = SimulateScratchpadTraffic(e, t);
  ASSERT_TRUE(sim.ok());
  EXPECT_DOUBLE_EQ(sim->Total(), 3200);
  EXPECT_NEAR(ScratchpadTraffic(e, t).Total(), 3200, 4);
  // Everything fits: parameters read once, the result written once.
  t.scratchpad_bytes = int64_t{1} << 30;
  EXPECT_DOUBLE_EQ(ScratchpadTraffic(e, t).Total(), 1200);
  // Monotone in S.
  double prev = 1e18;
  for (int64_t s : {4, 400, 800, 1200, 1600, 4096}) {
    t.scratchpad_bytes = s;
    double traffic = ScratchpadTraffic(e, t).Total();
    EXPECT_LE(traffic, prev) << s;
    EXPECT_GE(traffic, 1200) << s;
    prev = traffic;
  }
}

TEST(AnalyticalTest, PeakMemoryFromLiveness) {
  auto u = Parse(kUnfused);
  ASSERT_TRUE(u);
  // Parameters (800) and the constant (4) live throughout; at exp, a (400) and e (400) are
  // live; at multiply, e and m.
  EXPECT_EQ(ComputeAnalyticalCost(*u).peak_memory_bytes, 804 + 800);
  auto f = Parse(kFused);
  ASSERT_TRUE(f);
  EXPECT_EQ(ComputeAnalyticalCost(*f).peak_memory_bytes, 800 + 400);
}

TEST(AnalyticalTest, CorpusModulesGiveFiniteCosts) {
  HLOX_REQUIRE_CORPUS();
  int checked = 0;
  for (const std::string& path : testing::CorpusFiles()) {
    auto m = ParseModuleFile(path);
    if (!m.ok()) continue;  // the parser's own tests cover parse failures
    AnalyticalCost a = ComputeAnalyticalCost(**m);
    EXPECT_TRUE(std::isfinite(a.flops) && std::isfinite(a.bytes_moved)) << path;
    EXPECT_GT(a.op_count, 0) << path;
    EXPECT_GE(a.bytes_moved, 0) << path;
    EXPECT_TRUE(std::isfinite(a.scratchpad_traffic_bytes) && a.scratchpad_traffic_bytes >= 0) << path;
    EXPECT_GT(a.peak_memory_bytes, 0) << path;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace hlox
