// Guided search with a learned local advantage function: predict, for the current
// configuration, how much flipping each site would change the cost (negative: the flip is
// predicted to make it faster); rank sites by predicted gain, those predicted to help first and
// then by magnitude; pick a site among the top alpha fraction; flip it, mutate its k-hop
// neighbourhood of sites, and with some proposals also flip further top-ranked sites that are
// predicted to help (so a poor random start is repaired in few evaluations); keep the best
// configuration seen.
#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "agent/advantage_model.h"
#include "agent/search_driver.h"

namespace hlox {
namespace {

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

}  // namespace

absl::Status RunGuided(SearchDriver& d) {
  absl::StatusOr<AdvantageModel> model = AdvantageModel::Load(d.options().model_path);
  if (!model.ok()) return model.status();
  const SearchSpace& space = d.space();
  const GraphFeatures& f = space.features;
  std::vector<std::vector<int64_t>> adj(f.node_count()), sites_at(f.node_count());
  for (int64_t e = 0; e < f.edge_count(); ++e) {
    int64_t a = f.edge_index[e], b = f.edge_index[f.edge_count() + e];
    adj[a].push_back(b);
    adj[b].push_back(a);
  }
  for (int64_t s = 0; s < space.size(); ++s) {
    if (f.site_nodes[s] >= 0) sites_at[f.site_nodes[s]].push_back(s);
  }
  DecisionVector cur = d.Start();
  double cur_cost = d.Evaluate(cur);
  GraphInput input = MakeGraphInput(f, cur);
  std::uniform_real_distribution<double> u(0, 1);
  double alpha = d.options().top_fraction;
  int64_t evaluated = -1;
  while (!d.exhausted()) {
    SetDecisions(input, cur);
    Eigen::VectorXf pred = model->Predict(input);
    std::vector<int64_t> ranked;
    for (int64_t s = 0; s < space.size(); ++s) {
      if (f.site_nodes[s] >= 0 && d.Choices(s) > 1) ranked.push_back(s);
    }
    if (ranked.empty()) break;
    // Predicted gains (pred < 0) first, largest gain first; then the rest by magnitude (a
    // large predicted change is the model's least certain region worth probing).
    std::stable_sort(ranked.begin(), ranked.end(), [&](int64_t a, int64_t b) {
      float pa = pred(f.site_nodes[a]), pb = pred(f.site_nodes[b]);
      if ((pa < 0) != (pb < 0)) return pa < 0;
      return pa < 0 ? pa < pb : std::fabs(pa) > std::fabs(pb);
    });
    size_t helping = 0;
    while (helping < ranked.size() && pred(f.site_nodes[ranked[helping]]) < 0) ++helping;
    // When every proposal from the top alpha was seen already, widen alpha (up to all sites).
    int64_t now = d.remaining();
    if (now == evaluated) alpha = std::min(1.0, alpha * 2);
    evaluated = now;
    size_t top = std::max<size_t>(1, static_cast<size_t>(std::ceil(alpha * ranked.size())));
    std::vector<DecisionVector> props;
    for (int i = 0; i < d.batch_size(); ++i) {
      int64_t s = ranked[std::uniform_int_distribution<size_t>(0, top - 1)(d.rng())];
      DecisionVector v = cur;
      int c = std::uniform_int_distribution<int>(0, d.Choices(s) - 2)(d.rng());
      v[s] = c >= v[s] ? c + 1 : c;
      for (int64_t t : NeighbourSites(f, adj, sites_at, f.site_nodes[s], d.options().neighbourhood)) {
        if (t != s && u(d.rng()) < 0.5) v[t] = std::uniform_int_distribution<int>(0, d.Choices(t) - 1)(d.rng());
      }
      // Every other proposal also takes a geometric number of further predicted gains.
      if (i % 2 == 1 && helping > 1) {
        for (size_t extra = 0; extra < helping && u(d.rng()) < 0.7; ++extra) {
          int64_t t = ranked[std::uniform_int_distribution<size_t>(0, helping - 1)(d.rng())];
          int ct = std::uniform_int_distribution<int>(0, d.Choices(t) - 2)(d.rng());
          v[t] = ct >= cur[t] ? ct + 1 : ct;
        }
      }
      props.push_back(v);
    }
    std::vector<double> costs = d.Evaluate(props);
    for (size_t i = 0; i < props.size(); ++i) {
      if (costs[i] < cur_cost) {
        cur = props[i];
        cur_cost = costs[i];
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace hlox
