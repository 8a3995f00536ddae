// A learned local advantage function: a two-layer GraphSAGE network (mean aggregation, Eigen)
// that predicts, for every node of a graph, the scaled cost change of flipping the decision
// anchored there (antisymmetric: times -1 where the site is switched on, since flipping back
// undoes the change). Trained offline on Gibbs-sampling logs (train_advantage.h), saved and loaded
// as a small text file, and used by guided search to pick which nodes to mutate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include "absl/status/statusor.h"
#include "passes/features.h"
#include "passes/pass.h"

namespace hlox {

// Node features and mean-aggregation matrix of one graph at one configuration.
struct GraphInput {
  Eigen::MatrixXf x;                    // nodes x features
  Eigen::SparseMatrix<float> agg;       // row-normalised undirected adjacency
  std::vector<int64_t> site_nodes;      // node of each site
  int decision_column = 0;              // column holding each site node's current choice
  // Per node: -1 where the site anchored there currently takes a non-zero choice, else +1. An
  // antisymmetric model multiplies its output by it: flipping a binary site back undoes the
  // cost change of flipping it, so one learned value g(node) serves both directions.
  Eigen::VectorXf flip_sign;
};

// Builds the input: opcode one-hot, signed-log shape/size columns, is-site, current choice.
GraphInput MakeGraphInput(const GraphFeatures& features, const DecisionVector& decisions);
// Updates the current-choice column for another configuration of the same graph.
void SetDecisions(GraphInput& input, const DecisionVector& decisions);
int GraphInputWidth();

class AdvantageModel {
 public:
  static constexpr int kHidden = 32;
  // Random initialisation (seeded). New models are antisymmetric (see GraphInput::flip_sign);
  // models saved by earlier versions (v1 files) load as plain ones.
  explicit AdvantageModel(uint64_t seed = 0, bool antisymmetric = true);

  // Predicted scaled advantage per node.
  Eigen::VectorXf Predict(const GraphInput& g) const;
  // One Adam step on squared error over `nodes` with targets `labels`; returns the loss.
  double TrainStep(const GraphInput& g, const std::vector<int64_t>& nodes, const std::vector<float>& labels,
                   double learning_rate);

  absl::Status Save(const std::string& path) const;
  static absl::StatusOr<AdvantageModel> Load(const std::string& path);
  bool antisymmetric() const { return antisymmetric_; }

 private:
  struct Params {
    Eigen::MatrixXf w1, w2;
    Eigen::VectorXf b1, b2, w3;
    float b3 = 0;
  };
  Params p_, m_, v_;  // parameters and Adam moments
  int64_t step_ = 0;
  bool antisymmetric_ = true;
};

// Label scaling of the learned-advantage work: sign(a) * log(1 + |a| / sigma), sigma the median
// |a| of the graph.
std::vector<float> ScaleAdvantages(const std::vector<double>& advantages);

}  // namespace hlox
