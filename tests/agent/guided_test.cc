// Guided search's parts on synthetic problems with a known answer: the online surrogate ranks
// unseen configurations like a planted log-additive cost despite heavy-tailed noise, its
// Thompson samples narrow as data arrives, and guided search (with an untrained advantage model,
// so the surrogate must do the work) reaches the planted optimum, where random search with the
// same budget does not, also with many sites and a sparse optimum; from the default it starts in
// a trust region around it; it works under a deterministic objective (roofline seconds) too;
// and it is deterministic for a seed, from either start.
#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "agent/advantage_model.h"
#include "agent/guided_surrogate.h"
#include "agent/search.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

// log cost = sum_i w_i * [v_i != target_i]; the optimum (cost 1) is `target`.
struct Planted {
  explicit Planted(int n, uint64_t seed) : target(n), weight(n) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < n; ++i) {
      target[i] = static_cast<int>(rng() % 2);
      weight[i] = 0.02 + 0.02 * static_cast<double>(rng() % 10);
    }
  }
  double LogCost(const DecisionVector& v) const {
    double c = 0;
    for (size_t i = 0; i < v.size(); ++i) c += weight[i] * (v[i] != target[i]);
    return c;
  }
  DecisionVector target;
  std::vector<double> weight;
};

class PlantedEvaluator : public Evaluator {
 public:
  // `roofline_only`: the measured cost is flat (10, above every planted cost), only roofline
  // seconds carry the planted cost.
  explicit PlantedEvaluator(const Planted& p, bool roofline_only = false)
      : p_(p), roofline_only_(roofline_only) {}
  std::vector<ResultRecord> Evaluate(const std::vector<PipelineDecisions>& batch) override {
    std::vector<ResultRecord> out;
    for (const PipelineDecisions& d : batch) {
      ResultRecord r;
      double c = std::exp(p_.LogCost(d.at("fusion#0")));
      r.cost.median = roofline_only_ ? 10.0 : c;
      r.cost.samples = {r.cost.median};
      r.analytical.roofline_seconds = c;
      out.push_back(r);
    }
    return out;
  }
  int parallelism() const override { return 1; }

 private:
  const Planted& p_;
  bool roofline_only_;
};

SearchSpace ChainSpace(int n) {
  SearchSpace s;
  s.pipeline = "fusion-only";
  s.key = "fusion#0";
  for (int i = 0; i < n; ++i) {
    DecisionSite site;
    site.id = absl::StrCat("fuse:n", i);
    site.choices = {"keep", "fuse"};
    s.sites.push_back(site);
    s.defaults.push_back(1);
    s.features.node_names.push_back(absl::StrCat("n", i));
    s.features.node_features.push_back(static_cast<float>(i % 5));
    s.features.site_nodes.push_back(i);
  }
  s.features.node_columns = {"opcode"};
  for (int i = 0; i + 1 < n; ++i) s.features.edge_index.push_back(i);
  for (int i = 0; i + 1 < n; ++i) s.features.edge_index.push_back(i + 1);
  return s;
}

// Search options for the tests: `algo` with the given budget, seed, model and start.
SearchOptions Options(const std::string& algo, int64_t budget, uint64_t seed,
                      const std::string& model, bool random_start = false) {
  SearchOptions o;
  o.algo = algo;
  o.budget = budget;
  o.seed = seed;
  o.start_random = random_start;
  o.model_path = model;
  return o;
}

DecisionVector RandomConfig(int n, std::mt19937_64& rng) {
  DecisionVector v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<int>(rng() % 2);
  return v;
}

// Fraction of pairs ordered the same way by `a` and `b`.
double Concordance(const std::vector<double>& a, const std::vector<double>& b) {
  int64_t same = 0, total = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      if (a[i] == a[j] || b[i] == b[j]) continue;
      ++total;
      same += (a[i] < a[j]) == (b[i] < b[j]);
    }
  }
  return total > 0 ? static_cast<double>(same) / total : 0;
}

TEST(GuidedSurrogate, RanksUnseenConfigurationsLikeThePlantedCost) {
  const int n = 16;
  Planted p(n, 1);
  GuidedSurrogate s(std::vector<int>(n, 2), DecisionVector(n, 1), std::vector<float>(n, 0.0f));
  std::mt19937_64 rng(2);
  std::normal_distribution<double> noise(0, 0.03);
  for (int i = 0; i < 80; ++i) {
    DecisionVector v = RandomConfig(n, rng);
    double y = p.LogCost(v) + noise(rng) + (i % 10 == 0 ? 1.0 : 0.0);  // every tenth: a load spike
    s.Add(v, y);
  }
  s.Fit();
  std::vector<double> truth, predicted;
  for (int i = 0; i < 60; ++i) {
    DecisionVector v = RandomConfig(n, rng);
    truth.push_back(p.LogCost(v));
    predicted.push_back(s.Score(s.mean(), v));
  }
  EXPECT_GT(Concordance(truth, predicted), 0.85);
  EXPECT_LT(s.Score(s.mean(), p.target), s.Score(s.mean(), DecisionVector(n, 1 - p.target[0])));
  EXPECT_EQ(s.observations(), 80);
}

