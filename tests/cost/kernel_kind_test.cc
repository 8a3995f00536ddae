// The roofline's per-kind kernel costs (OverheadRule::kPerKind): a plain kernel and the same op
// inside a fusion each get their kind's fixed cost, a block-loop fusion its per-node cost, the
// flat rule stays selectable; fused ops are charged by element class (f32, integer, bf16/f16)
// and data-movement ops more;
// the calibration JSON keeps the kinds and old files still load.
#include <filesystem>
#include <fstream>

#include "cost/analytical.h"
#include "cost/kernel_model.h"
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace hlox {
namespace {

constexpr char kPlain[] = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT a = f32[4] add(p, q)
})";

constexpr char kFusedF32[] = R"(HloModule m
f {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT s = f32[4] add(a, b)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] fusion(p, q), kind=kLoop, calls=f
})";

constexpr char kFusedU32Chain[] = R"(HloModule m
f {
  a = u32[4] parameter(0)
  b = u32[4] parameter(1)
  c = u32[4] add(a, b)
  d = u32[4] xor(c, b)
  ROOT s = u32[4] add(d, a)
}
ENTRY e {
  p = u32[4] parameter(0)
  q = u32[4] parameter(1)
  ROOT r = u32[4] fusion(p, q), kind=kLoop, calls=f
})";

