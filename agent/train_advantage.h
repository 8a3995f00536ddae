// Offline training of the advantage model on search logs (typically Gibbs sampling): every pair
// of logged configurations that differ at exactly one site gives a label for that site's node,
// the cost change relative to the graph's default cost, scaled per graph; nodes with large
// advantages are sampled more often (prioritized sampling).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/advantage_model.h"

namespace hlox {

struct TrainOptions {
  int epochs = 100;
  double learning_rate = 3e-3;
  int batch_nodes = 64;
  uint64_t seed = 0;
};

struct TrainReport {
  int graphs = 0;                 // logs used
  int64_t samples = 0;            // labelled (configuration, site) pairs
  double initial_loss = 0, final_loss = 0;
};

// Trains `model` on the logs (paths of .jsonl files written by hlox search). Logs whose module
// cannot be read or whose decision point no longer matches are errors naming the file.
absl::StatusOr<TrainReport> TrainAdvantageModel(const std::vector<std::string>& log_paths,
                                                const TrainOptions& options, AdvantageModel& model);

// How well `model` ranks one log's labelled samples (typically a held-out module's Gibbs log).
struct RankReport {
  std::string log;
  int64_t samples = 0;
  double spearman = 0;          // rank correlation of predicted vs measured advantage
  double sign_agreement = 0;    // fraction of the larger half of |measured| with the right sign
};

// One report per log, on the same labels training uses. Errors as for TrainAdvantageModel.
absl::StatusOr<std::vector<RankReport>> EvaluateAdvantageModel(const std::vector<std::string>& log_paths,
                                                               const AdvantageModel& model);

}  // namespace hlox
