// Beam search over the sequential decision points, HloEnv's setting: sites are decided one at a
// time in site order; a partial assignment is completed with the default policy to be
// evaluated, and the best `beam_width` prefixes survive each step.
#include <algorithm>
#include <numeric>

#include "agent/search_driver.h"

namespace hlox {

void RunBeam(SearchDriver& d) {
  struct Node {
    DecisionVector v;
    double cost;
  };
  DecisionVector start = d.Start();
  std::vector<Node> beam{{start, d.Evaluate(start)}};
  int width = std::max(1, d.options().beam_width);
  for (int64_t site = 0; site < d.space().size() && !d.exhausted(); ++site) {
    std::vector<DecisionVector> expansions;
    for (const Node& n : beam) {
      for (int c = 0; c < d.Choices(site); ++c) {
        DecisionVector v = n.v;
        v[site] = c;
        expansions.push_back(v);
      }
    }
    std::vector<double> costs = d.Evaluate(expansions);
    std::vector<Node> next;
    for (size_t i = 0; i < expansions.size(); ++i) next.push_back({expansions[i], costs[i]});
    std::stable_sort(next.begin(), next.end(), [](const Node& a, const Node& b) { return a.cost < b.cost; });
    // Drop duplicates (a choice equal to the prefix's own value repeats the parent).
    std::vector<Node> unique;
    for (const Node& n : next) {
      bool dup = std::any_of(unique.begin(), unique.end(), [&](const Node& u) { return u.v == n.v; });
      if (!dup) unique.push_back(n);
      if (static_cast<int>(unique.size()) == width) break;
    }
    beam = unique;
  }
}

}  // namespace hlox
