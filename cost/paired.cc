// Paired measurement implementation: alternating warm-ups, one batch size for both sides, ABBA
// round order and the batch-median interval of the ratio.
#include "cost/paired.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "cost/stats.h"
#include "cost/verdict.h"

namespace hlox {

absl::StatusOr<PairedResult> MeasurePairedOrError(const PairedWorkload& run, int instances,
                                                  const TimingProtocol& p, uint64_t seed,
                                                  const TimingClock& clock,
                                                  const TimingProbe& probe,
                                                  const SchedSource& sched) {
  PairedResult r;
  const double start = clock();
  const int k_count = std::max(1, instances);
  r.instance_count = k_count;
  CostDistribution* dists[2] = {&r.baseline, &r.candidate};
  // Order: blocks of two rounds, A B then B A, one instance pair per block. Which side is A
  // alternates from block to block (from a seeded side), so the sides alternate run by run
  // across block boundaries too. The instance pairs are visited in order 0..K-1, then back
  // K-1..0, and so on: an instance pair's blocks then lie an odd number of blocks apart, so
  // each side is equally often the first to run on it.
  std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dull + 1);
  const int first = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
  auto side_at = [first](int64_t round, int k) {
    const int a = static_cast<int>((first + round / 2) % 2);
    return (round % 2 == 0) == (k == 0) ? a : 1 - a;
  };
  auto instance_at = [k_count](int64_t round) {
    const int64_t block = round / 2, visit = block / k_count, pos = block % k_count;
    return static_cast<int>(visit % 2 == 0 ? pos : k_count - 1 - pos);
  };
  // Warm-ups: every instance of both sides, alternating; passes after the first only while
  // within half the time cap. The batch size comes from the faster side's fastest warm-up of
  // the last pass.
  double last[2] = {INFINITY, INFINITY};
  for (int w = 0; w < std::max(1, p.warmups); ++w) {
    if (w > 0 && clock() - start > p.time_cap_seconds / 2) break;
    last[0] = last[1] = INFINITY;
    for (int inst = 0; inst < k_count; ++inst) {
      for (int k = 0; k < 2; ++k) {
        const int side = side_at(2 * (w * k_count + inst), k);
        const double t0 = clock();
        absl::Status st = run(side, inst);
        if (!st.ok()) return st;
        last[side] = std::min(last[side], clock() - t0);
      }
    }
  }
  r.calls_per_sample = CallsPerSample(std::min(last[0], last[1]), p.min_sample_seconds);
  for (CostDistribution* d : dists) d->calls_per_sample = r.calls_per_sample;
  const bool rewarm = k_count > 1 && std::min(last[0], last[1]) < kMediumBelowSeconds;
  // The series keeps the guards, the time cap and max rounds. There is no early stop on
  // precision: stopping when the interval happens to look narrow keeps exactly the intervals
  // that are too narrow (A/A pairs stopped that way excluded 1 in 20% of pairs). A pair runs
  // to its cap, and past it until min_rounds rounds are kept (a batch interval needs them).
  // No host reference: the ratio already cancels the host's speed.
  TimingProtocol rounds = p;
  rounds.host_reference = HostReferenceKind::kNone;
  rounds.target_rel_error = -1;
  SampleSeries series(rounds, start, clock, probe, sched);
  const size_t min_rounds = static_cast<size_t>(std::max({kMinPairedRounds, 2 * k_count, p.min_samples}));
  const size_t hard_max = 3 * static_cast<size_t>(std::max<int>(p.max_samples, min_rounds));
  std::vector<double> sides[2], instance_of;
  for (int64_t round = 0;; ++round) {
    double per_call[2] = {0, 0}, timed = 0;
    const int inst = instance_at(round);  // a new instance pair every ABBA block (but at a turn)
    // A freshly switched instance pair first runs each side once untimed, in the block's order:
    // timed cold, the side that runs first would pay alone for bringing back into the caches
    // the inputs and pool buffers both sides share. The order balances that over visits, but
    // it is noise in every block. Calls of the large size class (0.1 s or more) skip it:
    // refilling the caches is a small part of such a call, and the extra calls would add half
    // to the pair's time.
    if (rewarm && (instance_of.empty() || inst != instance_of.back())) {
      for (int k = 0; k < 2; ++k) {
        absl::Status st = run(side_at(round, k), inst);
        if (!st.ok()) return st;
      }
    }
    for (int k = 0; k < 2; ++k) {
      const int side = side_at(round, k);
      const double t0 = clock();
      for (int64_t c = 0; c < r.calls_per_sample; ++c) {
        absl::Status st = run(side, inst);
        if (!st.ok()) return st;
      }
      const double seconds = clock() - t0;
      timed += seconds;
      per_call[side] = seconds / static_cast<double>(r.calls_per_sample);
    }
    sides[0].push_back(per_call[0]);
    sides[1].push_back(per_call[1]);
    instance_of.push_back(inst);
    if (!series.Add(per_call[0] > 0 ? per_call[1] / per_call[0] : 1.0, timed)) continue;
    const size_t kept_rounds = series.Kept(series.values()).size();
    if (kept_rounds < min_rounds && series.values().size() < hard_max) continue;
    r.unstable = kept_rounds < min_rounds;
    // An odd last round would leave the order unbalanced: it is dropped (marked, then removed
    // after the guards' filter so the masks stay aligned).
    if (round % 2 == 0 && round > 0) {
      sides[0].back() = sides[1].back() = std::numeric_limits<double>::quiet_NaN();
    }
    break;
  }
  auto kept = [&series](const std::vector<double>& all) {
    std::vector<double> out = series.Kept(all);
    out.erase(std::remove_if(out.begin(), out.end(), [](double v) { return std::isnan(v); }), out.end());
    return out;
  };
  for (int side = 0; side < 2; ++side) {
    dists[side]->samples = kept(sides[side]);
    dists[side]->disturbed = series.disturbed();
    series.FillSchedTotals(*dists[side]);  // per round: both sides share the totals
    dists[side]->unstable = r.unstable;
  }
  // The instance of each kept round: kept() drops the odd last round through the NaN mark.
  std::vector<double> marked = instance_of;
  if (!sides[0].empty() && std::isnan(sides[0].back())) marked.back() = std::numeric_limits<double>::quiet_NaN();
  for (double k : kept(marked)) r.instances.push_back(static_cast<int>(k));
  for (size_t i = 0; i < r.baseline.samples.size(); ++i) {
    const double b = r.baseline.samples[i];
    r.ratios.push_back(b > 0 ? r.candidate.samples[i] / b : 1.0);
  }
  Summarize(r.baseline, seed);
  Summarize(r.candidate, seed + 1);
  r.ratio = Median(r.ratios);
  std::tie(r.ci_low, r.ci_high) = PairedRatioInterval(r.ratios, k_count > 1 ? r.instances : std::vector<int>{});
  return r;
}

