// Scheduler guard implementation: per-sample deltas of the kernel's counters and the
// disturbed rule (see sched_guard.h).
#include "cost/sched_guard.h"

#include <algorithm>

#include <unistd.h>

namespace hlox {

double ChargedSteal(const SchedDelta& d, double tick) {
  return std::min(d.self_stolen, d.steal + tick);
}

bool SchedDisturbed(const SchedDelta& d, double threshold, double tick, double timed) {
  if (threshold <= 0) return false;
  const double span = timed > 0 ? std::min(timed, d.wall) : d.wall;
  const double untimed = d.wall - span;
  return ChargedSteal(d, tick) + d.run_wait - untimed > threshold * span;
}

SchedGuard::SchedGuard(double threshold, bool record, const SchedSource& source)
    : threshold_(threshold), active_(threshold > 0 || record), source_(source) {
  long ticks = sysconf(_SC_CLK_TCK);
  tick_ = ticks > 0 ? 1.0 / static_cast<double>(ticks) : 0.01;
}

void SchedGuard::Boundary(double timed_seconds) {
  if (!active_) return;
  SchedSnapshot now = source_ ? source_() : ReadSchedSnapshot();
  if (have_last_) {
    deltas_.push_back(Difference(last_, now));
    timed_.push_back(timed_seconds);
  }
  last_ = std::move(now);
  have_last_ = true;
}

std::vector<bool> SchedGuard::Clean(size_t samples) const {
  std::vector<bool> clean(samples, true);
  if (threshold_ <= 0) return clean;
  for (size_t i = 0; i < samples && i < deltas_.size(); ++i) {
    clean[i] = !SchedDisturbed(deltas_[i], threshold_, tick_, timed_[i]);
  }
  return clean;
}

SchedGuard::Totals SchedGuard::Sum(const std::vector<bool>& keep) const {
  Totals t;
  for (size_t i = 0; i < deltas_.size(); ++i) {
    if (!keep.empty() && (i >= keep.size() || !keep[i])) continue;
    t.steal += ChargedSteal(deltas_[i], tick_);
    t.run_wait += deltas_[i].run_wait;
    t.wall += deltas_[i].wall;
  }
  return t;
}

}  // namespace hlox
