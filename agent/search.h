// Search agents over a SearchSpace: random, greedy coordinate descent, beam search over the
// sequential decision points, simulated annealing, Gibbs sampling, evolution and search guided
// by a learned local-advantage model. Every agent respects the evaluation budget, starts from the
// default policy or a random vector, and reports every (configuration, cost) pair it saw.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/evaluator.h"
#include "agent/search_space.h"

namespace hlox {

struct SearchOptions {
  std::string algo = "random";   // random|greedy|beam|anneal|gibbs|evolution|guided
  int64_t budget = 100;          // evaluations, the default-policy baseline included
  uint64_t seed = 0;
  bool start_random = false;     // start from random decisions instead of the default policy
  Objective objective = Objective::kMeasured;
  int batch = 0;                 // candidates per round; 0 = the evaluator's parallelism
  int beam_width = 4;
  double temperature = 0.05;     // anneal start / gibbs tau, relative to the baseline cost
  int population = 16;           // evolution
  double mutation_rate = 0;      // evolution; 0 = 1/sites
  // Evolution: children per generation proposed by a surrogate (guided_surrogate.h, no advantage
  // model) fit to every configuration measured so far, instead of bred; 0 = a plain EA.
  int surrogate_children = 4;
  std::string model_path;        // guided: trained advantage model
  double top_fraction = 0.1;     // guided: alpha, pick among the top alpha of predicted nodes
  int neighbourhood = 1;         // guided: k hops mutated around the chosen node
  // Re-measure the default policy alongside every this many evaluations (and once in the first
  // round, since its first run is cold); the reference cost is the median of its measurements.
  // These re-measurements are not counted in `evaluations`. 0 = measure it once, first.
  int default_every = 16;
  // Noise handling (measured objective; search_estimates.h): a configuration's cost is the
  // median of all its drift-corrected measurements; a candidate whose estimate beats the best
  // is re-measured (fresh) until it has `confirm_samples` measurements before it can become the
  // best; evolution re-measures its elites now and then; the best, elites and race candidates are
  // ranked by the estimate raised by one standard error of the noise. Every re-measurement is an
  // evaluation (budget, log). false: one measurement per configuration, the best sample wins.
  bool noise_aware = true;
  int confirm_samples = 3;
  // Called after each round of evaluations.
  std::function<void(int64_t evaluations, int64_t invalid, double best_speedup)> on_progress;
};

// One evaluated configuration.
struct LogEntry {
  DecisionVector decisions;
  double cost;                   // +inf when invalid
  JobStatus status;
  int64_t evaluation;            // 1-based index in evaluation order
};

// A configuration's noise-aware score (search_estimates.h) and how many measurements it rests on.
struct CandidateEstimate {
  DecisionVector decisions;
  double cost;
  int samples;
};

struct SearchResult {
  DecisionVector best;
  double best_cost = 0;          // noise-aware: the best's score (search_estimates.h); plain: its sample
  double default_cost = 0;       // the default policy's cost: median of default_costs
  std::vector<double> default_costs;  // every valid measurement of the default, in order
  int64_t evaluations = 0, invalid = 0;
  int64_t evaluations_to_best = 0;
  std::vector<double> best_so_far;  // best_cost after each evaluation (noise-aware: may rise
                                    // when re-measurement demotes a lucky best)
  std::vector<LogEntry> log;     // every measurement (re-measurements too), raw costs
  // Noise-aware only: every validated configuration but the default by score, cheapest first.
  std::vector<CandidateEstimate> estimates;
  int best_samples = 1;          // measurements behind best_cost
  double speedup() const { return best_cost > 0 ? default_cost / best_cost : 1.0; }
};

std::vector<std::string> SearchAlgorithms();
// Runs `options.algo`. InvalidArgument for an unknown algorithm or a bad option; errors from
// loading the model for guided search.
absl::StatusOr<SearchResult> RunSearch(const SearchSpace& space, Evaluator& evaluator,
                                       const SearchOptions& options);

}  // namespace hlox
