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
                                                  const TimingProbe& probe) {
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
  const size_t min_rounds = static_cast<size_t>(std::max(1, p.min_samples));
  const size_t max_rounds = std::max(min_rounds, static_cast<size_t>(std::max(1, p.max_samples)));
  const size_t cap_floor = std::min<size_t>(min_rounds, 3);
  // Rounds the interference guard judges disturbed are left out, as in MeasureCostOrError.
  InterferenceGuard guard(p.interference_threshold, clock, probe);
  const double hard_cap = p.time_cap_seconds * std::max(1.0, p.interference_cap_factor);
  std::vector<double> all_ratios, all_sides[2];
  guard.Probe();
  bool converged = false;
  while (true) {
    bool candidate_first = coin(rng);
    double per_call[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      int side = (k == 0) == candidate_first ? 1 : 0;
      int64_t calls = dists[side]->calls_per_sample;
      double t0 = clock();
      for (int64_t c = 0; c < calls; ++c) {
        absl::Status st = (*fns[side])();
        if (!st.ok()) return st;
      }
      per_call[side] = (clock() - t0) / static_cast<double>(calls);
    }
    guard.Probe();
    all_sides[0].push_back(per_call[0]);
    all_sides[1].push_back(per_call[1]);
    all_ratios.push_back(per_call[0] > 0 ? per_call[1] / per_call[0] : 1.0);
    std::vector<double> clean = guard.Keep(all_ratios);
    size_t n = clean.size();
    if (n >= min_rounds && MedianRelativeError(clean) <= p.target_rel_error) {
      converged = true;
      break;
    }
    if (n >= max_rounds || all_ratios.size() >= 3 * max_rounds) break;
    double elapsed = clock() - start;
    // With disturbed samples in the set, the cap waits for min_rounds quiet ones.
    const size_t need = n == all_ratios.size() ? cap_floor : min_rounds;
    if (n >= need && elapsed >= p.time_cap_seconds) break;
    if (all_ratios.size() >= cap_floor && elapsed >= hard_cap) break;
  }
  r.ratios = guard.Keep(all_ratios);
  // Too few quiet rounds to stand on their own: keep every round (as MeasureCostOrError does).
  const bool keep_all = r.ratios.size() < std::min(min_rounds, all_ratios.size());
  if (keep_all) r.ratios = all_ratios;
  for (int side = 0; side < 2; ++side) {
    dists[side]->samples = keep_all ? all_sides[side] : guard.Keep(all_sides[side]);
    dists[side]->disturbed = static_cast<int64_t>(all_ratios.size() - r.ratios.size());
  }
  r.unstable = !converged;
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
                           uint64_t seed, const TimingClock& clock, const TimingProbe& probe) {
  auto wrap = [](const std::function<void()>& f) {
    return std::function<absl::Status()>([&f]() {
      f();
      return absl::OkStatus();
    });
  };
  return *MeasurePairedOrError(wrap(baseline), wrap(candidate), protocol, seed, clock, probe);
}

}  // namespace hlox