TEST(GuidedSurrogate, ThompsonSamplesNarrowWithData) {
  const int n = 8;
  Planted p(n, 3);
  GuidedSurrogate s(std::vector<int>(n, 2), DecisionVector(n, 1), std::vector<float>(n, -1.0f));
  std::mt19937_64 rng(4);
  auto spread = [&] {
    double sum = 0, sq = 0;
    for (int i = 0; i < 200; ++i) {
      double v = s.Score(s.Sample(rng), DecisionVector(n, 0));
      sum += v;
      sq += v * v;
    }
    return std::sqrt(sq / 200 - (sum / 200) * (sum / 200));
  };
  double before = spread();
  for (int i = 0; i < 60; ++i) {
    DecisionVector v = RandomConfig(n, rng);
    s.Add(v, p.LogCost(v));
  }
  s.Fit();
  EXPECT_LT(spread(), 0.5 * before);
  s.Add(DecisionVector(n, 0), std::nan(""));  // non-finite costs are ignored
  EXPECT_EQ(s.observations(), 60);
}

// More features than observations (a pass-order space: many slots of many choices): the
// posterior is computed in observation space. It still ranks unseen configurations like an
// additive planted cost, and its Thompson samples centre on its mean.
TEST(GuidedSurrogate, ManyChoicesFitInObservationSpace) {
  const int sites = 30, choices = 12;  // 3 + 30 * 11 = 333 features, 120 observations
  std::mt19937_64 rng(7);
  std::normal_distribution<double> effect(0, 0.1), noise(0, 0.01);
  std::vector<std::vector<double>> planted(sites, std::vector<double>(choices, 0.0));
  for (auto& site : planted) {
    for (int c = 1; c < choices; ++c) site[c] = effect(rng);
  }
  auto cost = [&](const DecisionVector& v) {
    double y = 0;
    for (int s = 0; s < sites; ++s) y += planted[s][v[s]];
    return y;
  };
  std::uniform_int_distribution<int> pick(0, choices - 1);
  std::bernoulli_distribution changed(0.2);
  auto random_config = [&] {
    DecisionVector v(sites, 0);
    for (int& c : v) c = changed(rng) ? pick(rng) : 0;
    return v;
  };
  GuidedSurrogate s(std::vector<int>(sites, choices), DecisionVector(sites, 0), std::vector<float>(sites, 0.0f));
  for (int i = 0; i < 120; ++i) {
    DecisionVector v = random_config();
    s.Add(v, cost(v) + noise(rng));
  }
  s.Fit();
  std::vector<double> truth, predicted;
  for (int i = 0; i < 60; ++i) {
    DecisionVector v = random_config();
    truth.push_back(cost(v));
    predicted.push_back(s.Score(s.mean(), v));
  }
  // About two observations per indicator: 0.71 here (the same as the weight-space form, which
  // gives these weights too); a fit that ignored the data would rank at chance (0.5).
  EXPECT_GT(Concordance(truth, predicted), 0.65);
  const DecisionVector probe = random_config();
  double sum = 0;
  for (int i = 0; i < 400; ++i) sum += s.Score(s.Sample(rng), probe);
  EXPECT_NEAR(sum / 400, s.Score(s.mean(), probe), 0.03);
}

TEST(GuidedSearch, ReachesThePlantedOptimumWhereRandomDoesNot) {
  const int n = 24;
  SearchSpace space = ChainSpace(n);
  const std::string model = absl::StrCat(::testing::TempDir(), "/untrained.model");
  ASSERT_TRUE(AdvantageModel(5).Save(model).ok());
  double guided_total = 0, random_total = 0;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    Planted p(n, 10 + seed);
    double best = std::exp(0.0);
    for (const char* algo : {"guided", "random"}) {
      PlantedEvaluator eval(p);
      SearchOptions o = Options(algo, 80, seed, model);
      absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->evaluations, 80);
      double excess = std::log(r->best_cost / best);  // log cost above the optimum
      const bool guided = std::string(algo) == "guided";
      (guided ? guided_total : random_total) += excess;
      if (guided) {
        EXPECT_LT(excess, 0.15) << "seed " << seed;
      }
    }
  }
  EXPECT_LT(guided_total, 0.5 * random_total);
}

