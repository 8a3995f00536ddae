// Robust statistics for measured costs: median, MAD, bootstrap interval and Kendall's tau.
#include "cost/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
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

double StudentT975(int df) {
  static constexpr double kTable[] = {12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060,
                                      2.2622, 2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199,
                                      2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739, 2.0687, 2.0639,
                                      2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (df < 1) return std::numeric_limits<double>::infinity();
  if (df <= 30) return kTable[df - 1];
  const double z = 1.959964, n = df;
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n);
}

std::pair<double, double> PairedRatioInterval(const std::vector<double>& ratios, const std::vector<int>& groups) {
  const size_t n = ratios.size();
  if (n == 0) return {0, 0};
  if (n == 1) return {ratios[0], ratios[0]};
  std::vector<std::vector<double>> batches;
  if (!groups.empty() && groups.size() == n) {
    std::map<int, std::vector<double>> by_label;
    for (size_t i = 0; i < n; ++i) by_label[groups[i]].push_back(std::log(ratios[i]));
    for (auto& [label, logs] : by_label) {
      if (logs.size() >= 2) batches.push_back(std::move(logs));
    }
  } else {
    // Contiguous batches of whole round pairs; the pairs left over go one each to the first.
    const size_t count = std::min<size_t>(10, n / 2);
    const size_t pairs = n / 2, per = count ? pairs / count : 0, extra = count ? pairs % count : 0;
    size_t at = 0;
    for (size_t b = 0; b < count; ++b) {
      std::vector<double> logs;
      for (size_t i = at; i < at + 2 * (per + (b < extra ? 1 : 0)); ++i) logs.push_back(std::log(ratios[i]));
      at += logs.size();
      batches.push_back(std::move(logs));
    }
  }
  if (batches.size() < 2) return {0, std::numeric_limits<double>::infinity()};
  std::vector<double> medians;
  for (std::vector<double>& logs : batches) medians.push_back(Median(std::move(logs)));
  const double b = static_cast<double>(medians.size());
  double mean = 0;
  for (double m : medians) mean += m / b;
  double var = 0;
  for (double m : medians) var += (m - mean) * (m - mean) / (b - 1);
  const double center = std::log(Median(ratios));
  const double half = StudentT975(static_cast<int>(medians.size()) - 1) * std::sqrt(var / b);
  return {std::exp(center - half), std::exp(center + half)};
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
