// Search agents on a synthetic evaluator with a known optimum: every algorithm respects the
// budget, logs every evaluation, and finds a configuration better than the default policy;
// search logs round-trip; the advantage model learns a planted per-site signal, antisymmetric
// across a flip.
#include <cmath>
#include <fstream>
#include <random>

#include "agent/advantage_model.h"
#include "agent/search.h"
#include "agent/search_log.h"
#include "gtest/gtest.h"
#include "tests/agent/search_space_fake.h"

namespace hlox {
namespace {

// Cost = 1 + sum_i w_i * [v_i != target_i]; the default (all zeros) is far from the target.
class PlantedEvaluator : public Evaluator {
 public:
  explicit PlantedEvaluator(int n) : target_(n), weight_(n) {
    std::mt19937 rng(7);
    for (int i = 0; i < n; ++i) {
      target_[i] = static_cast<int>(rng() % 2);
      weight_[i] = 0.01 * (1 + static_cast<int>(rng() % 10));
    }
    target_[0] = 1;
  }
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override {
    std::vector<ResultRecord> out;
    for (const PipelineDecisions& d : batch) {
      const DecisionVector& v = d.at("fusion#0");
      ResultRecord r;
      ++calls;
      if (v.size() > 2 && v[1] == 1 && v[2] == 1) {  // a forbidden combination: invalid
        r.status = JobStatus::kWrongOutput;
      } else {
        double c = 1;
        for (size_t i = 0; i < v.size(); ++i) c += weight_[i] * (v[i] != target_[i]);
        r.cost.median = c;
        r.cost.samples = {c};
      }
      out.push_back(r);
    }
    return out;
  }
  int parallelism() const override { return 4; }
  int64_t calls = 0;
  std::vector<int> target_;
  std::vector<double> weight_;
};

SearchSpace MakeSpace(int n) {
  SearchSpace s = testing::KeepOrFuseSpace(n);
  for (DecisionSite& site : s.sites) site.rule = "fuse_producer";
  // A chain graph: node i anchors site i.
  s.features.node_columns = {"opcode"};
  for (int i = 0; i < n; ++i) {
    s.features.node_names.push_back("n" + std::to_string(i));
    s.features.node_features.push_back(static_cast<float>(i % 5));
    s.features.site_nodes.push_back(i);
  }
  for (int i = 0; i + 1 < n; ++i) s.features.edge_index.push_back(i);
  for (int i = 0; i + 1 < n; ++i) s.features.edge_index.push_back(i + 1);
  return s;
}

class AllAlgorithms : public ::testing::TestWithParam<std::string> {};

TEST_P(AllAlgorithms, RespectsBudgetAndImproves) {
  SearchSpace space = MakeSpace(12);
  PlantedEvaluator eval(12);
  SearchOptions o;
  o.algo = GetParam();
  o.budget = 150;
  o.seed = 3;
  absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LE(r->evaluations, o.budget);
  // Plus the default's re-measurements (search.h default_every), not counted as evaluations.
  EXPECT_EQ(eval.calls, r->evaluations + static_cast<int64_t>(r->default_costs.size()) - 1);
  EXPECT_EQ(static_cast<int64_t>(r->log.size()), r->evaluations);
  EXPECT_EQ(static_cast<int64_t>(r->best_so_far.size()), r->evaluations);
  EXPECT_EQ(r->log[0].decisions, space.defaults);  // the baseline comes first
  EXPECT_LT(r->best_cost, r->default_cost) << o.algo << " found nothing better than the default";
  EXPECT_GT(r->speedup(), 1.0);
  for (size_t i = 1; i < r->best_so_far.size(); ++i) EXPECT_LE(r->best_so_far[i], r->best_so_far[i - 1]);
}

INSTANTIATE_TEST_SUITE_P(Agents, AllAlgorithms,
                         ::testing::Values("random", "greedy", "beam", "anneal", "gibbs", "evolution"));

// Pays only when every site of one kind is switched together (as staging pays along a whole
// chain): cost 1 with all "stage" sites at 1, else 2 (less a little per "fuse" site at 0).
class AllOrNothingEvaluator : public Evaluator {
 public:
  explicit AllOrNothingEvaluator(const SearchSpace& s) : space_(s) {}
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override {
    std::vector<ResultRecord> out;
    for (const PipelineDecisions& d : batch) {
      const DecisionVector& v = d.at("fusion#0");
      bool all = true;
      double c = 2;
      for (size_t i = 0; i < v.size(); ++i) {
        if (space_.sites[i].rule == "stage") all = all && v[i] == 1;
        else c -= 0.001 * (v[i] == 0);
      }
      ResultRecord r;
      r.cost.median = all ? 1 : c;
      r.cost.samples = {r.cost.median};
      out.push_back(r);
    }
    return out;
  }
  int parallelism() const override { return 4; }

