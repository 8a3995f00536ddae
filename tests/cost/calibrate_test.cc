// Calibration: storing and loading peaks, interpolation between thread counts, fallbacks, and
// a quick measurement sanity check (positive figures only; no speed is asserted).
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cost/calibrate.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "." + std::to_string(::getpid()) + ".json")).string();
}

TEST(CalibrateTest, SaveLoadRoundTrip) {
  MachinePeaks p;
  p.gflops_1 = 50;
  p.gflops_n = 90;
  p.bandwidth_gbs_1 = 10;
  p.bandwidth_gbs_n = 15;
  p.threads_n = 3;
  p.kernel_overhead_us = 0.7;
  p.fusion_overhead_us = 1.9;
  p.cpu = "test cpu";
  std::string path = TempPath("hlox_calib_dir/calib");
  ASSERT_TRUE(SavePeaks(p, path).ok());
  auto q = LoadPeaks(path);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->gflops_1, 50);
  EXPECT_EQ(q->gflops_n, 90);
  EXPECT_EQ(q->bandwidth_gbs_n, 15);
  EXPECT_EQ(q->threads_n, 3);
  EXPECT_DOUBLE_EQ(q->kernel_overhead_us, 0.7);
  EXPECT_DOUBLE_EQ(q->fusion_overhead_us, 1.9);
  EXPECT_EQ(q->cpu, "test cpu");
  EXPECT_EQ(q->source, path);
  // Linear between 1 and threads_n, flat beyond.
  EXPECT_DOUBLE_EQ(q->GflopsFor(1), 50);
  EXPECT_DOUBLE_EQ(q->GflopsFor(2), 70);
  EXPECT_DOUBLE_EQ(q->GflopsFor(8), 90);
  EXPECT_DOUBLE_EQ(q->BandwidthGbsFor(2), 12.5);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(CalibrateTest, BadFilesAreErrors) {
  EXPECT_FALSE(LoadPeaks("/nonexistent/hlox/calibration.json").ok());
  std::string path = TempPath("hlox_calib_bad");
  std::ofstream(path) << "{\"gflops_1\": -1, \"gflops_n\": 1, \"bandwidth_gbs_1\": 1, \"bandwidth_gbs_n\": 1}";
  EXPECT_FALSE(LoadPeaks(path).ok());
  std::ofstream(path, std::ios::trunc) << "not json";
  EXPECT_FALSE(LoadPeaks(path).ok());
  std::filesystem::remove(path);
  EXPECT_EQ(DefaultPeaks().source, "defaults");
  EXPECT_GT(DefaultPeaks().GflopsFor(4), 0);
}

TEST(CalibrateTest, QuickMeasurementIsPositive) {
  MachinePeaks p = MeasurePeaks(1, 0.02);
  EXPECT_GT(p.gflops_1, 0);
  EXPECT_GT(p.bandwidth_gbs_1, 0);
  EXPECT_EQ(p.source, "measured");
  EXPECT_FALSE(p.cpu.empty());
}

}  // namespace
}  // namespace hlox
