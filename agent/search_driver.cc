// SearchDriver and the algorithm dispatch.
#include "agent/search_driver.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cost/stats.h"

namespace hlox {

SearchDriver::SearchDriver(const SearchSpace& space, Evaluator& evaluator, const SearchOptions& options)
    : space_(space), evaluator_(evaluator), options_(options), rng_(options.seed * 0x9E3779B97F4A7C15ull + 1) {
  result_.best = space.defaults;
  result_.best_cost = std::numeric_limits<double>::infinity();
  // The baseline: the default policy is always the first evaluation.
  result_.default_cost = std::numeric_limits<double>::infinity();
  double c = Evaluate(space.defaults);
  result_.default_cost = c;
  if (std::isfinite(c)) result_.default_costs.push_back(c);
}

void SearchDriver::AddDefaultMeasurement(const ResultRecord& record) {
  since_default_ = 0;
  ++default_runs_;
  const double c = RecordCost(record, options_.objective);
  if (!std::isfinite(c)) return;
  result_.default_costs.push_back(c);
  result_.default_cost = Median(result_.default_costs);
  seen_[space_.defaults] = result_.default_cost;
  // While the default is still the best configuration, its cost is the reference, not its
  // single luckiest sample.
  if (result_.best == space_.defaults) result_.best_cost = result_.default_cost;
}

int SearchDriver::batch_size() const {
  return options_.batch > 0 ? options_.batch : std::max(1, evaluator_.parallelism());
}

double SearchDriver::Known(const DecisionVector& v) const {
  auto it = seen_.find(v);
  return it == seen_.end() ? -1 : it->second;
}

std::vector<double> SearchDriver::Evaluate(const std::vector<DecisionVector>& batch) {
  std::vector<double> costs(batch.size(), std::numeric_limits<double>::infinity());
  std::vector<size_t> todo;
  std::vector<PipelineDecisions> jobs;
  for (size_t i = 0; i < batch.size(); ++i) {
    double k = Known(batch[i]);
    if (k >= 0) {
      costs[i] = k;
    } else if (static_cast<int64_t>(todo.size()) < remaining()) {
      todo.push_back(i);
      jobs.push_back(space_.Decisions(batch[i]));
    }
  }
  if (jobs.empty()) {
    ++stalls_;
    return costs;
  }
  stalls_ = 0;
  // The default rides along in the same batch, so it sees the same machine state as the
  // candidates: once in the first round (its first run was cold), then every default_every.
  const bool with_default = options_.default_every > 0 && result_.evaluations > 0 &&
                            options_.objective == Objective::kMeasured &&
                            (default_runs_ == 0 || since_default_ >= options_.default_every);
  if (with_default) jobs.push_back(space_.Decisions(space_.defaults));
  std::vector<ResultRecord> records = evaluator_.EvaluateFresh(jobs, with_default ? 1 : 0);
  if (with_default) {
    if (records.size() == jobs.size()) AddDefaultMeasurement(records.back());
    records.resize(todo.size());
  }
  since_default_ += static_cast<int64_t>(todo.size());
  for (size_t j = 0; j < todo.size(); ++j) {
    const DecisionVector& v = batch[todo[j]];
    double c = RecordCost(records[j], options_.objective);
    costs[todo[j]] = c;
    seen_[v] = c;
    ++result_.evaluations;
    if (records[j].status != JobStatus::kOk) ++result_.invalid;
    if (c < result_.best_cost) {
      result_.best_cost = c;
      result_.best = v;
      result_.evaluations_to_best = result_.evaluations;
    }
    result_.best_so_far.push_back(result_.best_cost);
    result_.log.push_back({v, c, records[j].status, result_.evaluations});
  }
  if (options_.on_progress) options_.on_progress(result_.evaluations, result_.invalid, result_.speedup());
  return costs;
}

double SearchDriver::Evaluate(const DecisionVector& v) { return Evaluate(std::vector<DecisionVector>{v})[0]; }

DecisionVector SearchDriver::RandomVector() {
  DecisionVector v(space_.size());
  for (int64_t i = 0; i < space_.size(); ++i) {
    v[i] = static_cast<int32_t>(std::uniform_int_distribution<int>(0, Choices(i) - 1)(rng_));
  }
  return v;
}

DecisionVector SearchDriver::Start() { return options_.start_random ? RandomVector() : space_.defaults; }

SearchResult SearchDriver::Finish() { return result_; }

std::vector<std::string> SearchAlgorithms() {
  return {"random", "greedy", "beam", "anneal", "gibbs", "evolution", "guided"};  // and "pass-order" (pass_order_agent.h)
}

absl::StatusOr<SearchResult> RunSearch(const SearchSpace& space, Evaluator& evaluator,
                                       const SearchOptions& options) {
  const std::vector<std::string> algos = SearchAlgorithms();
  if (std::find(algos.begin(), algos.end(), options.algo) == algos.end()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown search algorithm '", options.algo,
                                                   "'; choose one of ", absl::StrJoin(algos, ", ")));
  }
  if (options.budget < 1) return absl::InvalidArgumentError("budget must be at least 1");
  if (options.algo == "guided" && options.model_path.empty()) {
    return absl::InvalidArgumentError("guided search needs --model (see hlox train-advantage)");
  }
  SearchDriver d(space, evaluator, options);
  if (space.size() > 0 && !d.exhausted()) {
    if (options.algo == "random") RunRandom(d);
    else if (options.algo == "greedy") RunGreedy(d);
    else if (options.algo == "beam") RunBeam(d);
    else if (options.algo == "anneal") RunAnneal(d);
    else if (options.algo == "gibbs") RunGibbs(d);
    else if (options.algo == "evolution") RunEvolution(d);
    else {
      absl::Status s = RunGuided(d);
      if (!s.ok()) return s;
    }
  }
  return d.Finish();
}

}  // namespace hlox