 private:
  const SearchSpace& space_;
};

// Evolution's first population holds one uniform setting per decision kind, so a kind that pays
// only as a whole is found at once; one-site mutations and random vectors (2^-24 here) are not.
TEST(Search, EvolutionSeedsOneUniformSettingPerKind) {
  SearchSpace space = MakeSpace(32);
  for (int i = 0; i < 32; ++i) space.sites[i].rule = i % 4 == 0 ? "fuse" : "stage";
  AllOrNothingEvaluator eval(space);
  SearchOptions o;
  o.algo = "evolution";
  o.budget = 40;
  o.seed = 1;
  absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_DOUBLE_EQ(r->best_cost, 1.0);
  // The sweeps come right after the start: "fuse" sites flipped, then "stage" sites flipped.
  ASSERT_GE(r->log.size(), 3u);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(r->log[1].decisions[i], i % 4 == 0 ? 1 : 0) << i;
    EXPECT_EQ(r->log[2].decisions[i], i % 4 == 0 ? 0 : 1) << i;
  }
}

TEST(Search, GreedyReachesThePlantedOptimum) {
  SearchSpace space = MakeSpace(10);
  PlantedEvaluator eval(10);
  SearchOptions o;
  o.algo = "greedy";
  o.budget = 400;
  absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
  ASSERT_TRUE(r.ok());
  bool forbidden = eval.target_[1] == 1 && eval.target_[2] == 1;
  if (!forbidden) {
    EXPECT_NEAR(r->best_cost, 1.0, 1e-9);
  }
  EXPECT_GT(r->invalid, -1);
}

TEST(Search, InvalidCandidatesAreCountedNeverBest) {
  SearchSpace space = MakeSpace(6);
  PlantedEvaluator eval(6);
  SearchOptions o;
  o.algo = "random";
  o.budget = 64;
  absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->invalid, 0);
  EXPECT_FALSE(r->best[1] == 1 && r->best[2] == 1);
}

TEST(Search, UnknownAlgorithmAndGuidedWithoutModelAreErrors) {
  SearchSpace space = MakeSpace(3);
  PlantedEvaluator eval(3);
  SearchOptions o;
  o.algo = "magic";
  EXPECT_FALSE(RunSearch(space, eval, o).ok());
  o.algo = "guided";
  EXPECT_FALSE(RunSearch(space, eval, o).ok());
}

TEST(SearchLog, RoundTrips) {
  SearchLog log{"/tmp/m.hlo", "default", "fusion#0", "measured", 3, {}};
  log.entries.push_back({{0, 1, 0}, 1.5, JobStatus::kOk, 1});
  log.entries.push_back({{1, 1, 0}, INFINITY, JobStatus::kWrongOutput, 2});
  std::string path = ::testing::TempDir() + "/log.jsonl";
  ASSERT_TRUE(WriteSearchLog(path, log).ok());
  absl::StatusOr<SearchLog> back = ReadSearchLog(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->key, "fusion#0");
  ASSERT_EQ(back->entries.size(), 2u);
  EXPECT_EQ(back->entries[1].decisions, (DecisionVector{1, 1, 0}));
  EXPECT_TRUE(std::isinf(back->entries[1].cost));
  EXPECT_EQ(back->entries[1].status, JobStatus::kWrongOutput);
  std::ofstream(path, std::ios::app) << "{\"d\":[1],\"cost\":1,\"status\":\"OK\"}\n";
  EXPECT_FALSE(ReadSearchLog(path).ok());  // wrong vector length is an error
}

