// Timing protocol implementation: warm-ups, batch sizing, the sampling loop and its stopping
// rules, and the summary of a sample set.
#include "cost/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "absl/strings/str_format.h"
#include "cost/stats.h"

namespace hlox {

std::string TimingProtocol::ToString() const {
  return absl::StrFormat(
      "warmups=%d min_samples=%d max_samples=%d target_rel_error=%g time_cap_s=%g "
      "min_sample_s=%g stat=median stop=1.858*MAD/median/sqrt(n) ci=bootstrap95x%d "
      "interference_threshold=%g cap_factor=%g",
      warmups, min_samples, max_samples, target_rel_error, time_cap_seconds, min_sample_seconds,
      kBootstrapResamples, interference_threshold, interference_cap_factor);
}

double SteadySeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void Summarize(CostDistribution& d, uint64_t seed) {
  const auto& s = d.samples;
  if (s.empty()) {
    d.median = d.mad = d.ci_low = d.ci_high = d.mean = d.min = 0;
    return;
  }
  d.median = Median(s);
  d.mad = MedianAbsDeviation(s);
  auto [lo, hi] = BootstrapMedianInterval(s, seed);
  d.ci_low = lo;
  d.ci_high = hi;
  d.mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  d.min = *std::min_element(s.begin(), s.end());
}

int64_t CallsPerSample(double call_seconds, double min_sample_seconds) {
  if (!(call_seconds > 0) || call_seconds >= min_sample_seconds) {
    return call_seconds > 0 ? 1 : 1000000;
  }
  // The small shave keeps clock rounding (1e-3 / 1.0000001e-6) from adding a call.
  double n = std::ceil(min_sample_seconds / call_seconds * (1 - 1e-9));
  return static_cast<int64_t>(std::clamp(n, 1.0, 1e6));
}

absl::StatusOr<CostDistribution> MeasureCostOrError(const std::function<absl::Status()>& fn,
                                                    const TimingProtocol& p, uint64_t seed,
                                                    const TimingClock& clock,
                                                    const TimingProbe& probe) {
  CostDistribution d;
  const double start = clock();
  // Warm-ups; at least one call is timed to size the batches.
  double last_call = 0;
  int warmups = std::max(1, p.warmups);
  for (int i = 0; i < warmups; ++i) {
    double t0 = clock();
    absl::Status st = fn();
    if (!st.ok()) return st;
    last_call = clock() - t0;
    // Slow modules: warm-ups beyond the first stop once they used half the time cap.
    if (clock() - start >= 0.5 * p.time_cap_seconds) break;
  }
  d.calls_per_sample = CallsPerSample(last_call, p.min_sample_seconds);
  const size_t min_samples = static_cast<size_t>(std::max(1, p.min_samples));
  const size_t max_samples = std::max(min_samples, static_cast<size_t>(std::max(1, p.max_samples)));
  const size_t cap_floor = std::min<size_t>(min_samples, 3);
  // Disturbed samples (see cost/interference.h) do not count; while too few undisturbed ones
  // exist, sampling may run past the time cap, up to interference_cap_factor times it.
  InterferenceGuard guard(p.interference_threshold, clock, probe);
  const double hard_cap = p.time_cap_seconds * std::max(1.0, p.interference_cap_factor);
  std::vector<double> all;
  guard.Probe();
  bool converged = false;
  while (true) {
    double t0 = clock();
    for (int64_t c = 0; c < d.calls_per_sample; ++c) {
      absl::Status st = fn();
      if (!st.ok()) return st;
    }
    all.push_back((clock() - t0) / static_cast<double>(d.calls_per_sample));
    guard.Probe();
    std::vector<double> clean = guard.Keep(all);
    size_t n = clean.size();
    if (n >= min_samples && MedianRelativeError(clean) <= p.target_rel_error) {
      converged = true;
      break;
    }
    if (n >= max_samples || all.size() >= 3 * max_samples) break;
    double elapsed = clock() - start;
    // With disturbed samples in the set, the cap waits for min_samples quiet ones.
    const size_t need = n == all.size() ? cap_floor : min_samples;
    if (n >= need && elapsed >= p.time_cap_seconds) break;
    if (all.size() >= cap_floor && elapsed >= hard_cap) break;
  }
  d.samples = guard.Keep(all);
  // Too few quiet samples to stand on their own: the machine never was quiet; keep them all.
  if (d.samples.size() < std::min(min_samples, all.size())) d.samples = all;
  d.disturbed = static_cast<int64_t>(all.size() - d.samples.size());
  d.unstable = !converged;
  Summarize(d, seed);
  return d;
}

CostDistribution MeasureCost(const std::function<void()>& fn, const TimingProtocol& protocol,
                             uint64_t seed, const TimingClock& clock, const TimingProbe& probe) {
  auto r = MeasureCostOrError(
      [&]() {
        fn();
        return absl::OkStatus();
      },
      protocol, seed, clock, probe);
  return *std::move(r);
}

}  // namespace hlox