PairedResult MeasurePaired(const std::function<void()>& baseline,
                           const std::function<void()>& candidate, const TimingProtocol& protocol,
                           uint64_t seed, const TimingClock& clock, const TimingProbe& probe,
                           const SchedSource& sched) {
  const std::function<void()>* fns[2] = {&baseline, &candidate};
  return *MeasurePairedOrError(
      [&fns](int side, int) {
        (*fns[side])();
        return absl::OkStatus();
      },
      1, protocol, seed, clock, probe, sched);
}

PairedFigures FiguresOf(const PairedResult& p) {
  PairedFigures f;
  f.ratio = p.ratio;
  f.ci_low = p.ci_low;
  f.ci_high = p.ci_high;
  f.unstable = p.unstable;
  f.instance_count = p.instance_count;
  f.calls_per_sample = p.calls_per_sample;
  f.rounds = static_cast<int64_t>(p.ratios.size());
  f.ratios = p.ratios;
  f.baseline_median = p.baseline.median;
  f.candidate_median = p.candidate.median;
  return f;
}

PairedResult PairedFromFigures(const PairedFigures& f) {
  PairedResult p;
  p.ratio = f.ratio;
  p.ci_low = f.ci_low;
  p.ci_high = f.ci_high;
  p.unstable = f.unstable;
  p.instance_count = static_cast<int>(f.instance_count);
  p.calls_per_sample = f.calls_per_sample;
  p.ratios = f.ratios;
  p.baseline.median = f.baseline_median;
  p.candidate.median = f.candidate_median;
  p.baseline.calls_per_sample = p.candidate.calls_per_sample = f.calls_per_sample;
  return p;
}

}  // namespace hlox
