// Guided search with a learned local advantage function and an online surrogate. The offline
// advantage model (trained on other modules' Gibbs logs) predicts, per site, how much changing
// it would change the cost; it proposes moves (the top-k predicted gains flipped together,
// neighbourhood mutations around top-ranked sites) and is one feature of the online surrogate
// (guided_surrogate.h), a Bayesian linear model of log cost refit after every round on this
// search's own evaluations. Each round draws a large candidate pool -- model moves and mutations
// around the incumbent (the evaluated configuration with the best posterior mean, i.e. the best
// so far with measurement noise averaged out), and whole random vectors, because on many
// modules large jumps (unfusing many producers at once) are what pays -- plus, per Thompson
// sample of the surrogate, the incumbent with the k single-site changes that sample scores best
// (trust-region moves, exact because the surrogate is additive over sites), and evaluates the
// unseen candidate that the sample ranks best. From the default policy the candidates are kept in
// a trust region around the incumbent (at most `radius` sites changed, starting at the default
// with kTrustStart; doubled when a round moves the incumbent, halved after kTrustPatience
// evaluations without a move, back to kTrustStart below one), because there the default is
// usually close to the best and whole random vectors are slower. Deterministic per seed.
#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "agent/advantage_model.h"
#include "agent/guided_surrogate.h"
#include "agent/search_driver.h"

namespace hlox {
namespace {

constexpr int kRandomCandidates = 64;
constexpr int kMutationCandidates = 64;
constexpr int kSubsetCandidates = 16;
constexpr int kNeighbourCandidates = 16;
// Trust-region moves of each Thompson sample: the k sites it most wants changed, k = 1, 2, 4, ...
constexpr size_t kMaxTrustFlips = 16;
// From the default: the trust region's first radius (sites changed) and how many evaluations
// without an incumbent move halve it.
constexpr int64_t kTrustStart = 4;
constexpr int64_t kTrustPatience = 8;

int64_t Hamming(const DecisionVector& a, const DecisionVector& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) n += a[i] != b[i];
  return n;
}

// The trust region of a search from the default (radius = sites the candidates may change).
struct TrustRegion {
  int64_t radius;
  int64_t stale = 0;  // evaluations since the incumbent last moved
  // After a round of `evaluated` candidates: grow on a move of the incumbent, else shrink.
  void Update(bool moved, int64_t evaluated, int64_t sites) {
    if (moved) {
      radius = std::min(sites, 2 * radius);
      stale = 0;
      return;
    }
    stale += evaluated;
    if (stale < kTrustPatience) return;
    stale = 0;
    radius /= 2;
    if (radius < 1) radius = std::min(sites, kTrustStart);
  }
};

// Sites whose anchor node is within `k` hops of `start` in the undirected graph.
std::vector<int64_t> NeighbourSites(const GraphFeatures& f, const std::vector<std::vector<int64_t>>& adj,
                                    const std::vector<std::vector<int64_t>>& sites_at, int64_t start, int k) {
  std::vector<int64_t> out;
  std::vector<int> dist(f.node_count(), -1);
  std::deque<int64_t> q{start};
  dist[start] = 0;
  while (!q.empty()) {
    int64_t n = q.front();
    q.pop_front();
    for (int64_t s : sites_at[n]) out.push_back(s);
    if (dist[n] == k) continue;
    for (int64_t m : adj[n]) {
      if (dist[m] < 0) {
        dist[m] = dist[n] + 1;
        q.push_back(m);
      }
    }
  }
  return out;
}

// The search's fixed context: the graph's adjacency and the sites anchored at each node.
struct GuidedGraph {
  const GraphFeatures* f;
  std::vector<std::vector<int64_t>> adj, sites_at;
};

// Changes site `s` of `v` to a uniformly chosen other choice.
void Flip(SearchDriver& d, DecisionVector& v, int64_t s) {
  int c = std::uniform_int_distribution<int>(0, d.Choices(s) - 2)(d.rng());
  v[s] = c >= v[s] ? c + 1 : c;
}

// Sites ranked by the advantage model at the incumbent: predicted gains (pred < 0) first,
// largest first, then the rest by magnitude. `helping` gets the number of predicted gains.
std::vector<int64_t> RankSites(SearchDriver& d, const GraphFeatures& f, const Eigen::VectorXf& pred, size_t& helping) {
  std::vector<int64_t> ranked;
  for (int64_t s = 0; s < d.space().size(); ++s) {
    if (f.site_nodes[s] >= 0 && d.Choices(s) > 1) ranked.push_back(s);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
    float pa = pred(f.site_nodes[a]), pb = pred(f.site_nodes[b]);
    if ((pa < 0) != (pb < 0)) return pa < 0;
    return pa < 0 ? pa < pb : std::fabs(pa) > std::fabs(pb);
  });
  helping = 0;
  while (helping < ranked.size() && pred(f.site_nodes[ranked[helping]]) < 0) ++helping;
  return ranked;
}

