// Paired measurement: a baseline and a candidate measured in interleaved rounds on the same
// worker, which cancels the slow drifts of a shared machine that separate runs would see.
//
// The design is symmetric so that an A/A pair (the same module on both sides) has no built-in
// lean (docs/MEASUREMENTS.md, "Calibrated verdicts", has the experiments behind each point):
//  - each side runs on several INSTANCES (separately built executors), rotated every two rounds:
//    two executors of one module differ persistently by up to 2% on these hosts (the earlier
//    built one is slower: where its plan, constants and code landed), so one executor per side
//    measures the instances, not the modules. MeasurePairedModules gives every instance its
//    own copy of its side's module and its own compiled fused programs (nothing that sets an
//    instance's speed is shared by a side's instances) and builds the two instances of each
//    instance pair back to back; the interval treats each instance pair's rounds as one
//    batch, so what remains of the instance effect widens the interval instead of moving it;
//  - warm-ups alternate between the sides, and both sides batch the SAME number of calls per
//    sample (sized on the faster side's warm-up): per-sample overheads, amortized over unequal
//    batches, used to favour one side;
//  - rounds come in blocks of two, A B then B A (a linear drift cancels within each block),
//    each block on the next instance pair, visited 0..K-1 then K-1..0 and so on; which side is
//    A flips from block to block (seeded start), so each side is equally often the first to
//    run on an instance pair; a freshly switched instance pair runs each side once untimed
//    before its block when a call takes under 0.1 s (timed cold, the first side would pay
//    for warming what both sides share); an odd last round is dropped;
//  - a pair runs to its time cap: no early stop when the interval looks narrow;
//  - the interval comes from batch medians (PairedRatioInterval in cost/stats.h): one batch per
//    instance pair, or with one instance contiguous batches of rounds, which allows for the
//    correlation between neighbouring rounds that a bootstrap over rounds ignores.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "cost/eval_options.h"
#include "cost/result.h"
#include "cost/timing.h"

namespace hlox {

// Rounds a pair keeps at least (past its time cap if need be): four batches of two rounds.
// With several instances a pair also keeps at least one ABBA block on every instance pair
// (2 * instances rounds): a module whose rounds take seconds reaches its time cap after one
// or two blocks, and an interval over four instance pairs (three degrees of freedom) did not
// hold its coverage on such a module (docs/MEASUREMENTS.md, "Calibrated verdicts").
inline constexpr int kMinPairedRounds = 8;

struct PairedResult {
  double ratio = 1;               // median over rounds of candidate/baseline (< 1: faster)
  double ci_low = 1, ci_high = 1; // 95% interval of that ratio (batch medians, see above)
  std::vector<double> ratios;     // one per kept round, in measurement order
  std::vector<int> instances;     // the instance pair of each kept round
  int instance_count = 1;
  CostDistribution baseline, candidate;  // per-call seconds, one sample per round each
  int64_t calls_per_sample = 1;   // calls per side per round (the same on both sides)
  // Fewer than kMinPairedRounds (or min_samples) rounds were kept within three times max
  // rounds: the interval is reported but never makes a verdict (cost/verdict.h).
  bool unstable = false;
  // True when the whole interval lies below 1 (the candidate is faster with 95% confidence).
  // Verdicts use cost/verdict.h, which also asks for the calibrated minimum effect.
  bool CandidateFaster() const { return ci_high < 1; }
  bool CandidateSlower() const { return ci_low > 1; }
};

// A paired measurement in record form (ResultRecord::paired, a fleet verdict's answer) and back.
// The round trip keeps what verdicts and the race read (ratio, interval, the rounds' ratios, both
// medians, unstable, instance count, calls per sample); per-side samples and the rounds'
// instance indices stay with the worker.
PairedFigures FiguresOf(const PairedResult& p);
PairedResult PairedFromFigures(const PairedFigures& f);

// Measures the pair under `protocol`: rounds until the time cap (both sides together) or
// max_samples rounds, and at least max(kMinPairedRounds, 2 * instances, min_samples) kept rounds.
// target_rel_error does not stop a pair early (see the .cc). Rounds the interference guards
// judge disturbed are left out. The first error of either workload is returned.
// The pair's workload: runs side `side` (0 baseline, 1 candidate) on its instance `k`
// (0 <= k < instances) once. One callable serves both sides, so both run the same code (two
// closures, one per side, measured apart on microsecond modules: see the .cc).
using PairedWorkload = std::function<absl::Status(int side, int instance)>;
absl::StatusOr<PairedResult> MeasurePairedOrError(const PairedWorkload& run, int instances,
                                                  const TimingProtocol& protocol, uint64_t seed,
                                                  const TimingClock& clock = SteadySeconds,
                                                  const TimingProbe& probe = {},
                                                  const SchedSource& sched = {});
// Same for workloads that cannot fail, with one instance per side.
PairedResult MeasurePaired(const std::function<void()>& baseline,
                           const std::function<void()>& candidate, const TimingProtocol& protocol,
                           uint64_t seed, const TimingClock& clock = SteadySeconds,
                           const TimingProbe& probe = {}, const SchedSource& sched = {});

}  // namespace hlox
