// Host-reference analysis for the spread bench: estimators and correlations.
#include "bench/cost/reference_stats.h"

#include <algorithm>
#include <cmath>

#include "cost/stats.h"

namespace hlox::bench {

const char* EstimatorName(size_t e) {
  static const char* const kNames[] = {"raw",         "compute_min", "compute_mean", "memory_min",
                                       "memory_mean", "mix_min",     "mix_mean",   "mix_protocol"};
  return e < kEstimators ? kNames[e] : "?";
}

double EstimatorMedian(const ReferenceRun& run, size_t e, const ReferenceQuiet& quiet,
                       double compute_weight) {
  const CostDistribution& d = run.dist;
  if (e == kRaw || e >= kEstimators) return d.median;
  const HostReferenceKind kind = e <= kComputeMean  ? HostReferenceKind::kCompute
                                 : e <= kMemoryMean ? HostReferenceKind::kMemory
                                                    : HostReferenceKind::kMix;
  const bool mean = e == kComputeMean || e == kMemoryMean || e == kMixMean;
  const bool compute_mean = mean || e == kMixProtocol;
  const size_t n = d.samples.size();
  std::vector<double> slowdown =
      HostSlowdown(kind, NearbyReference(run.compute, n, compute_mean),
                   NearbyReference(run.memory, n, mean), quiet, compute_weight);
  return Median(NormalizeSamples(d.samples, slowdown));
}

double LogCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, y;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] > 0 && b[i] > 0) {
      x.push_back(std::log(a[i]));
      y.push_back(std::log(b[i]));
    }
  }
  const size_t n = x.size();
  if (n < 3) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

ReferenceTracking TrackReferences(const std::vector<ReferenceRun>& runs) {
  std::vector<double> med, med_c, med_m, all, all_c, all_m;
  for (const ReferenceRun& r : runs) {
    const size_t n = r.dist.samples.size();
    med.push_back(r.dist.median);
    med_c.push_back(Median(r.compute));
    med_m.push_back(Median(r.memory));
    std::vector<double> c = NearbyReference(r.compute, n, true), m = NearbyReference(r.memory, n);
    all.insert(all.end(), r.dist.samples.begin(), r.dist.samples.end());
    all_c.insert(all_c.end(), c.begin(), c.end());
    all_m.insert(all_m.end(), m.begin(), m.end());
  }
  ReferenceTracking t;
  t.between_compute = LogCorrelation(med, med_c);
  t.between_memory = LogCorrelation(med, med_m);
  t.within_compute = LogCorrelation(all, all_c);
  t.within_memory = LogCorrelation(all, all_m);
  return t;
}

}  // namespace hlox::bench
