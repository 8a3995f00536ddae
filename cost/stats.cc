// Robust statistics for measured costs: median, MAD, bootstrap interval and Kendall's tau.
#include "cost/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace hlox {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  size_t n = v.size();
  size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (n % 2 == 1) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return 0.5 * (lo + hi);
}

double MedianAbsDeviation(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double m = Median(v);
  std::vector<double> dev(v.size());
  for (size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - m);
  return Median(std::move(dev));
}

double MedianRelativeError(const std::vector<double>& v) {
  double m = Median(v);
  if (v.empty() || !(m > 0)) return std::numeric_limits<double>::infinity();
  return 1.858 * MedianAbsDeviation(v) / (m * std::sqrt(static_cast<double>(v.size())));
}

std::pair<double, double> BootstrapMedianInterval(const std::vector<double>& v, uint64_t seed,
                                                  int resamples) {
  if (v.empty()) return {0, 0};
  if (v.size() == 1 || resamples <= 0) {
    double m = Median(v);
    return {m, m};
  }
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> medians(resamples);
  std::vector<double> draw(v.size());
  for (int r = 0; r < resamples; ++r) {
    for (double& d : draw) d = v[pick(rng)];
    medians[r] = Median(draw);
  }
  std::sort(medians.begin(), medians.end());
  auto at = [&](double q) {
    double pos = q * (resamples - 1);
    size_t i = static_cast<size_t>(std::floor(pos));
    size_t j = std::min(i + 1, medians.size() - 1);
    double f = pos - static_cast<double>(i);
    return medians[i] * (1 - f) + medians[j] * f;
  };
  return {at(0.025), at(0.975)};
}

double KendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  size_t n = std::min(a.size(), b.size());
  if (n < 2) return 0;
  // O(n^2) tau-b; the benches use at most a few hundred candidates.
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ties_a += 1;
      } else if (db == 0) {
        ties_b += 1;
      } else if ((da > 0) == (db > 0)) {
        concordant += 1;
      } else {
        discordant += 1;
      }
    }
  }
  double denom = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  if (denom == 0) return 0;
  return (concordant - discordant) / denom;
}

}  // namespace hlox
