// CostEstimates: per-configuration sample lists, drift correction against the default's nearby
// measurements, and the median estimate.
#include "agent/search_estimates.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cost/stats.h"

namespace hlox {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

CostEstimates::CostEstimates(bool noise_aware, DecisionVector defaults, int window)
    : noise_aware_(noise_aware), defaults_(std::move(defaults)), window_(std::max(1, window)),
      default_median_(kInf) {}

void CostEstimates::Add(const DecisionVector& v, int64_t time, double cost) {
  fitted_ = false;
  if (v == defaults_) {
    if (!std::isfinite(cost)) return;
    default_samples_.push_back({time, cost});
    default_costs_.push_back(cost);
    default_median_ = Median(default_costs_);
    return;
  }
  samples_[v].push_back({time, cost});
}

bool CostEstimates::Seen(const DecisionVector& v) const {
  return v == defaults_ ? !default_costs_.empty() : samples_.count(v) > 0;
}

int CostEstimates::Samples(const DecisionVector& v) const {
  if (v == defaults_) return static_cast<int>(default_costs_.size());
  auto it = samples_.find(v);
  return it == samples_.end() ? 0 : static_cast<int>(it->second.size());
}

double CostEstimates::DefaultCost() const { return default_median_; }

double CostEstimates::DriftScale(int64_t time) const {
  const size_t n = default_samples_.size();
  if (!noise_aware_ || n < 3) return 1.0;
  // The `window_` measurements nearest in time: default_samples_ is in time order, so they form
  // a contiguous run; grow it from the insertion point towards the nearer side.
  size_t hi = std::lower_bound(default_samples_.begin(), default_samples_.end(), time,
                               [](const Sample& s, int64_t t) { return s.time < t; }) -
              default_samples_.begin();
  size_t lo = hi;  // the run is [lo, hi)
  const size_t want = std::min(n, static_cast<size_t>(window_));
  while (hi - lo < want) {
    if (lo == 0) {
      ++hi;
    } else if (hi == n) {
      --lo;
    } else if (std::llabs(default_samples_[lo - 1].time - time) <= std::llabs(default_samples_[hi].time - time)) {
      --lo;
    } else {
      ++hi;
    }
  }
  std::vector<double> local;
  for (size_t i = lo; i < hi; ++i) local.push_back(default_samples_[i].cost);
  const double d_local = Median(local);
  return d_local > 0 && std::isfinite(default_median_) ? default_median_ / d_local : 1.0;
}

double CostEstimates::Estimate(const DecisionVector& v) const {
  if (v == defaults_) return default_costs_.empty() ? -1 : default_median_;
  auto it = samples_.find(v);
  if (it == samples_.end()) return -1;
  const std::vector<Sample>& s = it->second;
  if (!noise_aware_) return s.back().cost;
  std::vector<double> corrected;
  for (const Sample& x : s) {
    if (!std::isfinite(x.cost)) return kInf;  // validity does not depend on noise
    corrected.push_back(x.cost * DriftScale(x.time));
  }
  return Median(corrected);
}

void CostEstimates::Fit() const {
  if (fitted_) return;
  fitted_ = true;
  noise_sd_ = 0;
  if (!noise_aware_) return;
  // Residuals of every configuration measured more than once (the default's raw measurements
  // included, but its cold first one) from the mean of its log measurements, scaled by
  // sqrt(n / (n - 1)) so each is one measurement's deviation; a median absolute value is robust
  // to the occasional very slow run.
  std::vector<double> residuals;
  auto add = [&](const std::vector<double>& logs) {
    if (logs.size() < 2) return;
    const double n = static_cast<double>(logs.size());
    double mean = 0;
    for (double x : logs) mean += x / n;
    for (double x : logs) residuals.push_back(std::fabs(x - mean) * std::sqrt(n / (n - 1)));
  };
  std::vector<double> logs;
  for (size_t i = 1; i < default_costs_.size(); ++i) logs.push_back(std::log(default_costs_[i]));
  add(logs);
  for (const auto& [v, s] : samples_) {
    logs.clear();
    for (const Sample& x : s) {
      if (std::isfinite(x.cost) && x.cost > 0) logs.push_back(std::log(x.cost * DriftScale(x.time)));
    }
    add(logs);
  }
  if (residuals.size() >= 5) noise_sd_ = 1.4826 * Median(residuals);
}

double CostEstimates::Score(const DecisionVector& v) const {
  const double e = Estimate(v);
  if (v == defaults_ || !noise_aware_ || !std::isfinite(e) || e <= 0) return e;
  Fit();
  return e * std::exp(noise_sd_ / std::sqrt(static_cast<double>(Samples(v))));
}

std::vector<CandidateEstimate> CostEstimates::Ranked() const {
  std::vector<CandidateEstimate> out;
  for (const auto& [v, s] : samples_) {
    double e = Score(v);
    if (std::isfinite(e)) out.push_back({v, e, static_cast<int>(s.size())});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CandidateEstimate& a, const CandidateEstimate& b) { return a.cost < b.cost; });
  return out;
}

}  // namespace hlox
