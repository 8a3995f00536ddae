// Timing protocol on synthetic workloads driven by a fake clock, plus the robust statistics.
#include <algorithm>
#include <cmath>
#include <random>

#include "cost/stats.h"
#include "cost/timing.h"
#include "gtest/gtest.h"
#include "tests/cost/fake_clock.h"

namespace hlox {
namespace {

using testing::FakeClock;

TEST(StatsTest, MedianAndMad) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
  // |x - 3| for {1,2,3,4,100} = {2,1,0,1,97} -> median 1.
  EXPECT_DOUBLE_EQ(MedianAbsDeviation({1, 2, 3, 4, 100}), 1);
}

TEST(StatsTest, BootstrapIntervalContainsMedianAndIsSeeded) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> nd(10, 1);
  std::vector<double> v(41);
  for (double& x : v) x = nd(rng);
  auto [lo, hi] = BootstrapMedianInterval(v, 1);
  double m = Median(v);
  EXPECT_LE(lo, m);
  EXPECT_GE(hi, m);
  EXPECT_LT(lo, hi);
  EXPECT_GT(lo, 9.0);  // the true median 10 is well inside
  EXPECT_LT(hi, 11.0);
  auto again = BootstrapMedianInterval(v, 1);
  EXPECT_EQ(again.first, lo);
  EXPECT_EQ(again.second, hi);
}

