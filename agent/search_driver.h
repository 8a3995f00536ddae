// Shared bookkeeping of every search agent: the budget, the log, the best configuration so far
// and progress reporting. Agents only propose vectors and read costs.
#pragma once

#include <map>
#include <random>
#include <vector>

#include "agent/search.h"

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
  // (+inf for invalid). Configurations seen before are answered from memory, free.
  std::vector<double> Evaluate(const std::vector<DecisionVector>& batch);
  double Evaluate(const DecisionVector& v);
  // Cost of a configuration seen before, or -1.
  double Known(const DecisionVector& v) const;

  // The starting point: the defaults, or a random vector when options.start_random.
  DecisionVector Start();
  DecisionVector RandomVector();
  int Choices(int64_t site) const { return static_cast<int>(space_.sites[site].choices.size()); }

  const DecisionVector& best() const { return result_.best; }
  double best_cost() const { return result_.best_cost; }
  double baseline_cost() const { return result_.default_cost; }
  SearchResult Finish();

 private:
  const SearchSpace& space_;
  Evaluator& evaluator_;
  SearchOptions options_;
  std::mt19937_64 rng_;
  SearchResult result_;
  // Folds a re-measurement of the default into the reference cost (median of all).
  void AddDefaultMeasurement(const ResultRecord& record);
  std::map<DecisionVector, double> seen_;
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
