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
// Two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1): exact table
// up to 30, a Cornish-Fisher expansion beyond (error < 1e-4).
double StudentT975(int df);
// 95% interval of the median of paired per-round ratios (candidate/baseline, in measurement
// order) that allows for correlation between rounds: the rounds are grouped into batches, and
// the interval is the overall median's log plus or minus t_{b-1} * sd(batch median logs) /
// sqrt(b). With `groups` (one label per round, e.g. the instance pair it ran on) each label is
// a batch; without, the rounds are cut into b = min(10, n / 2) contiguous batches of whole
// round pairs. Batches absorb what makes neighbouring rounds (or one instance's rounds) alike,
// which a bootstrap over single rounds treats as independent evidence. {r, r} for one round,
// {0, inf} with fewer than two batches of two rounds, {0, 0} for none.
std::pair<double, double> PairedRatioInterval(const std::vector<double>& ratios,
                                              const std::vector<int>& groups = {});
// Kendall's tau-b between paired series (ties handled); 0 when fewer than two pairs or a
// series is constant. Requires a.size() == b.size().
double KendallTau(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace hlox
