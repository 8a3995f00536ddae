// Host-reference analysis for the spread bench: from repeated measurements taken with a host
// reference at every sample boundary (cost/host_reference.h), the repeated medians under each
// normalization (raw; by the compute reference, the memory one or their mix; each sample's
// nearby reference the faster of its two bracketing runs, or their mean) and how well each
// reference tracks the module's slowdowns (correlations of log times).
#pragma once

#include <cstddef>
#include <vector>

#include "cost/host_reference.h"
#include "cost/result.h"

namespace hlox::bench {

// One measurement and its reference run times at every sample boundary (samples + 1 each).
struct ReferenceRun {
  CostDistribution dist;
  std::vector<double> compute, memory;
};

enum Estimator : size_t {
  kRaw = 0, kComputeMin, kComputeMean, kMemoryMin, kMemoryMean, kMixMin, kMixMean,
  kMixProtocol,  // the protocol's rule: compute runs averaged, memory's faster run
  kEstimators
};
const char* EstimatorName(size_t e);

// Median of one measurement under estimator `e`, with the quiet times `quiet` (the mix with
// compute weight `compute_weight`).
double EstimatorMedian(const ReferenceRun& run, size_t e, const ReferenceQuiet& quiet,
                       double compute_weight);

// Pearson correlation of log(a) and log(b) over entries where both are positive (0 when fewer
// than 3 such entries or no variation).
double LogCorrelation(const std::vector<double>& a, const std::vector<double>& b);

// Correlations over a module's repeated measurements, for the compute and memory references:
// `between`: of each measurement's raw median with the median of its reference runs (do the
// references see the slow phases that move medians?); `within`: of every sample with its
// nearby reference time (the protocol's rule), all measurements pooled.
struct ReferenceTracking {
  double between_compute = 0, between_memory = 0;
  double within_compute = 0, within_memory = 0;
};
ReferenceTracking TrackReferences(const std::vector<ReferenceRun>& runs);

}  // namespace hlox::bench