TEST(StatsTest, KendallTau) {
  EXPECT_DOUBLE_EQ(KendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1);
  EXPECT_DOUBLE_EQ(KendallTau({1, 2, 3, 4}, {4, 3, 2, 1}), -1);
  // Pairs: (1,2)+ (1,3)+ (1,4)+ (2,3)- (2,4)+ (3,4)+ -> (5-1)/6.
  EXPECT_NEAR(KendallTau({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0, 1e-12);
}

TEST(TimingTest, StableWorkloadConverges) {
  FakeClock clock;
  TimingProtocol p;
  p.warmups = 2;
  p.min_samples = 5;
  p.target_rel_error = 0.02;
  p.min_sample_seconds = 1e-3;
  int calls = 0;
  CostDistribution d = MeasureCost([&] { ++calls; clock.Advance(2e-3); }, p, 1, std::ref(clock));
  EXPECT_FALSE(d.unstable);
  EXPECT_EQ(d.samples.size(), 5u);  // converged as soon as allowed
  EXPECT_EQ(d.calls_per_sample, 1);
  EXPECT_DOUBLE_EQ(d.median, 2e-3);
  EXPECT_DOUBLE_EQ(d.mad, 0);
  EXPECT_DOUBLE_EQ(d.ci_low, 2e-3);
  EXPECT_DOUBLE_EQ(d.ci_high, 2e-3);
  EXPECT_EQ(calls, 2 + 5);
}

TEST(StatsTest, MedianRelativeError) {
  // MAD 1 around median 10 with 4 samples: 1.858 * 1 / (10 * 2).
  EXPECT_NEAR(MedianRelativeError({9, 11, 9, 11}), 1.858 * 1 / (10 * 2), 1e-12);
  EXPECT_TRUE(std::isinf(MedianRelativeError({})));
}

// Samples spread +-2% around the median: MAD/median stays 2% however many samples are taken,
// so the protocol keeps sampling until the median itself is precise: 1.858 * 0.02 / sqrt(n)
// <= 0.004 first holds at n = 87 (n = 86 gives 0.00401).
TEST(TimingTest, SamplesUntilTheMedianIsPrecise) {
  FakeClock clock;
  int k = 0;
  TimingProtocol p;
  p.min_samples = 5;
  p.max_samples = 1000;
  p.time_cap_seconds = 1e9;
  p.target_rel_error = 0.004;
  const double cycle[3] = {0.98e-3, 1.0e-3, 1.02e-3};
  CostDistribution d = MeasureCost([&] { clock.Advance(cycle[k++ % 3]); }, p, 1, std::ref(clock));
  EXPECT_FALSE(d.unstable);
  EXPECT_GE(d.samples.size(), 80u);
  EXPECT_LE(d.samples.size(), 95u);
  EXPECT_NEAR(d.median, 1.0e-3, 1e-12);
}

TEST(TimingTest, ShortCallsAreBatched) {
  FakeClock clock;
  TimingProtocol p;
  p.min_sample_seconds = 1e-3;
  CostDistribution d = MeasureCost([&] { clock.Advance(1e-6); }, p, 1, std::ref(clock));
  EXPECT_EQ(d.calls_per_sample, 1000);
  EXPECT_NEAR(d.median, 1e-6, 1e-12);  // per call, not per sample
  EXPECT_FALSE(d.unstable);
}

TEST(TimingTest, NoisyWorkloadIsUnstableUnderTightCap) {
  FakeClock clock;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(1e-3, 4e-3);  // +-60% around the median
  TimingProtocol p;
  p.min_samples = 5;
  p.max_samples = 1000;
  p.target_rel_error = 0.01;
  p.time_cap_seconds = 0.05;
  CostDistribution d = MeasureCost([&] { clock.Advance(u(rng)); }, p, 1, std::ref(clock));
  EXPECT_TRUE(d.unstable);
  EXPECT_GE(d.samples.size(), 5u);
  EXPECT_LT(d.samples.size(), 40u);  // stopped by the cap, not max_samples
  EXPECT_LE(d.ci_low, d.median);
  EXPECT_GE(d.ci_high, d.median);
  EXPECT_GT(d.mad, 0);
}

TEST(TimingTest, MaxSamplesWithoutTargetIsUnstable) {
  FakeClock clock;
  int k = 0;
  TimingProtocol p;
  p.min_samples = 3;
  p.max_samples = 7;
  p.target_rel_error = 0.0001;
  p.time_cap_seconds = 1e9;
  CostDistribution d =
      MeasureCost([&] { clock.Advance(1e-3 * (1 + k++ % 3)); }, p, 1, std::ref(clock));
  EXPECT_TRUE(d.unstable);
  EXPECT_EQ(d.samples.size(), 7u);
  EXPECT_DOUBLE_EQ(d.min, 1e-3);
}

// Calls [first, last) run 1.5x slower, and so does the probe right after such a call: an
// outside disturbance that slows everything on the core for a while.
struct Episode {
  FakeClock* clock;
  int first, last, calls = 0;
  bool in() const { return calls > first && calls <= last; }
  void Work() {
    ++calls;
    clock->Advance(in() ? 3e-3 : 2e-3);
  }
  void Probe() { clock->Advance(in() ? 6e-5 : 4e-5); }
};

TEST(TimingTest, GuardLeavesOutDisturbedSamples) {
  for (double threshold : {0.1, 0.0}) {
    FakeClock clock;
    Episode e{&clock, 10, 20};
    TimingProtocol p;
    p.warmups = 2;
    p.min_samples = 5;
    p.max_samples = 30;
    p.target_rel_error = -1;  // run to max_samples
    p.time_cap_seconds = 1e9;
    p.interference_threshold = threshold;
    CostDistribution d = MeasureCost([&] { e.Work(); }, p, 1, std::ref(clock), [&] { e.Probe(); });
    double worst = *std::max_element(d.samples.begin(), d.samples.end());
    if (threshold > 0) {
      // Calls 11..20 are slow; the sample after them is bracketed by a slow probe too.
      EXPECT_EQ(d.disturbed, 11);
      EXPECT_EQ(d.samples.size(), 30u);
      EXPECT_NEAR(worst, 2e-3, 1e-12);
    } else {
      EXPECT_EQ(d.disturbed, 0);
      EXPECT_NEAR(worst, 3e-3, 1e-12);
    }
  }
}

TEST(TimingTest, GuardSamplesPastTheCapUntilQuiet) {
  // After the warm-ups and one quiet sample, 40 calls are disturbed (0.12 s at 3 ms), longer
  // than the 0.05 s cap but within three times it: the protocol keeps sampling past the cap
  // until it has min_samples quiet samples, and reports their median.
  FakeClock clock;
  Episode e{&clock, 3, 43};
  TimingProtocol p;
  p.time_cap_seconds = 0.05;
  p.interference_threshold = 0.1;
  CostDistribution d = MeasureCost([&] { e.Work(); }, p, 1, std::ref(clock), [&] { e.Probe(); });
  EXPECT_NEAR(d.median, 2e-3, 1e-12);
  EXPECT_EQ(d.samples.size(), 5u);
  EXPECT_GE(d.disturbed, 40);
  EXPECT_GT(clock.now, p.time_cap_seconds);
}

TEST(TimingTest, ErrorsAbortMeasurement) {
  int calls = 0;
  auto r = MeasureCostOrError(
      [&]() -> absl::Status {
        if (++calls == 4) return absl::InternalError("kernel failed");
        return absl::OkStatus();
      },
      TimingProtocol{}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "kernel failed");
}

TEST(TimingTest, RealClockSanity) {
  // Real time: only structural checks, never durations.
  TimingProtocol p;
  p.time_cap_seconds = 0.05;
  p.min_sample_seconds = 1e-4;
  volatile double sink = 0;
  CostDistribution d = MeasureCost([&] { for (int i = 0; i < 1000; ++i) sink = sink + i; }, p, 1);
  EXPECT_GE(d.samples.size(), 3u);
  EXPECT_GT(d.median, 0);
  EXPECT_LE(d.min, d.median);
  EXPECT_LE(d.ci_low, d.median);
  EXPECT_GE(d.ci_high, d.median);
  EXPECT_GE(d.calls_per_sample, 1);
}

TEST(TimingTest, ProtocolTextNamesParameters) {
  TimingProtocol p;
  std::string s = p.ToString();
  EXPECT_NE(s.find("warmups=2"), std::string::npos);
  EXPECT_NE(s.find("target_rel_error=0.004"), std::string::npos);
}

}  // namespace
}  // namespace hlox
