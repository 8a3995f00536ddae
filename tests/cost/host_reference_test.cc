// Host-speed references: the normalization arithmetic and the boundary bookkeeping on synthetic
// times and a fake clock, and the normalized summary a measurement records (recomputed here
// from the record's own reference times). No timed assertions.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cost/host_reference.h"
#include "cost/host_reference_store.h"
#include "cost/result_json.h"
#include "cost/stats.h"
#include "cost/timing.h"
#include "gtest/gtest.h"
#include "tests/cost/fake_clock.h"

namespace hlox {
namespace {

TEST(CostHostReferenceTest, NamesRoundTrip) {
  for (HostReferenceKind k : {HostReferenceKind::kNone, HostReferenceKind::kCompute,
                              HostReferenceKind::kMemory, HostReferenceKind::kMix}) {
    HostReferenceKind back = HostReferenceKind::kNone;
    ASSERT_TRUE(ParseHostReference(HostReferenceName(k), &back));
    EXPECT_EQ(back, k);
  }
  HostReferenceKind k = HostReferenceKind::kMix;
  EXPECT_FALSE(ParseHostReference("dram", &k));
  EXPECT_EQ(k, HostReferenceKind::kMix);  // untouched on failure
}

TEST(CostHostReferenceTest, NearbyIsTheFasterBracketingBoundary) {
  // Boundary k precedes sample k; sample k is bracketed by boundaries k and k+1.
  std::vector<double> b = {3, 1, 8, 2};
  EXPECT_EQ(NearbyReference(b, 3), (std::vector<double>{1, 1, 2}));
  // The last sample may lack its closing boundary: the opening one stands alone.
  EXPECT_EQ(NearbyReference(b, 4), (std::vector<double>{1, 1, 2, 2}));
  EXPECT_EQ(NearbyReference(b, 4, /*mean=*/true), (std::vector<double>{2, 4.5, 5, 2}));
  EXPECT_EQ(NearbyReference({}, 2), (std::vector<double>{0, 0}));
  EXPECT_TRUE(NearbyReference(b, 0).empty());
}

TEST(CostHostReferenceTest, SlowdownPerKind) {
  const ReferenceQuiet q{2.0, 10.0};
  const std::vector<double> c = {2, 4, 6}, m = {10, 40, 10};
  EXPECT_EQ(HostSlowdown(HostReferenceKind::kCompute, c, m, q), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(HostSlowdown(HostReferenceKind::kMemory, c, m, q), (std::vector<double>{1, 4, 1}));
  // The mix is the weighted geometric mean: 2^0.5 * 4^0.5 = 2.828..., 3^0.25 * 1^0.75.
  std::vector<double> mix = HostSlowdown(HostReferenceKind::kMix, c, m, q, 0.5);
  EXPECT_NEAR(mix[1], std::sqrt(8.0), 1e-12);
  std::vector<double> mix25 = HostSlowdown(HostReferenceKind::kMix, c, m, q, 0.25);
  EXPECT_NEAR(mix25[2], std::pow(3.0, 0.25), 1e-12);
  EXPECT_NEAR(mix25[1], std::pow(2.0, 0.25) * std::pow(4.0, 0.75), 1e-12);
  // None: no slowdown anywhere.
  EXPECT_EQ(HostSlowdown(HostReferenceKind::kNone, c, m, q), (std::vector<double>{1, 1, 1}));
}

TEST(CostHostReferenceTest, UnknownTimesLeaveTheSampleAlone) {
  // A missing reference time, a zero time or an unknown quiet time: slowdown 1.
  const std::vector<double> c = {4, 0}, m = {20};
  EXPECT_EQ(HostSlowdown(HostReferenceKind::kCompute, c, m, {2, 10}), (std::vector<double>{2, 1}));
  std::vector<double> mix = HostSlowdown(HostReferenceKind::kMix, c, m, {2, 10});
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_NEAR(mix[0], 2.0, 1e-12);  // 2^0.5 * 2^0.5
  EXPECT_EQ(mix[1], 1.0);           // entry 1 lacks both
  EXPECT_EQ(HostSlowdown(HostReferenceKind::kMemory, c, m, {2, 0}), (std::vector<double>{1, 1}));
}

TEST(CostHostReferenceTest, NormalizeDividesBySlowdown) {
  EXPECT_EQ(NormalizeSamples({2, 6, 5}, {1, 3, 0}), (std::vector<double>{2, 2, 5}));
  EXPECT_EQ(NormalizeSamples({2, 6}, {2}), (std::vector<double>{1, 6}));
  // A host slowed 1.5x for half the samples: normalized, every sample is the quiet time again.
  std::vector<double> samples, compute;
  for (int i = 0; i < 10; ++i) {
    const double slow = i % 2 == 0 ? 1.0 : 1.5;
    samples.push_back(4e-3 * slow);
    compute.push_back(1e-4 * slow);
  }
  std::vector<double> n = NormalizeSamples(
      samples, HostSlowdown(HostReferenceKind::kCompute, compute, {}, {1e-4, 0}));
  for (double v : n) EXPECT_NEAR(v, 4e-3, 1e-15);
  EXPECT_NEAR(Median(samples), 5e-3, 1e-15);  // the raw median sits between the two phases
}

TEST(CostHostReferenceTest, BoundaryTimesTheKernelsTheKindNeeds) {
  testing::FakeClock fake;
  HostReference::Clock clock = [&] { return fake(); };
  double compute_cost = 1e-4, memory_cost = 5e-4;
  auto compute = [&] { fake.Advance(compute_cost); };
  auto memory = [&] { fake.Advance(memory_cost); };
  HostReference mix(HostReferenceKind::kMix, clock, compute, memory);
  mix.Boundary();
  compute_cost = 3e-4;
  mix.Boundary();
  ASSERT_EQ(mix.compute_seconds().size(), 2u);
  ASSERT_EQ(mix.memory_seconds().size(), 2u);
  EXPECT_NEAR(mix.compute_seconds()[0], 1e-4, 1e-15);
  EXPECT_NEAR(mix.compute_seconds()[1], 3e-4, 1e-15);
  EXPECT_NEAR(mix.memory_seconds()[1], 5e-4, 1e-15);

  HostReference only(HostReferenceKind::kCompute, clock, compute, memory);
  only.Boundary();
  EXPECT_EQ(only.compute_seconds().size(), 1u);
  EXPECT_TRUE(only.memory_seconds().empty());

  HostReference none(HostReferenceKind::kNone, clock, compute, memory);
  const double before = fake();
  none.Boundary();
  EXPECT_FALSE(none.active());
  EXPECT_TRUE(none.compute_seconds().empty());
  EXPECT_EQ(fake(), before);  // nothing ran
}

TEST(CostHostReferenceTest, FixedQuietTimesOverrideTheFastestRun) {
  SetReferenceQuiet({3e-3, 7e-3});
  ReferenceQuiet q = CurrentReferenceQuiet();
  EXPECT_EQ(q.compute, 3e-3);
  EXPECT_EQ(q.memory, 7e-3);
  SetReferenceQuiet({});
  ReferenceQuiet calibrated = CalibrateReferenceQuiet(2);
  q = CurrentReferenceQuiet();
  EXPECT_GT(calibrated.compute, 0);
  EXPECT_GT(calibrated.memory, 0);
  EXPECT_LE(q.compute, calibrated.compute);  // the fastest run seen, these two included
  EXPECT_LE(q.memory, calibrated.memory);
}

TEST(CostHostReferenceTest, MeasurementRecordsNormalizedSummary) {
  // A real (short) measurement with both references: the record's normalized median must be
  // what its own reference times and quiet times give. No stored quiet times: the fastest runs.
  setenv("HLOX_REFERENCE_QUIET", "/nonexistent/hlox/host_reference.json", 1);
  SetReferenceQuiet({});
  TimingProtocol p;
  p.min_samples = 5;
  p.max_samples = 8;
  p.time_cap_seconds = 0.2;
  p.min_sample_seconds = 2e-4;
  p.host_reference = HostReferenceKind::kMix;
  p.reference_compute_weight = 0.3;
  volatile double sink = 0;
  CostDistribution d = MeasureCost(
      [&] {
        for (int i = 0; i < 20000; ++i) sink = sink + i * 1e-9;
      },
      p, 7);
  ASSERT_EQ(d.reference, "mix");
  ASSERT_FALSE(d.samples.empty());
  ASSERT_EQ(d.reference_compute.size(), d.samples.size());
  ASSERT_EQ(d.reference_memory.size(), d.samples.size());
  ASSERT_GT(d.reference_quiet_compute, 0);
  ASSERT_GT(d.reference_quiet_memory, 0);
  std::vector<double> expect;
  for (size_t i = 0; i < d.samples.size(); ++i) {
    const double slow = std::pow(d.reference_compute[i] / d.reference_quiet_compute, 0.3) *
                        std::pow(d.reference_memory[i] / d.reference_quiet_memory, 0.7);
    EXPECT_GE(slow, 1.0 - 1e-12);  // quiet is the fastest run, these included
    expect.push_back(d.samples[i] / slow);
  }
  EXPECT_NEAR(d.normalized_median, Median(expect), 1e-12 * d.median);
  EXPECT_LE(d.normalized_ci_low, d.normalized_median);
  EXPECT_GE(d.normalized_ci_high, d.normalized_median);
  EXPECT_GE(d.reference_slowdown, 1.0 - 1e-12);

  // The record's JSON carries the new keys, and reads back.
  ResultRecord r;
  r.cost = d;
  auto back = ResultFromJsonString(ResultToJsonString(r, true, -1));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->cost.reference, "mix");
  EXPECT_EQ(back->cost.normalized_median, d.normalized_median);
  EXPECT_EQ(back->cost.reference_memory, d.reference_memory);
  // Without a reference nothing new is written (older readers see the same record).
  TimingProtocol plain = p;
  plain.host_reference = HostReferenceKind::kNone;
  CostDistribution d0 = MeasureCost([&] { sink = sink + 1; }, plain, 7);
  EXPECT_TRUE(d0.reference.empty());
  EXPECT_TRUE(d0.reference_compute.empty());
  ResultRecord r0;
  r0.cost = d0;
  EXPECT_EQ(ResultToJsonString(r0, true, -1).find("normalized_median"), std::string::npos);
}

TEST(CostHostReferenceTest, StoredQuietTimesRoundTrip) {
  const std::string dir = ::testing::TempDir() + "hlox_host_reference_test";
  const std::string path = dir + "/sub/host_reference.json";
  ASSERT_TRUE(SaveReferenceQuiet({2.5e-4, 4.5e-4}, path).ok());
  auto q = LoadReferenceQuiet(path);
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->compute, 2.5e-4);
  EXPECT_EQ(q->memory, 4.5e-4);
  EXPECT_FALSE(SaveReferenceQuiet({0, 1}, path).ok());
  EXPECT_EQ(LoadReferenceQuiet(dir + "/missing.json").status().code(), absl::StatusCode::kNotFound);
  for (const char* bad : {"[1, 2]", "{\"compute_seconds\": 1}", "not json",
                          "{\"compute_seconds\": -1, \"memory_seconds\": 1}",
                          "{\"compute_seconds\": \"x\", \"memory_seconds\": 1}"}) {
    std::ofstream(path, std::ios::trunc) << bad;
    EXPECT_FALSE(LoadReferenceQuiet(path).ok()) << bad;
  }
}

}  // namespace
}  // namespace hlox
