// Evolutionary search: a population seeded with the start vector, one uniform setting per
// decision kind (SearchDriver::RuleSweeps, up to half the population: a kind whose sites pay
// only together, such as staging every kernel of a chain, is otherwise out of reach of
// one-site mutations) and random vectors;
// each generation breeds children by tournament selection, uniform crossover and per-site
// mutation, and keeps the best of parents and children. Noise-aware (search.h), members are
// ranked by the driver's current scores (pessimistic estimates), and each generation re-measures
// the least-measured of the top quarter (noisy-EA resampling), so an elite kept by one lucky sample is demoted.
// Surrogate-assisted (options.surrogate_children): a Bayesian linear model of log cost over the
// site decisions (guided_surrogate.h) is refit on every newly measured configuration, and that
// many children per generation are not bred but proposed by it: a Thompson sample of the model
// names the changes of the best member it expects to pay (1, 2, 4 or 8 sites), and the unseen
// proposal it scores best is evaluated. Breeding explores; the model pools what hundreds of
// noisy measurements say about each site, which single comparisons between members cannot.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "agent/guided_surrogate.h"
#include "agent/search_driver.h"

namespace hlox {

namespace {
constexpr int kResamplePerGeneration = 2;  // elites re-measured per generation
constexpr int kMaxElitesSamples = 12;      // an elite with this many measurements is left alone
constexpr size_t kMaxModelFlips = 8;       // sites a surrogate proposal changes at most
}  // namespace

void RunEvolution(SearchDriver& d) {
  struct Member {
    DecisionVector v;
    double cost;
  };
  int pop_size = std::max(4, d.options().population);
  double rate = d.options().mutation_rate > 0 ? d.options().mutation_rate : 1.0 / std::max<int64_t>(1, d.space().size());
  std::vector<DecisionVector> init{d.Start()};
  for (DecisionVector& v : d.RuleSweeps(static_cast<size_t>(pop_size / 2))) init.push_back(std::move(v));
  while (static_cast<int>(init.size()) < pop_size) init.push_back(d.RandomVector());
  std::vector<double> costs = d.Evaluate(init);
  std::vector<Member> pop;
  for (size_t i = 0; i < init.size(); ++i) pop.push_back({init[i], costs[i]});
  // The surrogate learns from each configuration's first estimate (log of its ratio to the
  // default's cost at the time).
  const int model_children = std::clamp(d.options().surrogate_children, 0, pop_size);
  std::optional<GuidedSurrogate> model;
  std::set<DecisionVector> modelled;
  if (model_children > 0) {
    std::vector<int> choices;
    for (int64_t s = 0; s < d.space().size(); ++s) choices.push_back(d.Choices(s));
    model.emplace(choices, d.space().defaults, std::vector<float>(choices.size(), 0.0f));
  }
  auto learn = [&](const std::vector<DecisionVector>& vs, const std::vector<double>& cs) {
    if (!model) return;
    const double base = d.baseline_cost();
    for (size_t i = 0; i < vs.size(); ++i) {
      if (!std::isfinite(cs[i]) || !(cs[i] > 0) || !(base > 0) || !modelled.insert(vs[i]).second) continue;
      model->Add(vs[i], std::log(cs[i] / base));
    }
    model->Fit();
  };
  learn(init, costs);
  // Noise-aware: every member's cost is the driver's latest score (re-measurements move it).
  auto refresh = [&] {
    if (!d.noise_aware()) return;
    for (Member& m : pop) {
      const double k = d.Score(m.v);
      m.cost = k >= 0 ? k : std::numeric_limits<double>::infinity();
    }
  };
  std::uniform_real_distribution<double> u(0, 1);
  auto tournament = [&]() -> const Member& {
    const Member& a = pop[std::uniform_int_distribution<size_t>(0, pop.size() - 1)(d.rng())];
    const Member& b = pop[std::uniform_int_distribution<size_t>(0, pop.size() - 1)(d.rng())];
    return a.cost <= b.cost ? a : b;
  };
  auto cheaper = [](const Member& a, const Member& b) { return a.cost < b.cost; };
  while (!d.exhausted()) {
    refresh();
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
    if (model) {
      const Member& inc = *std::min_element(pop.begin(), pop.end(), cheaper);
      std::set<DecisionVector> taken(children.begin(), children.end() - model_children);
      for (int i = 0; i < model_children; ++i) {
        const Eigen::VectorXd w = model->Sample(d.rng());
        const DecisionVector* pick = nullptr;
        double pick_score = std::numeric_limits<double>::infinity();
        const std::vector<DecisionVector> moves = model->ImprovingMoves(w, inc.v, kMaxModelFlips);
        for (const DecisionVector& v : moves) {
          if (d.Known(v) >= 0 || taken.count(v)) continue;
          const double sc = model->Score(w, v);
          if (sc < pick_score) pick = &v, pick_score = sc;
        }
        // No unseen change the sample expects to pay: the bred child stays.
        DecisionVector& slot = children[children.size() - 1 - i];
        if (pick) slot = *pick;
        taken.insert(slot);
      }
    }
    std::vector<double> child_costs = d.Evaluate(children);
    learn(children, child_costs);
    for (size_t i = 0; i < children.size(); ++i) pop.push_back({children[i], child_costs[i]});
    refresh();
    std::stable_sort(pop.begin(), pop.end(), cheaper);
    pop.erase(std::unique(pop.begin(), pop.end(), [](const Member& a, const Member& b) { return a.v == b.v; }),
              pop.end());
    if (static_cast<int>(pop.size()) > pop_size) pop.resize(pop_size);
    if (!d.noise_aware() || d.exhausted()) continue;
    // Resampling: the least-measured valid members of the top quarter get one more measurement.
    std::vector<const Member*> elites;
    const size_t top = std::min(pop.size(), static_cast<size_t>(std::max(2, pop_size / 4)));
    for (size_t i = 0; i < top; ++i) {
      if (pop[i].cost < std::numeric_limits<double>::infinity() && pop[i].v != d.space().defaults &&
          d.Samples(pop[i].v) < kMaxElitesSamples) {
        elites.push_back(&pop[i]);
      }
    }
    std::stable_sort(elites.begin(), elites.end(),
                     [&](const Member* a, const Member* b) { return d.Samples(a->v) < d.Samples(b->v); });
    std::vector<DecisionVector> again;
    for (size_t i = 0; i < elites.size() && static_cast<int>(again.size()) < kResamplePerGeneration; ++i) {
      again.push_back(elites[i]->v);
    }
    if (!again.empty()) d.Remeasure(again);
  }
}

}  // namespace hlox
