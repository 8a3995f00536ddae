// SearchDriver and the algorithm dispatch.
#include "agent/search_driver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cost/stats.h"

namespace hlox {

SearchDriver::SearchDriver(const SearchSpace& space, Evaluator& evaluator, const SearchOptions& options)
    : space_(space), evaluator_(evaluator), options_(options),
      noisy_(options.noise_aware && options.objective == Objective::kMeasured),
      rng_(options.seed * 0x9E3779B97F4A7C15ull + 1), estimates_(noisy_, space.defaults) {
  result_.best = space.defaults;
  result_.best_cost = std::numeric_limits<double>::infinity();
  // The baseline: the default policy is always the first evaluation.
  result_.default_cost = std::numeric_limits<double>::infinity();
  Measure({space.defaults}, false);
  result_.evaluations_to_best = result_.evaluations;
  ReportProgress();
}

void SearchDriver::AddDefaultMeasurement(const ResultRecord& record) {
  since_default_ = 0;
  ++default_runs_;
  const double c = RecordCost(record, options_.objective);
  if (!std::isfinite(c)) return;
  estimates_.Add(space_.defaults, result_.evaluations + 1, c);
  result_.default_costs = estimates_.default_costs();
  result_.default_cost = estimates_.DefaultCost();
  // While the default is still the best configuration, its cost is the reference, not its
  // single luckiest sample.
  if (result_.best == space_.defaults) result_.best_cost = result_.default_cost;
}

int SearchDriver::batch_size() const {
  return options_.batch > 0 ? options_.batch : std::max(1, evaluator_.parallelism());
}

double SearchDriver::Known(const DecisionVector& v) const { return estimates_.Estimate(v); }

void SearchDriver::Measure(const std::vector<DecisionVector>& vs, bool fresh) {
  std::vector<PipelineDecisions> jobs;
  for (const DecisionVector& v : vs) jobs.push_back(space_.Decisions(v));
  // The default rides along in the same batch, so it sees the same machine state as the
  // candidates: once in the first round (its first run was cold), then every default_every.
  const bool with_default = options_.default_every > 0 && result_.evaluations > 0 &&
                            options_.objective == Objective::kMeasured &&
                            (default_runs_ == 0 || since_default_ >= options_.default_every);
  if (with_default) jobs.push_back(space_.Decisions(space_.defaults));
  std::vector<ResultRecord> records =
      evaluator_.EvaluateFresh(jobs, fresh ? jobs.size() : (with_default ? 1 : 0));
  if (with_default && records.size() == jobs.size()) AddDefaultMeasurement(records.back());
  if (records.size() < vs.size()) {  // an evaluator that answered short: the rest failed to run
    ResultRecord failed;
    failed.status = JobStatus::kRunError;
    records.resize(vs.size(), failed);
  }
  records.resize(vs.size());
  since_default_ += static_cast<int64_t>(vs.size());
  for (size_t j = 0; j < vs.size(); ++j) {
    const DecisionVector& v = vs[j];
    const double c = RecordCost(records[j], options_.objective);
    ++result_.evaluations;
    if (records[j].status != JobStatus::kOk) ++result_.invalid;
    if (v == space_.defaults && std::isfinite(c)) {
      estimates_.Add(v, result_.evaluations, c);
      result_.default_costs = estimates_.default_costs();
      result_.default_cost = estimates_.DefaultCost();
      if (result_.best == space_.defaults) result_.best_cost = result_.default_cost;
    } else if (v != space_.defaults) {
      estimates_.Add(v, result_.evaluations, c);
    }
    // Plain mode: the best single sample wins at once. Noise-aware: UpdateBest after confirmation.
    if (!noisy_ && c < result_.best_cost) {
      result_.best_cost = c;
      result_.best = v;
      result_.evaluations_to_best = result_.evaluations;
    }
    result_.best_so_far.push_back(result_.best_cost);
    result_.log.push_back({v, c, records[j].status, result_.evaluations});
  }
}

void SearchDriver::ConfirmWinners(const std::vector<DecisionVector>& vs) {
  const int want = std::max(1, options_.confirm_samples);
  for (int round = 1; round < want && remaining() > 0; ++round) {
    // Plain estimates, not scores: a newcomer's single sample is compared as measured, so a promising one
    // gets the measurements it needs to compete on score.
    const double bar = estimates_.Estimate(result_.best);
    std::vector<DecisionVector> again;
    for (const DecisionVector& v : vs) {
      if (v == space_.defaults || estimates_.Samples(v) >= want) continue;
      const double e = estimates_.Estimate(v);
      if (e >= 0 && e < bar) again.push_back(v);
    }
    if (again.empty()) break;
    if (static_cast<int64_t>(again.size()) > remaining()) again.resize(remaining());
    Measure(again, true);
  }
}

void SearchDriver::UpdateBest() {
  const int want = std::max(1, options_.confirm_samples);
  DecisionVector best = space_.defaults;
  double cost = result_.default_cost;
  int samples = static_cast<int>(result_.default_costs.size());
  for (const CandidateEstimate& e : estimates_.Ranked()) {
    if (e.samples < want) continue;
    if (e.cost < cost) {
      best = e.decisions;
      cost = e.cost;
      samples = e.samples;
    }
    break;  // ranked cheapest first: the first confirmed one is the cheapest confirmed
  }
  if (best != result_.best) result_.evaluations_to_best = result_.evaluations;
  result_.best = std::move(best);
  result_.best_cost = cost;
  result_.best_samples = samples;
  if (!result_.best_so_far.empty()) result_.best_so_far.back() = cost;
}

void SearchDriver::ReportProgress() {
  if (options_.on_progress) options_.on_progress(result_.evaluations, result_.invalid, result_.speedup());
}

std::vector<double> SearchDriver::Evaluate(const std::vector<DecisionVector>& batch) {
  std::vector<DecisionVector> todo;
  std::set<DecisionVector> queued;
  for (const DecisionVector& v : batch) {
    if (Known(v) >= 0 || queued.count(v) || static_cast<int64_t>(todo.size()) >= remaining()) continue;
    queued.insert(v);
    todo.push_back(v);
  }
  if (todo.empty()) {
    ++stalls_;
  } else {
    stalls_ = 0;
    Measure(todo, false);
    if (noisy_) {
      ConfirmWinners(todo);
      UpdateBest();
    }
    ReportProgress();
  }
  return KnownCosts(batch);
}

std::vector<double> SearchDriver::KnownCosts(const std::vector<DecisionVector>& vs) const {
  std::vector<double> costs;
  for (const DecisionVector& v : vs) {
    const double k = Known(v);
    costs.push_back(k >= 0 ? k : std::numeric_limits<double>::infinity());
  }
  return costs;
}

double SearchDriver::Evaluate(const DecisionVector& v) { return Evaluate(std::vector<DecisionVector>{v})[0]; }

std::vector<double> SearchDriver::Remeasure(const std::vector<DecisionVector>& vs) {
  std::vector<DecisionVector> todo;
  for (const DecisionVector& v : vs) {
    if (static_cast<int64_t>(todo.size()) < remaining() && Known(v) >= 0) todo.push_back(v);
  }
  if (noisy_ && !todo.empty()) {
    Measure(todo, true);
    UpdateBest();
    ReportProgress();
  }
  return KnownCosts(vs);
}

DecisionVector SearchDriver::RandomVector() {
  DecisionVector v(space_.size());
  for (int64_t i = 0; i < space_.size(); ++i) {
    v[i] = static_cast<int32_t>(std::uniform_int_distribution<int>(0, Choices(i) - 1)(rng_));
  }
  return v;
}

DecisionVector SearchDriver::Start() { return options_.start_random ? RandomVector() : space_.defaults; }

std::vector<DecisionVector> SearchDriver::RuleSweeps(size_t max) {
  const DecisionVector start = Start();
  std::vector<std::string> rules;
  for (const DecisionSite& site : space_.sites) {
    if (std::find(rules.begin(), rules.end(), site.rule) == rules.end()) rules.push_back(site.rule);
  }
  std::vector<DecisionVector> out;
  for (const std::string& rule : rules) {
    if (out.size() >= max) break;
    DecisionVector v = start;
    for (int64_t i = 0; i < space_.size(); ++i) {
      if (space_.sites[i].rule != rule || Choices(i) < 2) continue;
      v[i] = space_.defaults[i] == 0 ? 1 : 0;
    }
    if (v != start) out.push_back(std::move(v));
  }
  return out;
}

SearchResult SearchDriver::Finish() {
  if (noisy_) {
    // One more fresh default measurement (not an evaluation), so the last candidates' drift
    // correction has a reference after them too.
    if (options_.default_every > 0 && since_default_ > 0) {
      std::vector<ResultRecord> r = evaluator_.EvaluateFresh({space_.Decisions(space_.defaults)}, 1);
      if (!r.empty()) AddDefaultMeasurement(r[0]);
    }
    UpdateBest();
    result_.estimates = estimates_.Ranked();
  }
  return result_;
}

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
