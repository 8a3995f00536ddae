// Interference guard implementation: the probe workload and the clean-sample rule.
#include "cost/interference.h"

#include <algorithm>
#include <atomic>

namespace hlox {

void InterferenceProbe() {
  // 2048 floats (8 KiB) updated 160 times by independent multiply-adds: vectorized,
  // throughput-bound, the same work on every call. The empty asm makes the array's final
  // contents observable so the loop is not removed.
  constexpr int kN = 2048, kPasses = 160;
  alignas(64) static thread_local float a[kN];
  for (int i = 0; i < kN; ++i) a[i] = static_cast<float>(i & 7) * 0.125f;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int i = 0; i < kN; ++i) a[i] = a[i] * 0.999f + 0.001f;
  }
  asm volatile("" : : "r"(a) : "memory");
}

namespace {

// Fastest run of the built-in probe in this process, so a measurement that starts inside a
// disturbance is judged against a quiet moment seen by an earlier measurement.
std::atomic<double> g_fastest_builtin{0};

void RecordBuiltin(double seconds) {
  double cur = g_fastest_builtin.load(std::memory_order_relaxed);
  while ((cur == 0 || seconds < cur) &&
         !g_fastest_builtin.compare_exchange_weak(cur, seconds, std::memory_order_relaxed)) {
  }
}

}  // namespace

InterferenceGuard::InterferenceGuard(double threshold, const TimingClock& clock,
                                     const TimingProbe& probe)
    : threshold_(threshold), clock_(clock), probe_(probe) {}

void InterferenceGuard::Probe() {
  if (!enabled()) return;
  double t0 = clock_();
  if (probe_) {
    probe_();
  } else {
    InterferenceProbe();
  }
  double seconds = clock_() - t0;
  probe_seconds_.push_back(seconds);
  if (!probe_) RecordBuiltin(seconds);
}

std::vector<bool> InterferenceGuard::Clean(size_t samples) const {
  std::vector<bool> clean(samples, true);
  if (!enabled() || probe_seconds_.empty()) return clean;
  double fastest = *std::min_element(probe_seconds_.begin(), probe_seconds_.end());
  if (!probe_) {
    double builtin = g_fastest_builtin.load(std::memory_order_relaxed);
    if (builtin > 0) fastest = std::min(fastest, builtin);
  }
  const double limit = fastest * (1 + threshold_);
  auto slow = [&](size_t k) { return k < probe_seconds_.size() && probe_seconds_[k] > limit; };
  for (size_t i = 0; i < samples; ++i) clean[i] = !slow(i) && !slow(i + 1);
  return clean;
}

std::vector<double> InterferenceGuard::Keep(const std::vector<double>& values) const {
  std::vector<bool> clean = Clean(values.size());
  std::vector<double> kept;
  for (size_t i = 0; i < values.size(); ++i) {
    if (clean[i]) kept.push_back(values[i]);
  }
  return kept;
}

}  // namespace hlox
