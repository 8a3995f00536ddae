// Noise-aware cost estimates of a search. Every measured configuration keeps all its samples
// (with the evaluation index each was taken at), and so does the default policy, which the
// driver re-measures every few evaluations. A configuration's estimate is the median of its
// drift-corrected samples: a sample taken at time t is scaled by D / D_local(t), where D is the
// median of all the default's measurements and D_local(t) the median of the `window` default
// measurements nearest to t, so a host that slows down or speeds up over minutes makes no
// configuration look better or worse. Keeping decisions (the best, elites, the race) use Score,
// a pessimistic estimate: the estimate raised by one standard error, s / sqrt(n), where s is the
// robust spread of repeated measurements (log space) and n the configuration's measurements. One
// lucky sample among hundreds thus cannot look like a large gain, and of two equal estimates the
// better measured ranks first. In plain mode (noise_aware false) a configuration's
// estimate is its latest single sample, as before noise handling existed.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "agent/search.h"

namespace hlox {

class CostEstimates {
 public:
  CostEstimates(bool noise_aware, DecisionVector defaults, int window = 5);

  // One measurement of `v` taken at evaluation index `time`; +inf marks an invalid run. The
  // default policy's valid measurements go to the reference (DefaultCost) instead.
  void Add(const DecisionVector& v, int64_t time, double cost);
  // True once `v` has been measured (the default: once it has a valid measurement).
  bool Seen(const DecisionVector& v) const;
  // Measurements of `v` so far (the default: its valid ones).
  int Samples(const DecisionVector& v) const;
  // `v`'s estimate: the default's is DefaultCost(); +inf once any run of `v` was invalid; -1 unseen.
  double Estimate(const DecisionVector& v) const;
  // Estimate(v) raised by one standard error (see above); the default's own is DefaultCost(); plain
  // mode or too few repeated measurements to know the noise: Estimate(v).
  double Score(const DecisionVector& v) const;
  // Median of the default's valid measurements; +inf before the first.
  double DefaultCost() const;
  const std::vector<double>& default_costs() const { return default_costs_; }
  // Every measured configuration but the default with a finite estimate, by Score, cheapest first.
  std::vector<CandidateEstimate> Ranked() const;

 private:
  struct Sample {
    int64_t time;
    double cost;
  };
  // D / D_local(time); 1 in plain mode or with fewer than 3 default measurements.
  double DriftScale(int64_t time) const;
  // Refits noise_sd_ (log space) when samples were added since the last fit.
  void Fit() const;

  bool noise_aware_;
  DecisionVector defaults_;
  int window_;
  std::map<DecisionVector, std::vector<Sample>> samples_;
  std::vector<Sample> default_samples_;  // time order
  std::vector<double> default_costs_;
  double default_median_;
  mutable bool fitted_ = false;
  mutable double noise_sd_ = 0;  // one measurement's spread in log space; 0: unknown
};

}  // namespace hlox
