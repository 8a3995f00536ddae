// REINFORCE over pass sequences.
#include "agent/pass_order_agent.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/status_macros.h"
#include "passes/module_util.h"
#include "passes/pass_order.h"
#include "passes/pipeline.h"

namespace hlox {

namespace {

int MenuIndex(const std::vector<std::string>& menu, const std::string& item) {
  return static_cast<int>(std::find(menu.begin(), menu.end(), item) - menu.begin());
}

}  // namespace

absl::StatusOr<PassOrderResult> SearchPassOrder(const Module& module, const PassOrderOptions& o) {
  const std::vector<std::string> menu = PassOrderMenu();
  const int actions = static_cast<int>(menu.size());
  PassOrderResult result;
  HLOX_ASSIGN_OR_RETURN(result.default_sequence, DefaultPassSequence(module));
  // Room for the default sequence and a few more passes after it.
  const int max_steps = o.start_default
                            ? std::max(o.max_steps, static_cast<int>(result.default_sequence.size()) + 4)
                            : o.max_steps;
  PassOrderEnv env(module, max_steps);
  result.initial_ops = env.op_count();
  result.best_ops = result.initial_ops;
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> def, RunPipeline(module, "default", {}));
  result.default_ops = OpCount(*def);
  std::vector<std::vector<double>> logits(max_steps, std::vector<double>(actions, 0.0));
  std::vector<int> forced;  // episode 0's actions when starting from the default
  if (o.start_default) {
    for (size_t t = 0; t < result.default_sequence.size(); ++t) {
      int a = MenuIndex(menu, result.default_sequence[t]);
      logits[t][a] += o.default_bias;
      forced.push_back(a);
    }
    forced.push_back(actions - 1);  // then "stop"
  }
  std::mt19937_64 rng(o.seed * 7919 + 3);
  double baseline = 0;
  for (int ep = 0; ep < o.episodes; ++ep) {
    env.Reset();
    std::vector<std::pair<int, int>> taken;  // (step, action)
    double total = 0;
    for (int t = 0; t < max_steps && !env.done(); ++t) {
      std::vector<double> p(actions);
      double mx = *std::max_element(logits[t].begin(), logits[t].end()), sum = 0;
      for (int a = 0; a < actions; ++a) sum += p[a] = std::exp(logits[t][a] - mx);
      for (double& v : p) v /= sum;
      int a = ep == 0 && t < static_cast<int>(forced.size())
                  ? forced[t]
                  : static_cast<int>(std::discrete_distribution<int>(p.begin(), p.end())(rng));
      HLOX_ASSIGN_OR_RETURN(PassOrderStep step, env.Step(a));
      total += step.reward;
      taken.push_back({t, a});
    }
    int64_t ops = env.op_count();
    if (result.best_sequence.empty() || ops < result.best_ops) {
      result.best_ops = ops;
      result.best_sequence.clear();
      for (int a : env.history()) result.best_sequence.push_back(menu[a]);
    }
    result.best_so_far.push_back(result.best_ops);
    // REINFORCE: reward relative to the initial size so the step size is graph-independent.
    double r = total / std::max<int64_t>(1, result.initial_ops);
    double adv = r - baseline;
    baseline = ep == 0 ? r : 0.9 * baseline + 0.1 * r;
    for (auto [t, a] : taken) {
      double mx = *std::max_element(logits[t].begin(), logits[t].end()), sum = 0;
      std::vector<double> p(actions);
      for (int b = 0; b < actions; ++b) sum += p[b] = std::exp(logits[t][b] - mx);
      for (int b = 0; b < actions; ++b) logits[t][b] += o.learning_rate * adv * ((b == a) - p[b] / sum);
    }
  }
  return result;
}

}  // namespace hlox
