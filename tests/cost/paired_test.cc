// Paired measurement on synthetic workloads with a fake clock: identical workloads give a ratio
// interval containing 1; a 20% faster candidate is detected, with an interval around 0.8.
#include <algorithm>
#include <random>
#include <set>

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
  EXPECT_EQ(r.ratios.size(), 40u);  // 41 rounds, the odd last one dropped
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

TEST(PairedTest, OrderIsAbbaAndSeeded) {
  // After the warm-ups the rounds run A B, B A, A B, ...: each side first in half the rounds,
  // and which side is A depends on the seed.
  auto order_for = [](uint64_t seed) {
    FakeClock clock;
    std::vector<char> order;
    TimingProtocol p = NoisyProtocol();
    p.warmups = 1;
    MeasurePaired([&] { order.push_back('b'); clock.Advance(1e-3); },
                  [&] { order.push_back('c'); clock.Advance(1e-3); }, p, seed, std::ref(clock));
    return std::vector<char>(order.begin() + 2, order.end());  // the rounds
  };
  std::vector<char> a = order_for(4);
  EXPECT_EQ(a, order_for(4));
  ASSERT_GE(a.size(), 8u);
  for (size_t i = 0; i + 3 < a.size(); i += 4) {
    EXPECT_NE(a[i], a[i + 1]);
    EXPECT_EQ(a[i + 1], a[i + 2]);
    EXPECT_EQ(a[i], a[i + 3]);
  }
  std::set<char> firsts;
  for (uint64_t seed = 1; seed <= 8; ++seed) firsts.insert(order_for(seed)[0]);
  EXPECT_EQ(firsts.size(), 2u);
}

TEST(PairedTest, BothSidesBatchTheSameCalls) {
  // The baseline's warm-ups are slow (cold), the candidate's fast: both still batch the same
  // number of calls per round, sized on the faster side.
  FakeClock clock;
  int base_calls = 0;
  auto base = [&] { clock.Advance(++base_calls <= 2 ? 1e-3 : 1e-5); };
  auto cand = [&] { clock.Advance(1e-5); };
  TimingProtocol p = NoisyProtocol();
  p.min_sample_seconds = 1e-3;
  PairedResult r = MeasurePaired(base, cand, p, 2, std::ref(clock));
  EXPECT_EQ(r.calls_per_sample, 100);
  EXPECT_EQ(r.baseline.calls_per_sample, r.candidate.calls_per_sample);
  EXPECT_NEAR(r.ratio, 1.0, 1e-9);
}

TEST(PairedTest, OddLastRoundIsDroppedAndEightRoundsAreKept) {
  FakeClock clock;
  auto work = [&] { clock.Advance(1e-3); };
  TimingProtocol p = NoisyProtocol();
  p.min_samples = 1;
  p.max_samples = 9;  // stops at 9 rounds: the ninth (unbalanced) is dropped
  PairedResult r = MeasurePaired(work, work, p, 1, std::ref(clock));
  EXPECT_EQ(r.ratios.size(), 8u);
  EXPECT_FALSE(r.unstable);
  // A round cap (or time cap) below kMinPairedRounds is overridden: a batch interval needs them.
  p.max_samples = 2;
  r = MeasurePaired(work, work, p, 1, std::ref(clock));
  EXPECT_EQ(r.ratios.size(), static_cast<size_t>(kMinPairedRounds));
  EXPECT_FALSE(r.unstable);
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
