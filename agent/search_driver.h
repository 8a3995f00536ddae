// Shared bookkeeping of every search agent: the budget, the log, the noise-aware cost estimates
// (search_estimates.h), the best configuration so far and progress reporting. Agents only
// propose vectors and read costs; the driver re-measures apparent winners before they become
// the best (search.h noise_aware).
#pragma once

#include <random>
#include <vector>

#include "agent/search.h"
#include "agent/search_estimates.h"

namespace hlox {

class SearchDriver {
 public:
  SearchDriver(const SearchSpace& space, Evaluator& evaluator, const SearchOptions& options);

  const SearchSpace& space() const { return space_; }
  const SearchOptions& options() const { return options_; }
  std::mt19937_64& rng() { return rng_; }
  int batch_size() const;
  int64_t remaining() const { return options_.budget - result_.evaluations; }
  // Out of budget, or the agent keeps proposing only configurations already seen.
  bool exhausted() const { return remaining() <= 0 || stalls_ > kMaxStalls; }

  // Evaluates as many of `batch` as the budget allows (in order); returns their costs
  // (estimates; +inf for invalid or unmeasured). Configurations seen before are answered from
  // memory, free. Noise-aware: new ones that beat the best are re-measured first (budgeted).
  std::vector<double> Evaluate(const std::vector<DecisionVector>& batch);
  double Evaluate(const DecisionVector& v);
  // Measures already-seen configurations once more, fresh (past any result cache), as far as
  // the budget allows; returns their updated estimates. Plain mode: no measurement.
  std::vector<double> Remeasure(const std::vector<DecisionVector>& vs);
  // Estimate of a configuration seen before (noise-aware: median of its drift-corrected
  // measurements), or -1. Agents compare these.
  double Known(const DecisionVector& v) const;
  // Noise-aware: Known raised by one standard error (CostEstimates::Score), what the best,
  // elites and the race are kept by; plain: Known.
  double Score(const DecisionVector& v) const { return estimates_.Score(v); }
  // Measurements of `v` so far.
  int Samples(const DecisionVector& v) const { return estimates_.Samples(v); }
  // Whether costs are noise-aware estimates (options.noise_aware and the measured objective).
  bool noise_aware() const { return noisy_; }

  // The starting point: the defaults, or a random vector when options.start_random.
  DecisionVector Start();
  DecisionVector RandomVector();
  // One vector per decision kind (site rule), in order of first appearance, at most `max`: the
  // start with every site of that rule at another choice (the first non-default one), as a
  // uniform setting of one kind across the graph (all dots of one layout, every kernel staged).
  std::vector<DecisionVector> RuleSweeps(size_t max);
  int Choices(int64_t site) const { return static_cast<int>(space_.sites[site].choices.size()); }

  const DecisionVector& best() const { return result_.best; }
  double best_cost() const { return result_.best_cost; }
  double baseline_cost() const { return result_.default_cost; }
  // The result; noise-aware: after a last fresh measurement of the default for drift correction.
  SearchResult Finish();

 private:
  const SearchSpace& space_;
  Evaluator& evaluator_;
  SearchOptions options_;
  bool noisy_;
  std::mt19937_64 rng_;
  SearchResult result_;
  CostEstimates estimates_;
  // Measures `vs` (all fresh, or none), with the default riding along when due; counts, logs
  // and records every measurement.
  void Measure(const std::vector<DecisionVector>& vs, bool fresh);
  // Folds a re-measurement of the default into the reference cost (median of all).
  void AddDefaultMeasurement(const ResultRecord& record);
  // Noise-aware: re-measures those of `vs` whose estimate beats the best's, up to confirm_samples each.
  void ConfirmWinners(const std::vector<DecisionVector>& vs);
  // Noise-aware: the best is the cheapest score among the default and the configurations
  // with confirm_samples measurements.
  void UpdateBest();
  void ReportProgress();
  // Known(v) of each of `vs`, +inf for unseen or invalid ones.
  std::vector<double> KnownCosts(const std::vector<DecisionVector>& vs) const;
  int64_t since_default_ = 0;  // evaluations since the default was last measured
  int default_runs_ = 0;       // re-measurements of the default so far
  static constexpr int kMaxStalls = 200;
  int stalls_ = 0;  // consecutive rounds that evaluated nothing new
};

// Algorithms (one file each family).
void RunRandom(SearchDriver& d);
void RunGreedy(SearchDriver& d);
void RunBeam(SearchDriver& d);
void RunAnneal(SearchDriver& d);
void RunGibbs(SearchDriver& d);
void RunEvolution(SearchDriver& d);
absl::Status RunGuided(SearchDriver& d);

}  // namespace hlox
