// Paired measurement: a baseline and a candidate measured in interleaved rounds on the same
// worker, each round running both (one batched sample each) in a seeded random order. The
// verdict is the median of the per-round ratios candidate/baseline with a bootstrap interval
// over rounds, which cancels slow drifts of a shared machine that separate runs would see.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/evaluate.h"
#include "cost/result.h"
#include "cost/timing.h"

namespace hlox {

struct PairedResult {
  double ratio = 1;               // median over rounds of candidate/baseline (< 1: faster)
  double ci_low = 1, ci_high = 1; // bootstrap 95% interval of that median, paired by round
  std::vector<double> ratios;     // one per round
  CostDistribution baseline, candidate;  // per-call seconds, one sample per round each
  bool unstable = false;          // stopped by the time cap or max rounds before the target
  // True when the whole interval lies below 1 (the candidate is faster with 95% confidence).
  bool CandidateFaster() const { return ci_high < 1; }
  bool CandidateSlower() const { return ci_low > 1; }
};

// Measures the pair under `protocol` (max_samples = max rounds, time cap for both together,
// precision target on the median ratio, MedianRelativeError; rounds the interference guards
// judge disturbed are left out: the scheduler guard reads its counters around each round). The first error of either workload is returned.
absl::StatusOr<PairedResult> MeasurePairedOrError(const std::function<absl::Status()>& baseline,
                                                  const std::function<absl::Status()>& candidate,
                                                  const TimingProtocol& protocol, uint64_t seed,
                                                  const TimingClock& clock = SteadySeconds,
                                                  const TimingProbe& probe = {},
                                                  const SchedSource& sched = {});
// Same for workloads that cannot fail.
PairedResult MeasurePaired(const std::function<void()>& baseline,
                           const std::function<void()>& candidate, const TimingProtocol& protocol,
                           uint64_t seed, const TimingClock& clock = SteadySeconds,
                           const TimingProbe& probe = {}, const SchedSource& sched = {});

}  // namespace hlox
