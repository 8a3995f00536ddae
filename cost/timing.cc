// Timing protocol implementation: warm-ups, batch sizing, the sampling loop and its stopping
// rules, and the summary of a sample set.
#include "cost/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "absl/strings/str_format.h"
#include "cost/host_reference_store.h"
#include "cost/stats.h"

namespace hlox {

std::string TimingProtocol::ToString() const {
  return absl::StrFormat(
      "warmups=%d min_samples=%d max_samples=%d target_rel_error=%g time_cap_s=%g "
      "min_sample_s=%g stat=median stop=1.858*MAD/median/sqrt(n) ci=bootstrap95x%d "
      "interference_threshold=%g cap_factor=%g sched_threshold=%g%s",
      warmups, min_samples, max_samples, target_rel_error, time_cap_seconds, min_sample_seconds,
      kBootstrapResamples, interference_threshold, interference_cap_factor, sched_threshold,
      host_reference == HostReferenceKind::kNone
          ? std::string()
          : absl::StrFormat(" reference=%s compute_weight=%g", HostReferenceName(host_reference),
                            reference_compute_weight));
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

SampleSeries::SampleSeries(const TimingProtocol& p, double start, const TimingClock& clock,
                           const TimingProbe& probe, const SchedSource& sched)
    : p_(p),
      clock_(clock),
      start_(start),
      min_(static_cast<size_t>(std::max(1, p.min_samples))),
      max_(std::max(min_, static_cast<size_t>(std::max(1, p.max_samples)))),
      cap_floor_(std::min<size_t>(min_, 3)),
      guard_(p.interference_threshold, clock, probe),
      sched_(p.sched_threshold, p.sched_record, sched),
      ref_(p.host_reference, clock) {
  guard_.Probe();
  ref_.Boundary();
  sched_.Boundary();  // last, right before the first sample
}

std::vector<bool> SampleSeries::CleanMask(size_t samples) const {
  std::vector<bool> clean = guard_.Clean(samples);
  std::vector<bool> quiet = sched_.Clean(samples);
  for (size_t i = 0; i < samples; ++i) clean[i] = clean[i] && quiet[i];
  return clean;
}

std::vector<double> SampleSeries::Filter(const std::vector<double>& series) const {
  std::vector<bool> clean = CleanMask(series.size());
  std::vector<double> kept;
  for (size_t i = 0; i < series.size(); ++i) {
    if (clean[i]) kept.push_back(series[i]);
  }
  return kept;
}

bool SampleSeries::Add(double value, double timed_seconds) {
  values_.push_back(value);
  sched_.Boundary(timed_seconds);  // first, right after the sample
  guard_.Probe();
  ref_.Boundary();
  std::vector<double> clean = Filter(values_);
  const size_t n = clean.size();
  if (n >= min_ && MedianRelativeError(clean) <= p_.target_rel_error) {
    converged_ = true;
    return true;
  }
  if (n >= max_ || values_.size() >= 3 * max_) return true;
  const double elapsed = clock_() - start_;
  // With disturbed samples in the set, the cap waits for min_samples quiet ones, up to
  // interference_cap_factor times the cap.
  const size_t need = n == values_.size() ? cap_floor_ : min_;
  if (n >= need && elapsed >= p_.time_cap_seconds) return true;
  const double hard_cap = p_.time_cap_seconds * std::max(1.0, p_.interference_cap_factor);
  return values_.size() >= cap_floor_ && elapsed >= hard_cap;
}

std::vector<double> SampleSeries::Kept(const std::vector<double>& series) const {
  // Too few quiet samples to stand on their own: the machine never was quiet; keep them all.
  if (Filter(values_).size() < std::min(min_, values_.size())) return series;
  return Filter(series);
}

void SampleSeries::FillSchedTotals(CostDistribution& dist) const {
  SchedGuard::Totals t = sched_.Sum();
  dist.steal_seconds = t.steal;
  dist.run_wait_seconds = t.run_wait;
  dist.sampled_seconds = t.wall;
}

void SampleSeries::FillNormalized(CostDistribution& d, const std::vector<double>& per_sample,
                                  uint64_t seed) const {
  if (!ref_.active()) return;
  UseStoredReferenceQuiet();
  const size_t n = values_.size();
  const std::vector<double> samples = Kept(per_sample);
  // The compute reference's bracketing runs are averaged, the memory one's faster run is taken
  // (its runs have outliers of their own): the better rule for each in the spread bench.
  const std::vector<double> compute = Kept(NearbyReference(ref_.compute_seconds(), n, true));
  const std::vector<double> memory = Kept(NearbyReference(ref_.memory_seconds(), n, false));
  const ReferenceQuiet quiet = CurrentReferenceQuiet();
  d.reference = HostReferenceName(p_.host_reference);
  d.reference_quiet_compute = ref_.compute_seconds().empty() ? 0 : quiet.compute;
  d.reference_quiet_memory = ref_.memory_seconds().empty() ? 0 : quiet.memory;
  d.reference_compute = ref_.compute_seconds().empty() ? std::vector<double>() : compute;
  d.reference_memory = ref_.memory_seconds().empty() ? std::vector<double>() : memory;
  const std::vector<double> slowdown =
      HostSlowdown(p_.host_reference, compute, memory, quiet, p_.reference_compute_weight);
  CostDistribution norm;
  norm.samples = NormalizeSamples(samples, slowdown);
  Summarize(norm, seed);
  d.reference_slowdown = slowdown.empty() ? 0 : Median(slowdown);
  d.normalized_median = norm.median;
  d.normalized_mad = norm.mad;
  d.normalized_ci_low = norm.ci_low;
  d.normalized_ci_high = norm.ci_high;
}

int64_t SampleSeries::disturbed() const {
  return static_cast<int64_t>(values_.size() - Kept(values_).size());
}

absl::StatusOr<CostDistribution> MeasureCostOrError(
    const std::function<absl::Status()>& fn, const TimingProtocol& p, uint64_t seed,
    const TimingClock& clock, const TimingProbe& probe, const SchedSource& sched,
    std::vector<double>* reference_compute, std::vector<double>* reference_memory) {
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
  SampleSeries series(p, start, clock, probe, sched);
  while (true) {
    double t0 = clock();
    for (int64_t c = 0; c < d.calls_per_sample; ++c) {
      absl::Status st = fn();
      if (!st.ok()) return st;
    }
    const double timed = clock() - t0;
    if (series.Add(timed / static_cast<double>(d.calls_per_sample), timed)) break;
  }
  d.samples = series.Kept(series.values());
  d.disturbed = series.disturbed();
  series.FillSchedTotals(d);
  d.unstable = !series.converged();
  Summarize(d, seed);
  series.FillNormalized(d, series.values(), seed);
  if (reference_compute != nullptr) *reference_compute = series.host_reference().compute_seconds();
  if (reference_memory != nullptr) *reference_memory = series.host_reference().memory_seconds();
  return d;
}

CostDistribution MeasureCost(const std::function<void()>& fn, const TimingProtocol& protocol,
                             uint64_t seed, const TimingClock& clock, const TimingProbe& probe,
                             const SchedSource& sched) {
  auto r = MeasureCostOrError(
      [&]() {
        fn();
        return absl::OkStatus();
      },
      protocol, seed, clock, probe, sched);
  return *std::move(r);
}

}  // namespace hlox
