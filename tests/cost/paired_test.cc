// Paired measurement on synthetic workloads with a fake clock: identical workloads give a ratio
// interval containing 1; a 20% faster candidate is detected, with an interval around 0.8.
#include <algorithm>
#include <random>

#include "cost/paired.h"
#include "gtest/gtest.h"
#include "tests/cost/fake_clock.h"

namespace hlox {
namespace {

using testing::FakeClock;

TimingProtocol NoisyProtocol() {
  TimingProtocol p;
  p.min_samples = 15;
  p.max_samples = 41;
  p.target_rel_error = 0;  // run all rounds
  p.time_cap_seconds = 1e9;
  p.min_sample_seconds = 0;
  return p;
}

TEST(PairedTest, IdenticalWorkloadsContainOne) {
  FakeClock clock;
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> noise(0, 0.1);
  auto work = [&] { clock.Advance(1e-3 * noise(rng)); };
  PairedResult r = MeasurePaired(work, work, NoisyProtocol(), 5, std::ref(clock));
  EXPECT_EQ(r.ratios.size(), 41u);
  EXPECT_LE(r.ci_low, 1.0);
  EXPECT_GE(r.ci_high, 1.0);
  EXPECT_LE(r.ci_low, r.ratio);
  EXPECT_GE(r.ci_high, r.ratio);
  EXPECT_FALSE(r.CandidateFaster());
  EXPECT_FALSE(r.CandidateSlower());
  EXPECT_EQ(r.baseline.samples.size(), r.candidate.samples.size());
}

TEST(PairedTest, DriftCancelsAndFasterCandidateIsSeen) {
  // The machine slows down 3x over the run (drift); the candidate is always 0.8x the baseline
  // at the same moment. Paired ratios see 0.8 although the separate medians overlap.
  FakeClock clock;
  double load = 1;
  auto base = [&] { clock.Advance(1e-3 * load); load += 0.02; };
  auto cand = [&] { clock.Advance(0.8e-3 * load); load += 0.02; };
  PairedResult r = MeasurePaired(base, cand, NoisyProtocol(), 9, std::ref(clock));
  EXPECT_TRUE(r.CandidateFaster());
  EXPECT_NEAR(r.ratio, 0.8, 0.03);
  EXPECT_LT(r.ci_high, 0.9);
}

TEST(PairedTest, OrderIsRandomizedAndSeeded) {
  FakeClock clock;
  std::vector<char> order1, order2;
  auto run = [&](std::vector<char>* order, uint64_t seed) {
    TimingProtocol p = NoisyProtocol();
    p.warmups = 1;
    MeasurePaired([&] { order->push_back('b'); clock.Advance(1e-3); },
                  [&] { order->push_back('c'); clock.Advance(1e-3); }, p, seed, std::ref(clock));
  };
  run(&order1, 4);
  run(&order2, 4);
  EXPECT_EQ(order1, order2);
  // After the warm-ups (b, c) the rounds start with c sometimes and with b sometimes.
  int c_first = 0, b_first = 0;
  for (size_t i = 2; i + 1 < order1.size(); i += 2) (order1[i] == 'c' ? c_first : b_first)++;
  EXPECT_GT(c_first, 5);
  EXPECT_GT(b_first, 5);
}

TEST(PairedTest, GuardLeavesOutDisturbedRounds) {
  // Identical workloads; in rounds 10..19 the candidate side runs 1.5x slower and the probe
  // after the round is slowed too. With the guard those rounds are left out and every kept
  // ratio is 1; without it the median still holds but the slow rounds stay in.
  for (double threshold : {0.1, 0.0}) {
    FakeClock clock;
    int calls = 0;
    auto disturbed = [&] { return calls / 2 >= 12 && calls / 2 < 22; };  // 2 warm-ups per side
    auto base = [&] { ++calls; clock.Advance(1e-3); };
    auto cand = [&] { ++calls; clock.Advance(disturbed() ? 1.5e-3 : 1e-3); };
    auto probe = [&] { clock.Advance(disturbed() ? 6e-5 : 4e-5); };
    TimingProtocol p = NoisyProtocol();
    p.target_rel_error = -1;  // run all rounds
    p.interference_threshold = threshold;
    PairedResult r = MeasurePaired(base, cand, p, 3, std::ref(clock), probe);
    double worst = *std::max_element(r.ratios.begin(), r.ratios.end());
    if (threshold > 0) {
      EXPECT_GT(r.candidate.disturbed, 0);
      EXPECT_NEAR(worst, 1.0, 1e-9);
      EXPECT_EQ(r.ratios.size(), 41u);
    } else {
      EXPECT_EQ(r.candidate.disturbed, 0);
      EXPECT_NEAR(worst, 1.5, 1e-9);
    }
    EXPECT_NEAR(r.ratio, 1.0, 1e-9);
  }
}

}  // namespace
}  // namespace hlox
