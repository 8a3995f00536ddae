// Random search and greedy coordinate descent.
#include <limits>

#include "agent/search_driver.h"

namespace hlox {

// Uniformly random vectors, a batch at a time.
void RunRandom(SearchDriver& d) {
  while (!d.exhausted()) {
    std::vector<DecisionVector> batch;
    for (int i = 0; i < d.batch_size(); ++i) batch.push_back(d.RandomVector());
    d.Evaluate(batch);
  }
}

// Each round evaluates every single-site change of the current vector and moves to the best
// one if it improves; stops at a local optimum (then restarts from a random vector).
void RunGreedy(SearchDriver& d) {
  DecisionVector cur = d.Start();
  double cur_cost = d.Evaluate(cur);
  while (!d.exhausted()) {
    std::vector<DecisionVector> moves;
    for (int64_t s = 0; s < d.space().size(); ++s) {
      for (int c = 0; c < d.Choices(s); ++c) {
        if (c == cur[s]) continue;
        DecisionVector v = cur;
        v[s] = c;
        moves.push_back(v);
      }
    }
    std::vector<double> costs = d.Evaluate(moves);
    size_t best = 0;
    for (size_t i = 1; i < costs.size(); ++i) {
      if (costs[i] < costs[best]) best = i;
    }
    if (!costs.empty() && costs[best] < cur_cost) {
      cur = moves[best];
      cur_cost = costs[best];
    } else {
      cur = d.RandomVector();
      cur_cost = d.Evaluate(cur);
    }
  }
}

}  // namespace hlox
