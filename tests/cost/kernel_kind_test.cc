// The roofline's per-kind kernel costs (OverheadRule::kPerKind): a plain kernel and the same op
// inside a fusion each get their kind's fixed cost, a block-loop fusion its per-node cost, the
// flat rule stays selectable; the calibration JSON keeps the kinds and old files still load.
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
  for (int k = 0; k < kNumKernelKinds; ++k) o.peaks.kinds[k] = {1.0 + k, 0, 0.5};
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

TEST(KernelKindTest, CalibrationKeepsKindsAndOldFilesLoad) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("hlox_kinds." + std::to_string(::getpid()) + ".json")).string();
  MachinePeaks p;
  p.kinds[static_cast<int>(KernelKind::kFusionBlock)] = {1.25, 2.5, 0.125};
  p.kinds_source = "measured";
  ASSERT_TRUE(SavePeaks(p, path).ok());
  auto q = LoadPeaks(path);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].fixed_us, 1.25);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].ns_per_element, 2.5);
  EXPECT_DOUBLE_EQ(q->kinds[static_cast<int>(KernelKind::kFusionBlock)].node_us, 0.125);
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
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hlox