// Many sites, a sparse optimum: the default is right except at 6 sites. Random vectors change
// about half of the 120 sites, so random search stays far off; guided search must find the few
// single-site changes that pay (its Thompson trust-region moves; without them, seed 1 keeps
// 0.42 of the 0.66 excess).
TEST(GuidedSearch, ManySitesSparseOptimumFromTheDefault) {
  const int n = 120;
  SearchSpace space = ChainSpace(n);
  // Untrained models: their random weights (which move whenever the opcode table grows) steer
  // guided search, so the claim is about the mean over three of them, not one draw.
  std::vector<std::string> models;
  for (uint64_t m = 7; m < 10; ++m) {
    models.push_back(absl::StrCat(::testing::TempDir(), "/untrained3_", m, ".model"));
    ASSERT_TRUE(AdvantageModel(m).Save(models.back()).ok());
  }
  for (uint64_t seed = 0; seed < 2; ++seed) {
    Planted p(n, 20 + seed);
    for (int i = 0; i < n; ++i) p.target[i] = 1;  // the defaults...
    for (int i = 0; i < 6; ++i) p.target[(i * 37 + 11 * static_cast<int>(seed)) % n] = 0;  // ...but 6 sites
    double excess[2] = {0, 0};
    for (int a = 0; a < 2; ++a) {
      for (const std::string& model : models) {
        PlantedEvaluator eval(p);
        SearchOptions o = Options(a == 0 ? "guided" : "random", 100, seed, model);
        absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
        ASSERT_TRUE(r.ok()) << r.status();
        excess[a] += std::log(r->best_cost) / models.size();  // the optimum costs exp(0) = 1
      }
    }
    const double start = p.LogCost(space.defaults);
    EXPECT_LT(excess[0], 0.5 * start) << "seed " << seed;  // guided removes most of the excess
    EXPECT_LT(excess[0], excess[1]) << "seed " << seed;
  }
}

// Under a deterministic objective (the planted cost only in roofline seconds, the measured cost
// flat; as bench/search/generalization.py --objective roofline searches) guided search from the
// default removes most of the excess of the sparse 120-site problem and beats random search.
TEST(GuidedSearch, ExactObjectiveSparseOptimumFromTheDefault) {
  const int n = 120;
  SearchSpace space = ChainSpace(n);
  std::vector<std::string> models;  // as above: the mean over three untrained models
  for (uint64_t m = 9; m < 12; ++m) {
    models.push_back(absl::StrCat(::testing::TempDir(), "/untrained5_", m, ".model"));
    ASSERT_TRUE(AdvantageModel(m).Save(models.back()).ok());
  }
  for (uint64_t seed = 0; seed < 2; ++seed) {
    Planted p(n, 40 + seed);
    for (int i = 0; i < n; ++i) p.target[i] = 1;
    for (int i = 0; i < 6; ++i) p.target[(i * 29 + 7 * static_cast<int>(seed)) % n] = 0;
    double excess[2] = {0, 0};
    for (int a = 0; a < 2; ++a) {
      for (const std::string& model : models) {
        PlantedEvaluator eval(p, /*roofline_only=*/true);
        SearchOptions o = Options(a == 0 ? "guided" : "random", 100, seed, model);
        o.objective = Objective::kRoofline;
        absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
        ASSERT_TRUE(r.ok()) << r.status();
        excess[a] += std::log(r->best_cost) / models.size();
      }
    }
    EXPECT_LT(excess[0], 0.5 * p.LogCost(space.defaults)) << "seed " << seed;
    EXPECT_LT(excess[0], excess[1]) << "seed " << seed;
  }
}

// From the default, the first candidates stay in the trust region around it (at most 4 sites
// changed before the incumbent moves, the radius doubling when it moves); from a random start
// the whole space is open.
TEST(GuidedSearch, TrustRegionStartsAtTheDefault) {
  const int n = 120;
  SearchSpace space = ChainSpace(n);
  const std::string model = absl::StrCat(::testing::TempDir(), "/untrained4.model");
  ASSERT_TRUE(AdvantageModel(8).Save(model).ok());
  Planted p(n, 30);
  for (bool random_start : {false, true}) {
    PlantedEvaluator eval(p);
    SearchOptions o = Options("guided", 40, 3, model, random_start);
    absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
    ASSERT_TRUE(r.ok()) << r.status();
    int64_t far = 0;
    for (const LogEntry& e : r->log) {
      int64_t changed = 0;
      for (int i = 0; i < n; ++i) changed += e.decisions[i] != space.defaults[i];
      if (e.evaluation <= 3) far = std::max(far, changed);
    }
    if (random_start) {
      EXPECT_GT(far, 30);  // the random start itself changes about half of the sites
    } else {
      ASSERT_GE(r->log.size(), 2u);
      int64_t second = 0;
      for (int i = 0; i < n; ++i) second += r->log[1].decisions[i] != space.defaults[i];
      EXPECT_GE(second, 1);
      EXPECT_LE(second, 4);
      EXPECT_LE(far, 12);  // no whole random vectors: 4 sites, then 8 around a moved incumbent
    }
  }
}

TEST(GuidedSearch, DeterministicForASeed) {
  SearchSpace space = ChainSpace(10);
  Planted p(10, 7);
  const std::string model = absl::StrCat(::testing::TempDir(), "/untrained2.model");
  ASSERT_TRUE(AdvantageModel(6).Save(model).ok());
  for (bool random_start : {true, false}) {
    std::vector<DecisionVector> runs[2];
    for (auto& log : runs) {
      PlantedEvaluator eval(p);
      SearchOptions o = Options("guided", 30, 9, model, random_start);
      absl::StatusOr<SearchResult> r = RunSearch(space, eval, o);
      ASSERT_TRUE(r.ok()) << r.status();
      for (const LogEntry& e : r->log) log.push_back(e.decisions);
    }
    EXPECT_EQ(runs[0], runs[1]);
  }
}

}  // namespace
}  // namespace hlox
