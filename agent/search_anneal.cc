// Simulated annealing and Gibbs sampling. Temperatures are relative to the baseline cost, so a
// move that is 1% slower at T=0.01 is accepted with probability 1/e.
#include <cmath>
#include <limits>

#include "agent/search_driver.h"

namespace hlox {

namespace {
double Relative(const SearchDriver& d, double delta) {
  double base = std::isfinite(d.baseline_cost()) && d.baseline_cost() > 0 ? d.baseline_cost() : 1.0;
  return delta / base;
}
}  // namespace

// One random single-site change per step, Metropolis acceptance, temperature cooling
// geometrically to 1% of its start over the budget.
void RunAnneal(SearchDriver& d) {
  DecisionVector cur = d.Start();
  double cur_cost = d.Evaluate(cur);
  double t0 = std::max(1e-6, d.options().temperature);
  int64_t total = std::max<int64_t>(1, d.remaining());
  std::uniform_real_distribution<double> u(0, 1);
  while (!d.exhausted()) {
    double progress = 1.0 - static_cast<double>(d.remaining()) / total;
    double t = t0 * std::pow(0.01, progress);
    std::vector<DecisionVector> props;
    for (int i = 0; i < d.batch_size(); ++i) {
      DecisionVector v = cur;
      int64_t s = std::uniform_int_distribution<int64_t>(0, d.space().size() - 1)(d.rng());
      if (d.Choices(s) < 2) continue;
      int c = std::uniform_int_distribution<int>(0, d.Choices(s) - 2)(d.rng());
      v[s] = c >= v[s] ? c + 1 : c;
      props.push_back(v);
    }
    if (props.empty()) break;
    std::vector<double> costs = d.Evaluate(props);
    for (size_t i = 0; i < props.size(); ++i) {
      double delta = Relative(d, costs[i] - cur_cost);
      if (std::isfinite(costs[i]) && (delta <= 0 || u(d.rng()) < std::exp(-delta / t))) {
        cur = props[i];
        cur_cost = costs[i];
      }
    }
  }
}

// Gibbs sampling at temperature tau: pick a site, evaluate every choice there with the rest
// fixed, and sample the new choice with probability proportional to exp(-cost/tau). Every
// (configuration, cost) pair lands in the driver's log, which train-advantage learns from.
void RunGibbs(SearchDriver& d) {
  DecisionVector cur = d.Start();
  d.Evaluate(cur);
  double tau = std::max(1e-6, d.options().temperature);
  std::uniform_real_distribution<double> u(0, 1);
  while (!d.exhausted()) {
    int64_t s = std::uniform_int_distribution<int64_t>(0, d.space().size() - 1)(d.rng());
    std::vector<DecisionVector> options;
    for (int c = 0; c < d.Choices(s); ++c) {
      DecisionVector v = cur;
      v[s] = c;
      options.push_back(v);
    }
    std::vector<double> costs = d.Evaluate(options);
    double best = std::numeric_limits<double>::infinity();
    for (double c : costs) best = std::min(best, c);
    if (!std::isfinite(best)) continue;
    std::vector<double> w;
    double total = 0;
    for (double c : costs) {
      double p = std::isfinite(c) ? std::exp(-Relative(d, c - best) / tau) : 0.0;
      w.push_back(p);
      total += p;
    }
    double r = u(d.rng()) * total;
    for (size_t i = 0; i < w.size(); ++i) {
      r -= w[i];
      if (r <= 0) {
        cur = options[i];
        break;
      }
    }
  }
}

}  // namespace hlox