std::unique_ptr<Module> Parse(const char* text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// Options whose compute and bytes terms vanish, with distinct fixed costs per kind.
AnalyticalOptions FixedOnly() {
  AnalyticalOptions o;
  o.peaks.gflops_1 = o.peaks.bandwidth_gbs_1 = 1e9;
  for (int k = 0; k < kNumKernelKinds; ++k) o.peaks.kinds[k] = {1.0 + k, 0, 0.5, 0, 0.5, 0, 0.5};
  return o;
}

TEST(KernelKindTest, KindsFollowTheRuntimesPath) {
  auto plain = Parse(kPlain), reg = Parse(kFusedF32), block = Parse(kFusedU32Chain);
  ASSERT_TRUE(plain && reg && block);
  EXPECT_EQ(KernelKindOf(*plain->entry()->root()), KernelKind::kElementwise);
  EXPECT_EQ(KernelKindOf(*reg->entry()->root()), KernelKind::kFusionRegister);
  EXPECT_EQ(KernelKindOf(*block->entry()->root()), KernelKind::kFusionBlock);
}

TEST(KernelKindTest, PlainAndFusedKernelsGetTheirKindsFixedCost) {
  auto plain = Parse(kPlain), reg = Parse(kFusedF32), block = Parse(kFusedU32Chain);
  ASSERT_TRUE(plain && reg && block);
  const AnalyticalOptions o = FixedOnly();
  const auto us = [&](KernelKind k) { return o.peaks.kinds[static_cast<int>(k)].fixed_us * 1e-6; };
  EXPECT_NEAR(ComputeAnalyticalCost(*plain, o).roofline_seconds, us(KernelKind::kElementwise), 1e-12);
  EXPECT_NEAR(ComputeAnalyticalCost(*reg, o).roofline_seconds, us(KernelKind::kFusionRegister), 1e-12);
  // Three fused ops on the block loop: the fixed cost plus two further nodes at 0.5 us.
  EXPECT_NEAR(ComputeAnalyticalCost(*block, o).roofline_seconds, us(KernelKind::kFusionBlock) + 1e-6,
              1e-12);
  // The flat rule (the old one) charges kernel + fusion overheads whatever the kind.
  AnalyticalOptions flat = o;
  flat.overhead = OverheadRule::kFlat;
  flat.peaks.kernel_overhead_us = 0.3;
  flat.peaks.fusion_overhead_us = 0.6;
  EXPECT_NEAR(ComputeAnalyticalCost(*plain, flat).roofline_seconds, 0.3e-6, 1e-12);
  EXPECT_NEAR(ComputeAnalyticalCost(*block, flat).roofline_seconds, 0.9e-6, 1e-12);
}

TEST(KernelKindTest, PerElementCostIsAComputeFloor) {
  auto plain = Parse(kPlain);
  ASSERT_TRUE(plain);
  AnalyticalOptions o = FixedOnly();
  o.peaks.kinds[static_cast<int>(KernelKind::kElementwise)] = {0, 250, 0};  // 4 elements: 1 us
  EXPECT_NEAR(ComputeAnalyticalCost(*plain, o).roofline_seconds, 1e-6, 1e-12);
}

// A block-loop fusion of `n` elements: a clamp chain (off the register path) of type `t`.
std::string ClampFusion(const std::string& t, int n) {
  const std::string s = t + "[" + std::to_string(n) + "]";
  return "HloModule m\nf {\n  a = " + s + " parameter(0)\n  b = " + s + " parameter(1)\n  c = " + s +
         " clamp(b, a, a)\n  ROOT d = " + s + " clamp(b, c, a)\n}\nENTRY e {\n  p = " + s +
         " parameter(0)\n  q = " + s + " parameter(1)\n  ROOT r = " + s +
         " fusion(p, q), kind=kLoop, calls=f\n}\n";
}

TEST(KernelKindTest, FusedOpsAreChargedByTheirElementClass) {
  auto f32 = Parse(ClampFusion("f32", 4096).c_str()), u32 = Parse(ClampFusion("u32", 4096).c_str()),
       s32 = Parse(ClampFusion("s32", 4096).c_str()), bf16 = Parse(ClampFusion("bf16", 4096).c_str());
  ASSERT_TRUE(f32 && u32 && s32 && bf16);
  for (const auto* m : {&f32, &u32, &s32, &bf16}) {
    ASSERT_EQ(KernelKindOf(*(*m)->entry()->root()), KernelKind::kFusionBlock);
  }
  // Compute and bytes terms vanish; block loop: 1 us + 10 ns/element, per further node 0.5 us
  // + 0.25 ns/element for f32; 40 ns, 2 us + 1 ns for integers; 20 ns, 1 us + 0.5 ns for bf16.
  AnalyticalOptions o = FixedOnly();
  KernelKindCost& c = o.peaks.kinds[static_cast<int>(KernelKind::kFusionBlock)];
  c = {1, 10, 0.5, 40, 2, 20, 1, 0.25, 1, 0.5};
  const auto secs = [&](const Module& m) { return ComputeAnalyticalCost(m, o).roofline_seconds; };
  EXPECT_NEAR(secs(*f32), 1e-6 + 4096 * 10.25e-9 + 0.5e-6, 1e-12);
  EXPECT_NEAR(secs(*u32), 1e-6 + 4096 * 41e-9 + 2e-6, 1e-12);
  EXPECT_NEAR(secs(*s32), secs(*u32), 1e-12);
  EXPECT_NEAR(secs(*bf16), 1e-6 + 4096 * 20.5e-9 + 1e-6, 1e-12);
  // With the built-in kind costs (peaks out of the way) an integer fusion costs more than the
  // same f32 one.
  AnalyticalOptions d;
  d.peaks.gflops_1 = d.peaks.bandwidth_gbs_1 = 1e9;
  EXPECT_GT(ComputeAnalyticalCost(*u32, d).roofline_seconds,
            1.5 * ComputeAnalyticalCost(*f32, d).roofline_seconds);
  // A mixed body: compares go by their operands' type; the charge is the mix's weighted mean.
  auto mixed = Parse(R"(HloModule m
f {
  a = f32[100] parameter(0)
  b = u32[100] parameter(1)
  c = f32[100] clamp(a, a, a)
  x = u32[100] xor(b, b)
  k = pred[100] compare(c, a), direction=LT
  ROOT y = u32[100] add(x, b)
}
ENTRY e {
  p = f32[100] parameter(0)
  q = u32[100] parameter(1)
  ROOT r = u32[100] fusion(p, q), kind=kLoop, calls=f
})");
  ASSERT_TRUE(mixed);
  const FusedOpMix mix = FusedOpMixOf(*mixed->entry()->root()->to_apply());
  EXPECT_EQ(mix.count[static_cast<int>(ElementClass::kFloat)], 2);
  EXPECT_EQ(mix.count[static_cast<int>(ElementClass::kInteger)], 2);
  EXPECT_EQ(mix.count[static_cast<int>(ElementClass::kHalf)], 0);
  EXPECT_NEAR(secs(*mixed), 1e-6 + 100 * (25 + 3 * 0.625) * 1e-9 + 3 * 1.25e-6, 1e-12);
}

TEST(KernelKindTest, FusedDataMovementOpsCostMore) {
  auto moves = Parse(R"(HloModule m
f {
  a = u32[8] parameter(0)
  b = u32[8] parameter(1)
  x = u32[4] slice(a), slice={[0:4]}
  y = u32[4] slice(b), slice={[4:8]}
  c = u32[8] concatenate(x, y), dimensions={0}
  ROOT d = u32[8] add(c, b)
}
ENTRY e {
  p = u32[8] parameter(0)
  q = u32[8] parameter(1)
  ROOT r = u32[8] fusion(p, q), kind=kLoop, calls=f
})");
  ASSERT_TRUE(moves);
  EXPECT_EQ(FusedOpMixOf(*moves->entry()->root()->to_apply()).moves, 3);
  AnalyticalOptions o = FixedOnly();
  const KernelKind kind = KernelKindOf(*moves->entry()->root());
  KernelKindCost& c = o.peaks.kinds[static_cast<int>(kind)];
  c = {1, 0, 0.5, 0, 0.5, 0, 0.5, 0, 0, 0, 0.25};
  // Three further nodes at 0.5 us, three of them data movement at 0.25 us more.
  EXPECT_NEAR(ComputeAnalyticalCost(*moves, o).roofline_seconds, (1 + 1.5 + 0.75) * 1e-6, 1e-12);
  EXPECT_GT(DefaultKernelKindCosts()[static_cast<int>(KernelKind::kFusionBlock)].move_node_us, 0);
}

TEST(KernelKindTest, CalibrationKeepsKindsAndOldFilesLoad) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hlox_kinds." + std::to_string(::getpid()) + ".json")).string();
  MachinePeaks p;
  p.kinds[static_cast<int>(KernelKind::kFusionBlock)] = {1.25, 2.5,  0.125, 3.5, 0.375, 4.5,
                                                         0.625, 5.5, 6.5,   7.5, 8.5};
  p.kinds_source = "measured";
  ASSERT_TRUE(SavePeaks(p, path).ok());
  auto q = LoadPeaks(path);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].fixed_us, 1.25);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].ns_per_element, 2.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].node_us, 0.125);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].int_ns_per_element, 3.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].int_node_us, 0.375);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].half_ns_per_element, 4.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].half_node_us, 0.625);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].node_ns_per_element, 5.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].int_node_ns_per_element, 6.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].half_node_ns_per_element, 7.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].move_node_us, 8.5);
  EXPECT_EQ(q->kinds_source, "measured");
  // A file written before the kinds existed: every kind takes the defaults.
  std::ofstream(path, std::ios::trunc)
      << R"({"gflops_1": 10, "gflops_n": 10, "bandwidth_gbs_1": 5, "bandwidth_gbs_n": 5})";
  auto old = LoadPeaks(path);
  ASSERT_TRUE(old.ok()) << old.status();
  const KernelKindCosts d = DefaultKernelKindCosts();
  for (int k = 0; k < kNumKernelKinds; ++k) {
    EXPECT_DOUBLE_EQ(old->kinds[k].fixed_us, d[k].fixed_us) << KernelKindName(static_cast<KernelKind>(k));
  }
  EXPECT_EQ(old->kinds_source, "defaults");
  EXPECT_GT(d[static_cast<int>(KernelKind::kFusionBlock)].node_us, 0);
  // One kind given: that kind read, the others defaults.
  std::ofstream(path, std::ios::trunc) << R"({"gflops_1": 10, "gflops_n": 10, "bandwidth_gbs_1": 5,
      "bandwidth_gbs_n": 5, "kernel_kinds": {"dot": {"fixed_us": 3}}})";
  auto part = LoadPeaks(path);
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_DOUBLE_EQ(part->kinds[static_cast<int>(KernelKind::kDot)].fixed_us, 3);
  EXPECT_DOUBLE_EQ(part->kinds[static_cast<int>(KernelKind::kDot)].ns_per_element,
                   d[static_cast<int>(KernelKind::kDot)].ns_per_element);
  EXPECT_DOUBLE_EQ(part->kinds[0].fixed_us, d[0].fixed_us);
  // A file from before the element classes (kinds without int_/half_ fields): those default.
  std::ofstream(path, std::ios::trunc) << R"({"gflops_1": 10, "gflops_n": 10, "bandwidth_gbs_1": 5,
      "bandwidth_gbs_n": 5, "kernel_kinds": {"fusion_block": {"fixed_us": 0.5, "ns_per_element": 0.2,
      "node_us": 0.1}}})";
  auto pre = LoadPeaks(path);
  ASSERT_TRUE(pre.ok()) << pre.status();
  const int b = static_cast<int>(KernelKind::kFusionBlock);
  EXPECT_DOUBLE_EQ(pre->kinds[b].ns_per_element, 0.2);
  EXPECT_DOUBLE_EQ(pre->kinds[b].int_ns_per_element, d[b].int_ns_per_element);
  EXPECT_DOUBLE_EQ(pre->kinds[b].half_node_us, d[b].half_node_us);
  EXPECT_DOUBLE_EQ(pre->kinds[b].int_node_ns_per_element, d[b].int_node_ns_per_element);
  EXPECT_DOUBLE_EQ(pre->kinds[b].move_node_us, d[b].move_node_us);
  EXPECT_GT(d[b].int_ns_per_element, 4 * d[b].ns_per_element);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hlox