// Planted advantages over 20 nodes: those with opcode 3 (every fifth) large, the rest small;
// fills `nodes` with 0..19 and returns the scaled labels.
std::vector<float> PlantedLabels(std::vector<int64_t>* nodes) {
  std::vector<double> adv;
  for (int i = 0; i < 20; ++i) {
    nodes->push_back(i);
    adv.push_back(i % 5 == 3 ? -0.5 : 0.01);
  }
  return ScaleAdvantages(adv);
}

TEST(AdvantageModel, LearnsAPlantedSignalAndSavesLoads) {
  SearchSpace space = MakeSpace(20);
  GraphInput g = MakeGraphInput(space.features, space.defaults);
  std::vector<int64_t> nodes;
  std::vector<float> labels = PlantedLabels(&nodes);
  AdvantageModel m(1);
  double first = m.TrainStep(g, nodes, labels, 1e-2);
  double last = first;
  for (int i = 0; i < 300; ++i) last = m.TrainStep(g, nodes, labels, 1e-2);
  EXPECT_LT(last, 0.1 * first);
  Eigen::VectorXf pred = m.Predict(g);
  EXPECT_GT(std::fabs(pred(3)), std::fabs(pred(4)) + 0.5);
  std::string path = ::testing::TempDir() + "/adv.model";
  ASSERT_TRUE(m.Save(path).ok());
  absl::StatusOr<AdvantageModel> loaded = AdvantageModel::Load(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_NEAR(loaded->Predict(g)(3), pred(3), 1e-4);
  std::ofstream(path) << "garbage";
  EXPECT_FALSE(AdvantageModel::Load(path).ok());
}

// Trained only on flips away from the defaults (all 0), the antisymmetric model predicts the
// opposite sign for flipping back at a configuration where the sites are switched on; a plain
// (v1) model has no reason to. Version-1 files still load, as plain models.
TEST(AdvantageModel, AntisymmetricAcrossAFlipAndLoadsVersionOne) {
  SearchSpace space = MakeSpace(20);
  GraphInput g = MakeGraphInput(space.features, space.defaults);
  std::vector<int64_t> nodes;
  std::vector<float> labels = PlantedLabels(&nodes);
  AdvantageModel m(1);
  AdvantageModel plain(1, false);
  for (int i = 0; i < 300; ++i) {
    m.TrainStep(g, nodes, labels, 1e-2);
    plain.TrainStep(g, nodes, labels, 1e-2);
  }
  ASSERT_LT(m.Predict(g)(3), -0.5);
  GraphInput on = g;
  SetDecisions(on, DecisionVector(20, 1));
  Eigen::VectorXf back = m.Predict(on);
  EXPECT_GT(back(3), 0.5);            // switching node 3's site off again costs what it saved
  EXPECT_GT(back(3), back(4) + 0.5);
  EXPECT_LT(on.flip_sign(3), 0);
  std::string path = ::testing::TempDir() + "/adv_v1.model";
  ASSERT_TRUE(plain.Save(path).ok());
  std::ifstream in(path);
  std::string magic, rest;
  int width = 0, hidden = 0, flag = 0;
  in >> magic >> width >> hidden >> flag;
  EXPECT_EQ(flag, 0);
  std::getline(in, rest, '\0');
  std::ofstream(path) << "hlox-advantage-graphsage-v1 " << width << " " << hidden << rest;
  absl::StatusOr<AdvantageModel> v1 = AdvantageModel::Load(path);
  ASSERT_TRUE(v1.ok()) << v1.status();
  EXPECT_FALSE(v1->antisymmetric());
  EXPECT_NEAR(v1->Predict(on)(3), plain.Predict(on)(3), 1e-4);
}

}  // namespace
}  // namespace hlox
