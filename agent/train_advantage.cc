// Building labelled examples from logs and the prioritized training loop.
#include "agent/train_advantage.h"

#include <cmath>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "agent/search_log.h"
#include "agent/search_space.h"
#include "common/status_macros.h"
#include "cost/stats.h"
#include "ir/parser.h"

namespace hlox {
namespace {

struct Example {
  GraphInput input;
  std::vector<int64_t> nodes;
  std::vector<float> labels;
  std::vector<double> weights;  // sampling priority
};

// Examples of one log: one per logged configuration that has single-site neighbours in the log.
absl::Status AddExamples(const std::string& path, std::vector<Example>& out, int64_t& samples) {
  HLOX_ASSIGN_OR_RETURN(SearchLog log, ReadSearchLog(path));
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModuleFile(log.module_path));
  HLOX_ASSIGN_OR_RETURN(SearchSpace space, BuildSearchSpace(*module, log.pipeline, log.key));
  if (space.key != log.key || space.size() != log.sites) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": decision point ", log.key, " with ", log.sites,
                                                   " sites no longer matches the module"));
  }
  // A configuration measured more than once (noise-aware searches re-measure, the default is
  // re-measured throughout) gets the median of its logged costs.
  std::map<DecisionVector, std::vector<double>> measured;
  for (const LogEntry& e : log.entries) {
    if (std::isfinite(e.cost)) measured[e.decisions].push_back(e.cost);
  }
  std::map<DecisionVector, double> cost;
  for (auto& [config, costs] : measured) cost[config] = Median(std::move(costs));
  auto base_it = cost.find(space.defaults);
  double base = base_it != cost.end() ? base_it->second : (cost.empty() ? 1.0 : cost.begin()->second);
  struct Raw {
    const DecisionVector* config;
    int64_t site;
    double advantage;
  };
  std::vector<Raw> raw;
  for (const auto& [config, c] : cost) {
    for (int64_t s = 0; s < space.size(); ++s) {
      DecisionVector alt = config;
      for (int choice = 0; choice < static_cast<int>(space.sites[s].choices.size()); ++choice) {
        if (choice == config[s]) continue;
        alt[s] = choice;
        auto it = cost.find(alt);
        if (it != cost.end()) raw.push_back({&config, s, (it->second - c) / base});
      }
    }
  }
  std::vector<double> adv;
  for (const Raw& r : raw) adv.push_back(r.advantage);
  std::vector<float> scaled = ScaleAdvantages(adv);
  std::map<const DecisionVector*, size_t> example_of;
  for (size_t i = 0; i < raw.size(); ++i) {
    int64_t node = space.features.site_nodes[raw[i].site];
    if (node < 0) continue;
    auto [it, fresh] = example_of.emplace(raw[i].config, out.size());
    if (fresh) out.push_back({MakeGraphInput(space.features, *raw[i].config), {}, {}, {}});
    Example& ex = out[it->second];
    ex.nodes.push_back(node);
    ex.labels.push_back(scaled[i]);
    ex.weights.push_back(std::fabs(scaled[i]) + 0.1);
    ++samples;
  }
  return absl::OkStatus();
}

double Epoch(std::vector<Example>& examples, AdvantageModel& model, const TrainOptions& o, std::mt19937_64& rng,
             bool train) {
  std::vector<size_t> order(examples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  double total = 0;
  for (size_t idx : order) {
    Example& ex = examples[idx];
    std::discrete_distribution<size_t> pick(ex.weights.begin(), ex.weights.end());
    std::vector<int64_t> nodes;
    std::vector<float> labels;
    size_t n = std::min<size_t>(o.batch_nodes, ex.nodes.size() * 2);
    for (size_t k = 0; k < n; ++k) {
      size_t j = pick(rng);
      nodes.push_back(ex.nodes[j]);
      labels.push_back(ex.labels[j]);
    }
    if (train) {
      total += model.TrainStep(ex.input, nodes, labels, o.learning_rate);
    } else {
      Eigen::VectorXf y = model.Predict(ex.input);
      double l = 0;
      for (size_t k = 0; k < nodes.size(); ++k) l += std::pow(y(nodes[k]) - labels[k], 2);
      total += l / std::max<size_t>(1, nodes.size());
    }
  }
  return examples.empty() ? 0 : total / examples.size();
}

// Ranks with ties averaged.
std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && v[order[j]] == v[order[i]]) ++j;
    for (size_t k = i; k < j; ++k) r[order[k]] = 0.5 * (i + j - 1);
    i = j;
  }
  return r;
}

double Pearson(const std::vector<double>& a, const std::vector<double>& b) {
  double n = static_cast<double>(a.size()), ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += a[i] / n;
    mb += b[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0;
}

}  // namespace

absl::StatusOr<std::vector<RankReport>> EvaluateAdvantageModel(const std::vector<std::string>& log_paths,
                                                               const AdvantageModel& model) {
  std::vector<RankReport> out;
  for (const std::string& p : log_paths) {
    std::vector<Example> examples;
    RankReport r;
    r.log = p;
    HLOX_RETURN_IF_ERROR(AddExamples(p, examples, r.samples));
    std::vector<double> pred, label;
    for (const Example& ex : examples) {
      Eigen::VectorXf y = model.Predict(ex.input);
      for (size_t k = 0; k < ex.nodes.size(); ++k) {
        pred.push_back(y(ex.nodes[k]));
        label.push_back(ex.labels[k]);
      }
    }
    if (!label.empty()) {
      r.spearman = Pearson(Ranks(pred), Ranks(label));
      std::vector<double> mags;
      for (double l : label) mags.push_back(std::fabs(l));
      std::nth_element(mags.begin(), mags.begin() + mags.size() / 2, mags.end());
      double cut = mags[mags.size() / 2];
      int64_t big = 0, right = 0;
      for (size_t i = 0; i < label.size(); ++i) {
        if (std::fabs(label[i]) < cut || label[i] == 0) continue;
        ++big;
        right += (pred[i] < 0) == (label[i] < 0);
      }
      r.sign_agreement = big > 0 ? static_cast<double>(right) / big : 0;
    }
    out.push_back(r);
  }
  return out;
}

absl::StatusOr<TrainReport> TrainAdvantageModel(const std::vector<std::string>& log_paths,
                                                const TrainOptions& options, AdvantageModel& model) {
  std::vector<Example> examples;
  TrainReport report;
  for (const std::string& p : log_paths) {
    HLOX_RETURN_IF_ERROR(AddExamples(p, examples, report.samples));
    ++report.graphs;
  }
  if (examples.empty()) {
    return absl::InvalidArgumentError("the logs hold no pairs of configurations differing at one site "
                                      "(record them with hlox search --algo gibbs --out DIR)");
  }
  std::mt19937_64 rng(options.seed + 99);
  report.initial_loss = Epoch(examples, model, options, rng, false);
  for (int e = 0; e < options.epochs; ++e) Epoch(examples, model, options, rng, true);
  report.final_loss = Epoch(examples, model, options, rng, false);
  return report;
}

}  // namespace hlox
