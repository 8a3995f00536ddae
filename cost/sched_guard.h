// Scheduler guard for the timing protocols: the kernel's own interference counters
// (cost/sched_stats.h) read at every sample boundary. A sample is disturbed when the time
// stolen from the measuring thread by the hypervisor plus the run-queue wait of this process's
// threads during it exceed `threshold` times its duration: that time is in the sample's wall
// time but not in the measured code. Disturbed samples are left out by SampleSeries under the
// same rules as the probe guard's (cost/interference.h). Cheap: one snapshot (~20 us of file
// reads) per boundary, outside the timed region.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "cost/sched_stats.h"

namespace hlox {

// Where snapshots come from: ReadSchedSnapshot by default, synthetic ones in tests.
using SchedSource = std::function<SchedSnapshot()>;

// The steal charged to the measuring thread over `d`: its own wall - run - wait, which also
// counts time it slept (a multithreaded run waiting for workers), so it is capped by the
// system-wide steal plus one /proc/stat tick (`tick` seconds).
double ChargedSteal(const SchedDelta& d, double tick);
// The disturbed rule (threshold > 0): the charged steal + run-queue wait between the two
// boundaries, less the untimed part of that interval (d.wall - timed, where a disturbance may
// have fallen outside the sample), exceeds threshold * timed. `timed` is the sample's timed
// duration; a non-positive one means the whole interval.
bool SchedDisturbed(const SchedDelta& d, double threshold, double tick, double timed = 0);

class SchedGuard {
 public:
  // threshold <= 0 disables the rule (every sample clean) but snapshots are still taken when
  // `record` is true, so the totals are reported; with neither, nothing is read.
  SchedGuard(double threshold, bool record, const SchedSource& source);

  bool active() const { return active_; }
  // Reads a snapshot: call before the first sample and after each sample, with the timed
  // duration of the sample just taken (0: unknown, the whole interval counts).
  void Boundary(double timed_seconds = 0);
  // Whether sample i (between boundaries i and i+1) is undisturbed; `samples` entries of which
  // the last may lack its closing boundary (then it counts as clean).
  std::vector<bool> Clean(size_t samples) const;
  // Per-sample deltas (one per closed sample).
  const std::vector<SchedDelta>& deltas() const { return deltas_; }

  // Sums over the samples with `keep[i]` true (all samples when keep is empty).
  struct Totals {
    double steal = 0;      // charged steal, seconds
    double run_wait = 0;   // run-queue wait of this process's threads, seconds
    double wall = 0;       // sample wall time (boundary to boundary), seconds
  };
  Totals Sum(const std::vector<bool>& keep = {}) const;

 private:
  double threshold_;
  bool active_;
  const SchedSource& source_;
  double tick_;
  SchedSnapshot last_;
  bool have_last_ = false;
  std::vector<SchedDelta> deltas_;
  std::vector<double> timed_;  // per closed sample
};

}  // namespace hlox
