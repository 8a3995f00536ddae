// Evolutionary search: a population seeded with the start vector and random vectors;
// each generation breeds children by tournament selection, uniform crossover and per-site
// mutation, and keeps the best of parents and children.
#include <algorithm>

#include "agent/search_driver.h"

namespace hlox {

void RunEvolution(SearchDriver& d) {
  struct Member {
    DecisionVector v;
    double cost;
  };
  int pop_size = std::max(4, d.options().population);
  double rate = d.options().mutation_rate > 0 ? d.options().mutation_rate : 1.0 / std::max<int64_t>(1, d.space().size());
  std::vector<DecisionVector> init{d.Start()};
  while (static_cast<int>(init.size()) < pop_size) init.push_back(d.RandomVector());
  std::vector<double> costs = d.Evaluate(init);
  std::vector<Member> pop;
  for (size_t i = 0; i < init.size(); ++i) pop.push_back({init[i], costs[i]});
  std::uniform_real_distribution<double> u(0, 1);
  auto tournament = [&]() -> const Member& {
    const Member& a = pop[std::uniform_int_distribution<size_t>(0, pop.size() - 1)(d.rng())];
    const Member& b = pop[std::uniform_int_distribution<size_t>(0, pop.size() - 1)(d.rng())];
    return a.cost <= b.cost ? a : b;
  };
  while (!d.exhausted()) {
    std::vector<DecisionVector> children;
    for (int i = 0; i < pop_size; ++i) {
      const Member& p1 = tournament();
      const Member& p2 = tournament();
      DecisionVector child = p1.v;
      for (int64_t s = 0; s < d.space().size(); ++s) {
        if (u(d.rng()) < 0.5) child[s] = p2.v[s];
        if (u(d.rng()) < rate) child[s] = std::uniform_int_distribution<int>(0, d.Choices(s) - 1)(d.rng());
      }
      children.push_back(child);
    }
    std::vector<double> child_costs = d.Evaluate(children);
    for (size_t i = 0; i < children.size(); ++i) pop.push_back({children[i], child_costs[i]});
    std::stable_sort(pop.begin(), pop.end(), [](const Member& a, const Member& b) { return a.cost < b.cost; });
    pop.erase(std::unique(pop.begin(), pop.end(), [](const Member& a, const Member& b) { return a.v == b.v; }),
              pop.end());
    if (static_cast<int>(pop.size()) > pop_size) pop.resize(pop_size);
  }
}

}  // namespace hlox
