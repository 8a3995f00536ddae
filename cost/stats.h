// Small robust statistics shared by the timing protocol, paired measurement and the benches:
// median, median absolute deviation, a seeded bootstrap interval of the median, and Kendall's
// rank correlation. All functions are deterministic for a given seed.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace hlox {

inline constexpr int kBootstrapResamples = 1000;

// Median of `v` (mean of the two middle values for even sizes); 0 for an empty vector.
double Median(std::vector<double> v);
// Median absolute deviation from the median (unscaled); 0 for an empty vector.
double MedianAbsDeviation(const std::vector<double>& v);
// Estimated relative standard error of the median of `v`: 1.858 * MAD / (median * sqrt(n)).
// (For near-normal samples sigma ~ 1.4826 MAD and SE(median) ~ 1.2533 sigma / sqrt(n).) It is
// what decides whether ten repeated measurements agree, unlike MAD/median, which does not
// shrink with more samples. Infinite for an empty vector or a non-positive median.
double MedianRelativeError(const std::vector<double>& v);
// Percentile bootstrap 95% interval of the median: `resamples` resamples with replacement drawn
// from a generator seeded with `seed`. {x, x} for a single value, {0, 0} for none.
std::pair<double, double> BootstrapMedianInterval(const std::vector<double>& v, uint64_t seed,
                                                  int resamples = kBootstrapResamples);
// Kendall's tau-b between paired series (ties handled); 0 when fewer than two pairs or a
// series is constant. Requires a.size() == b.size().
double KendallTau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace hlox
