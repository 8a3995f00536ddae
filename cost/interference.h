// Interference guard for the timing protocols. A short fixed workload (the probe) is timed
// before the first sample and after every sample; a sample counts as disturbed when either
// probe bracketing it ran more than `threshold` slower than the fastest probe seen. Whatever
// slowed the probe (a sibling hyperthread or another tenant on the host, a burst of other
// processes on this guest) slowed the sample too, so disturbed samples are left out of the
// statistics and sampling goes on, up to a longer time cap, until enough undisturbed ones
// exist. The probe runs on the measuring thread only, outside the timed region.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace hlox {

using TimingClock = std::function<double()>;
using TimingProbe = std::function<void()>;

// About 40 us of vector multiply-adds over an L1-resident array: sensitive to lost cycles and
// a shared core, independent of the measured code.
void InterferenceProbe();

class InterferenceGuard {
 public:
  // threshold <= 0 disables the guard: every sample counts as clean and the probe never runs.
  // An empty `probe` means InterferenceProbe, judged against its fastest run in this process
  // (earlier measurements included); a given probe is judged within this guard only.
  InterferenceGuard(double threshold, const TimingClock& clock, const TimingProbe& probe);

  bool enabled() const { return threshold_ > 0; }
  // Times the probe once: call before the first sample and after each sample.
  void Probe();
  // Whether sample i (bracketed by probes i and i+1) is undisturbed, judged against the
  // fastest probe seen so far; `samples` entries of which the last may lack its second probe.
  std::vector<bool> Clean(size_t samples) const;
  // The entries of `values` (one per sample) that Clean() keeps.
  std::vector<double> Keep(const std::vector<double>& values) const;

 private:
  double threshold_;
  const TimingClock& clock_;
  const TimingProbe& probe_;
  std::vector<double> probe_seconds_;
};

}  // namespace hlox