// The candidate pool of one round around `inc` (see the file comment).
std::vector<DecisionVector> Candidates(SearchDriver& d, const GuidedGraph& g, const DecisionVector& inc,
                                       const Eigen::VectorXf& pred, int64_t radius) {
  const int64_t n = d.space().size();
  std::vector<int64_t> flippable;
  for (int64_t s = 0; s < n; ++s) {
    if (d.Choices(s) > 1) flippable.push_back(s);
  }
  std::vector<DecisionVector> pool;
  if (flippable.empty()) return pool;
  std::uniform_real_distribution<double> u(0, 1);
  const bool local = radius < n;  // a trust region: whole random vectors would leave it
  if (!local) {
    for (int i = 0; i < kRandomCandidates; ++i) pool.push_back(d.RandomVector());
  }
  const double r = static_cast<double>(radius);
  const double rates[] = {1.0, 2.0, local ? std::max(1.0, 0.5 * r) : 4.0, local ? r : 0.25 * n, local ? r : 0.5 * n};
  for (int i = 0; i < kMutationCandidates; ++i) {
    double rate = std::min(1.0, rates[i % 5] / n);
    DecisionVector v = inc;
    bool changed = false;
    for (int64_t s : flippable) {
      if (u(d.rng()) < rate) {
        Flip(d, v, s);
        changed = true;
      }
    }
    if (!changed) Flip(d, v, flippable[std::uniform_int_distribution<size_t>(0, flippable.size() - 1)(d.rng())]);
    pool.push_back(v);
  }
  size_t helping = 0;
  std::vector<int64_t> ranked = RankSites(d, *g.f, pred, helping);
  if (ranked.empty()) return pool;
  // The top-k predicted gains flipped together, k = 1, 2, 4, ...; random subsets of them.
  for (size_t k = 1; k <= helping; k *= 2) {
    DecisionVector v = inc;
    for (size_t j = 0; j < k; ++j) Flip(d, v, ranked[j]);
    pool.push_back(v);
  }
  for (int i = 0; i < kSubsetCandidates && helping > 1; ++i) {
    DecisionVector v = inc;
    for (size_t j = 0; j < helping; ++j) {
      if (u(d.rng()) < 0.5) Flip(d, v, ranked[j]);
    }
    pool.push_back(v);
  }
  // One top-ranked site (among the top alpha) with its k-hop neighbourhood mutated.
  size_t top = std::max<size_t>(1, static_cast<size_t>(std::ceil(d.options().top_fraction * ranked.size())));
  for (int i = 0; i < kNeighbourCandidates; ++i) {
    int64_t s = ranked[std::uniform_int_distribution<size_t>(0, top - 1)(d.rng())];
    DecisionVector v = inc;
    Flip(d, v, s);
    for (int64_t t : NeighbourSites(*g.f, g.adj, g.sites_at, g.f->site_nodes[s], d.options().neighbourhood)) {
      if (t != s && u(d.rng()) < 0.5) v[t] = std::uniform_int_distribution<int>(0, d.Choices(t) - 1)(d.rng());
    }
    pool.push_back(v);
  }
  if (local) {
    std::erase_if(pool, [&](const DecisionVector& v) { return Hamming(v, inc) > radius; });
  }
  return pool;
}

}  // namespace

