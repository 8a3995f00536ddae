// The measurement protocol: warm-ups, then timed samples (several calls batched per sample when
// one call is shorter than min_sample_seconds) until the median is known to the target relative
// precision (MedianRelativeError), the time cap is reached or max_samples were taken. Generic
// over the workload and the clock, so tests drive it with synthetic workloads and a fake clock.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/eval_options.h"
#include "cost/host_reference.h"
#include "cost/interference.h"
#include "cost/result.h"
#include "cost/sched_guard.h"

namespace hlox {

// Seconds on a monotonic clock (TimingClock is declared in cost/interference.h).
double SteadySeconds();

// Fills median, MAD, bootstrap interval (seeded), mean and min from `samples` (seconds per
// call); keeps calls_per_sample and unstable as given.
void Summarize(CostDistribution& dist, uint64_t seed);

// The sampling loop's bookkeeping, shared by MeasureCostOrError and MeasurePairedOrError: the
// interference guards (probe and scheduler counters), the stopping rule and which values are
// kept. One value per sample (a time per call, or a paired round's ratio). Construct it right
// before the first sample: it reads the first sample boundary.
class SampleSeries {
 public:
  // `start` is when the measurement began (its warm-ups count against the time cap). The
  // clock, probe and source are held by reference: they must outlive the series.
  SampleSeries(const TimingProtocol& protocol, double start, const TimingClock& clock,
               const TimingProbe& probe, const SchedSource& sched);
  // Records the value of the sample just taken (and probes); true when sampling should stop.
  // `timed_seconds` is the sample's timed duration (0: unknown) for the scheduler guard.
  bool Add(double value, double timed_seconds = 0);
  bool converged() const { return converged_; }
  // The entries of `series` (one per sample, e.g. this series' values or a parallel one) that
  // are kept: the undisturbed ones, or all when too few samples were undisturbed.
  std::vector<double> Kept(const std::vector<double>& series) const;
  const std::vector<double>& values() const { return values_; }
  // The host references' run times at the sample boundaries (empty without a reference).
  const HostReference& host_reference() const { return ref_; }
  int64_t disturbed() const;
  // Copies the scheduler counters' totals over all samples into `dist`.
  void FillSchedTotals(CostDistribution& dist) const;
  // With a host reference in the protocol: fills dist's reference fields and the normalized
  // summary from the kept samples (`per_sample`: all values, one per sample, as in Kept).
  void FillNormalized(CostDistribution& dist, const std::vector<double>& per_sample,
                      uint64_t seed) const;

 private:
  // Per sample: undisturbed by both guards.
  std::vector<bool> CleanMask(size_t samples) const;
  // Entries of `series` whose sample is clean.
  std::vector<double> Filter(const std::vector<double>& series) const;

  const TimingProtocol& p_;
  const TimingClock& clock_;
  double start_;
  size_t min_, max_, cap_floor_;
  InterferenceGuard guard_;
  SchedGuard sched_;
  HostReference ref_;
  std::vector<double> values_;
  bool converged_ = false;
};

// Measures `fn` under `protocol`. The first error `fn` returns aborts the measurement and is
// returned. Warm-ups after the first stop early once they used half the time cap. The time
// cap stops sampling once at least min(min_samples, 3) undisturbed samples exist (or, without
// them, at interference_cap_factor times the cap); `unstable` is set when sampling stopped
// before the precision target. Samples the interference guard judged disturbed are dropped
// (counted in `disturbed`) unless too few others exist. When given, `reference_compute` and
// `reference_memory` receive the host reference's run times at every sample boundary.
absl::StatusOr<CostDistribution> MeasureCostOrError(
    const std::function<absl::Status()>& fn, const TimingProtocol& protocol, uint64_t seed,
    const TimingClock& clock = SteadySeconds, const TimingProbe& probe = {},
    const SchedSource& sched = {}, std::vector<double>* reference_compute = nullptr,
    std::vector<double>* reference_memory = nullptr);
// Same for a workload that cannot fail.
CostDistribution MeasureCost(const std::function<void()>& fn, const TimingProtocol& protocol,
                             uint64_t seed, const TimingClock& clock = SteadySeconds,
                             const TimingProbe& probe = {}, const SchedSource& sched = {});

// Calls per sample so one sample lasts at least min_sample_seconds given one call's duration
// (at least 1, at most 1e6).
int64_t CallsPerSample(double call_seconds, double min_sample_seconds);

}  // namespace hlox
