// Paired measurement implementation: warm-ups of both sides, batch sizing per side, seeded
// randomized order per round, and the ratio summary.
#include "cost/paired.h"

#include <algorithm>
#include <random>

#include "cost/stats.h"

namespace hlox {

absl::StatusOr<PairedResult> MeasurePairedOrError(const std::function<absl::Status()>& baseline,
                                                  const std::function<absl::Status()>& candidate,
                                                  const TimingProtocol& p, uint64_t seed,
                                                  const TimingClock& clock,
                                                  const TimingProbe& probe,
                                                  const SchedSource& sched) {
  PairedResult r;
  const double start = clock();
  const std::function<absl::Status()>* fns[2] = {&baseline, &candidate};
  CostDistribution* dists[2] = {&r.baseline, &r.candidate};
  for (int side = 0; side < 2; ++side) {
    double last = 0;
    for (int i = 0; i < std::max(1, p.warmups); ++i) {
      double t0 = clock();
      absl::Status st = (*fns[side])();
      if (!st.ok()) return st;
      last = clock() - t0;
    }
    dists[side]->calls_per_sample = CallsPerSample(last, p.min_sample_seconds);
  }
  std::mt19937_64 rng(seed * 0x2545f4914f6cdd1dull + 1);
  std::bernoulli_distribution coin(0.5);
  // Rounds the interference guard judges disturbed are left out, as in MeasureCostOrError.
  // No host reference: the ratio already cancels the host's speed, so its kernels would only
  // cost time between rounds.
  TimingProtocol rounds = p;
  rounds.host_reference = HostReferenceKind::kNone;
  SampleSeries series(rounds, start, clock, probe, sched);
  std::vector<double> sides[2];
  while (true) {
    bool candidate_first = coin(rng);
    double per_call[2] = {0, 0}, timed = 0;
    for (int k = 0; k < 2; ++k) {
      int side = (k == 0) == candidate_first ? 1 : 0;
      int64_t calls = dists[side]->calls_per_sample;
      double t0 = clock();
      for (int64_t c = 0; c < calls; ++c) {
        absl::Status st = (*fns[side])();
        if (!st.ok()) return st;
      }
      const double seconds = clock() - t0;
      timed += seconds;
      per_call[side] = seconds / static_cast<double>(calls);
    }
    sides[0].push_back(per_call[0]);
    sides[1].push_back(per_call[1]);
    if (series.Add(per_call[0] > 0 ? per_call[1] / per_call[0] : 1.0, timed)) break;
  }
  r.ratios = series.Kept(series.values());
  for (int side = 0; side < 2; ++side) {
    dists[side]->samples = series.Kept(sides[side]);
    dists[side]->disturbed = series.disturbed();
    series.FillSchedTotals(*dists[side]);  // per round: both sides share the totals
  }
  r.unstable = !series.converged();
  r.baseline.unstable = r.candidate.unstable = r.unstable;
  Summarize(r.baseline, seed);
  Summarize(r.candidate, seed + 1);
  r.ratio = Median(r.ratios);
  auto [lo, hi] = BootstrapMedianInterval(r.ratios, seed + 2);
  r.ci_low = lo;
  r.ci_high = hi;
  return r;
}

PairedResult MeasurePaired(const std::function<void()>& baseline,
                           const std::function<void()>& candidate, const TimingProtocol& protocol,
                           uint64_t seed, const TimingClock& clock, const TimingProbe& probe,
                           const SchedSource& sched) {
  auto wrap = [](const std::function<void()>& f) {
    return std::function<absl::Status()>([&f]() {
      f();
      return absl::OkStatus();
    });
  };
  return *MeasurePairedOrError(wrap(baseline), wrap(candidate), protocol, seed, clock, probe, sched);
}

}  // namespace hlox