absl::Status RunGuided(SearchDriver& d) {
  absl::StatusOr<AdvantageModel> model = AdvantageModel::Load(d.options().model_path);
  if (!model.ok()) return model.status();
  const SearchSpace& space = d.space();
  const GraphFeatures& f = space.features;
  if (static_cast<int64_t>(f.site_nodes.size()) != space.size()) {
    return absl::InvalidArgumentError("guided search: the graph features do not match the decision sites");
  }
  GuidedGraph g{&f, std::vector<std::vector<int64_t>>(f.node_count()),
                std::vector<std::vector<int64_t>>(f.node_count())};
  for (int64_t e = 0; e < f.edge_count(); ++e) {
    int64_t a = f.edge_index[e], b = f.edge_index[f.edge_count() + e];
    g.adj[a].push_back(b);
    g.adj[b].push_back(a);
  }
  std::vector<int> choices;
  for (int64_t s = 0; s < space.size(); ++s) {
    if (f.site_nodes[s] >= 0) g.sites_at[f.site_nodes[s]].push_back(s);
    choices.push_back(d.Choices(s));
  }
  GraphInput input = MakeGraphInput(f, space.defaults);
  Eigen::VectorXf pred = model->Predict(input);
  std::vector<float> site_gain(space.size(), 0.0f);
  for (int64_t s = 0; s < space.size(); ++s) {
    if (f.site_nodes[s] >= 0) site_gain[s] = pred(f.site_nodes[s]);
  }
  GuidedSurrogate surrogate(choices, space.defaults, site_gain);
  const double base = d.baseline_cost();
  std::vector<DecisionVector> evaluated;  // finite-cost configurations, in order
  std::set<DecisionVector> recorded;
  auto record = [&](const DecisionVector& v, double cost) {
    if (!std::isfinite(cost) || !(cost > 0) || !(base > 0) || !recorded.insert(v).second) return;
    surrogate.Add(v, std::log(cost / base));
    evaluated.push_back(v);
  };
  record(space.defaults, base);
  DecisionVector start = d.Start();
  record(start, d.Evaluate(start));
  surrogate.Fit();
  DecisionVector predicted_at = space.defaults;
  const int64_t sites = space.size();
  // From a random start the whole space stays open (radius = every site).
  TrustRegion region{d.options().start_random ? sites : std::min(sites, kTrustStart)};
  DecisionVector last_inc = start;
  int64_t remaining_mark = d.remaining();
  while (!d.exhausted()) {
    // The incumbent: the evaluated configuration the surrogate's posterior mean ranks best.
    DecisionVector inc = start;
    double inc_score = INFINITY;
    for (const DecisionVector& v : evaluated) {
      double sc = surrogate.Score(surrogate.mean(), v);
      if (sc < inc_score) {
        inc_score = sc;
        inc = v;
      }
    }
    if (inc != predicted_at) {
      SetDecisions(input, inc);
      pred = model->Predict(input);
      predicted_at = inc;
    }
    if (!d.options().start_random) region.Update(inc != last_inc, remaining_mark - d.remaining(), sites);
    last_inc = inc;
    remaining_mark = d.remaining();
    std::vector<DecisionVector> pool = Candidates(d, g, inc, pred, region.radius);
    std::vector<DecisionVector> batch;
    std::set<DecisionVector> chosen;
    for (int i = 0; i < d.batch_size(); ++i) {
      Eigen::VectorXd w = surrogate.Sample(d.rng());
      // Trust-region moves: the sites the sample most wants changed (exploration while the
      // posterior is wide, exploitation of the incumbent as it narrows).
      std::vector<DecisionVector> moves = surrogate.ImprovingMoves(
          w, inc, std::min(kMaxTrustFlips, static_cast<size_t>(std::max<int64_t>(1, region.radius))));
      const DecisionVector* pick = nullptr;
      double pick_score = INFINITY;
      for (const std::vector<DecisionVector>* set : {&pool, &moves}) {
        for (const DecisionVector& v : *set) {
          if (d.Known(v) >= 0 || chosen.count(v)) continue;
          double sc = surrogate.Score(w, v);
          if (!pick || sc < pick_score) {
            pick = &v;
            pick_score = sc;
          }
        }
      }
      batch.push_back(pick ? *pick : d.RandomVector());
      chosen.insert(batch.back());
    }
    std::vector<double> costs = d.Evaluate(batch);
    for (size_t i = 0; i < batch.size(); ++i) record(batch[i], costs[i]);
    surrogate.Fit();
  }
  return absl::OkStatus();
}

}  // namespace hlox
