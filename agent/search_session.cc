// The search session: evaluator choice, progress bar, verdict and output files.
#include "agent/search_session.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/fleet_evaluator.h"
#include "agent/pass_order_agent.h"
#include "agent/plot.h"
#include "agent/report_charts.h"
#include "agent/report_html.h"
#include "agent/search_log.h"
#include "common/cpu_isa.h"
#include "common/status_macros.h"
#include "cost/verdict.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/decisions_io.h"
#include "passes/module_util.h"
#include "passes/pass_order.h"
#include "passes/pipeline.h"

namespace hlox {
namespace {

class ProgressBar {
 public:
  ProgressBar(int64_t budget, bool enabled) : budget_(budget), enabled_(enabled), tty_(isatty(2)),
                                              start_(std::chrono::steady_clock::now()) {}
  void Update(int64_t done, int64_t invalid, double speedup) {
    if (!enabled_) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    double eta = done > 0 ? secs / done * (budget_ - done) : 0;
    int width = 30, filled = static_cast<int>(width * done / std::max<int64_t>(1, budget_));
    std::string bar(filled, '#');
    bar.resize(width, '.');
    // Until the default's cost is in, there is no speedup to show.
    std::string best = std::isfinite(speedup) ? absl::StrFormat("%.3fx", speedup) : std::string("-");
    // The search's own estimate: the best's estimate (noise-aware: a median of re-measurements;
    // else a single noisy sample, biased up) over the default's median.
    std::string line = absl::StrFormat("[%s] %lld/%lld evals  best (unverified search estimate) %s  invalid %lld  ETA %.0fs", bar,
                                       static_cast<long long>(done), static_cast<long long>(budget_), best,
                                       static_cast<long long>(invalid), eta);
    if (tty_) {
      std::fprintf(stderr, "\r%s", line.c_str());
    } else if (done * 10 / std::max<int64_t>(1, budget_) != last_decile_) {
      last_decile_ = done * 10 / std::max<int64_t>(1, budget_);
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  void Done() {
    if (enabled_ && tty_) std::fprintf(stderr, "\n");
  }

 private:
  int64_t budget_;
  bool enabled_, tty_;
  int64_t last_decile_ = -1;
  std::chrono::steady_clock::time_point start_;
};

absl::Status WriteOutputs(const SessionOptions& o, const SearchSpace& space, const SessionResult& r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat("cannot create ", o.out_dir, ": ", ec.message()));
  DecisionsFile best{o.pipeline, space.Decisions(r.chosen)};
  std::ofstream(fs::path(o.out_dir) / "best_decisions.json") << DecisionsToJson(best) << "\n";
  const nlohmann::json summary = r.Summary(o);
  SearchLog log{fs::absolute(o.module_path).string(), o.pipeline, space.key,
                ObjectiveName(o.search.objective),
                space.size(), r.search.log};
  HLOX_RETURN_IF_ERROR(WriteSearchLog((fs::path(o.out_dir) / "log.jsonl").string(), log));
  // One chart, two back ends: the PNG and the HTML report's SVG.
  const ChartSpec chart = SearchChart(summary, r.search.log, r.search.best_so_far);
  HLOX_RETURN_IF_ERROR(WritePlotPng((fs::path(o.out_dir) / "progress.png").string(), chart));
  std::ofstream report(fs::path(o.out_dir) / "report.html");
  report << SearchReportHtml(summary, chart);
  if (!report.flush()) return absl::InternalError(absl::StrCat("cannot write ", o.out_dir, "/report.html"));
  // Last: a campaign takes a run with a summary as finished.
  std::ofstream(fs::path(o.out_dir) / "summary.json") << summary.dump(2) << "\n";
  return absl::OkStatus();
}

// The race's candidates: search estimate, selection standing, and which one was chosen.
nlohmann::json RaceJson(const SessionResult& r) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json out = nlohmann::json::array();
  for (const RaceStanding& s : r.race.standings) {
    double cost = r.race_search_costs.size() > s.index ? r.race_search_costs[s.index] : NAN;
    out.push_back({{"search_speedup", finite(cost > 0 ? r.search.default_cost / cost : NAN)},
                   {"race_speedup", finite(s.speedup)},
                   {"race_ci", {finite(s.low), finite(s.high)}},
                   {"rounds", s.rounds},
                   {"levels", s.levels},
                   {"failed", s.failed},
                   {"chosen", static_cast<int>(s.index) == r.race.chosen}});
  }
  return out;
}

// The calibrated rule behind the verdict: delta, size class, the calibration's source and the
// A/A and planted-effect figures it rests on (null without a paired measurement).
nlohmann::json VerdictRuleJson(const SessionResult& r) {
  if (!r.verdict_measured) return nullptr;
  nlohmann::json j = VerdictToJson(r.verdict);
  const nlohmann::json cal = VerdictCalibrationToJson(CachedVerdictCalibration());
  j["calibration_figures"] = cal["classes"][SizeClassName(r.verdict.size)];
  j["calibration_cpu"] = cal["cpu"];
  j["calibration_date"] = cal["date"];
  return j;
}

// Where the verdict's paired measurements ran (null when none was taken).
nlohmann::json MeasuredByJson(const MeasuredBy& m) {
  if (m.measurements == 0) return nullptr;
  return {{"where", m.where}, {"worker_id", m.worker_id}, {"hardware_class", m.hardware_class},
          {"host", m.host}, {"measurements", m.measurements}};
}

}  // namespace

nlohmann::json SessionResult::Summary(const SessionOptions& o) const {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"module", o.module_path},
          {"algo", o.search.algo},
          {"pipeline", o.pipeline},
          {"decision_point", key},
          {"sites", sites},
          {"budget", o.search.budget},
          {"seed", o.search.seed},
          {"host", {{"cpu", CpuModelName()}, {"isa", std::string(IsaName(ActiveIsa()))}}},
          {"evaluations", search.evaluations},
          {"invalid", search.invalid},
          {"evaluations_to_best", search.evaluations_to_best},
          {"default_cost", finite(search.default_cost)},
          {"best_cost", finite(search.best_cost)},
          {"search_speedup", finite(search.speedup())},
          {"noise_aware", o.search.noise_aware && o.search.objective == Objective::kMeasured},
          {"objective", ObjectiveName(o.search.objective)},
          {"scratchpad_target",
           o.search.objective == Objective::kScratchpad ? nlohmann::json(CachedScratchpadTarget().ToString()) : nullptr},
          {"search_best_samples", search.best_samples},
          {"best_speedup", finite(best_speedup)},
          {"best_speedup_ci", {finite(ci_low), finite(ci_high)}},
          {"verdict", verdict_measured ? "paired" : "search"},
          {"verdict_outcome", outcome},
          {"verdict_rule", VerdictRuleJson(*this)},
          {"verdict_measured_by", MeasuredByJson(verdict_measured_by)},
          {"default_evaluations", static_cast<int64_t>(search.default_costs.size())},
          {"race", RaceJson(*this)},
          {"best_decisions", chosen},
          {"search_best_decisions", search.best},
          {"pass_sequence", pass_sequence},
          {"initial_ops", initial_ops},
          {"default_ops", default_ops},
          {"best_ops", best_ops}};
}

std::string FormatSessionTable(const SessionOptions& o, const SessionResult& r) {
  std::string t;
  absl::StrAppendFormat(&t, "%-22s %s\n", "module", o.module_path);
  absl::StrAppendFormat(&t, "%-22s %s (%s, %lld sites)\n", "decision point", r.key, o.pipeline,
                        static_cast<long long>(r.sites));
  absl::StrAppendFormat(&t, "%-22s %s, budget %lld\n", "algorithm", o.search.algo,
                        static_cast<long long>(o.search.budget));
  absl::StrAppendFormat(&t, "%-22s %lld (invalid %lld, best at %lld)\n", "evaluations",
                        static_cast<long long>(r.search.evaluations), static_cast<long long>(r.search.invalid),
                        static_cast<long long>(r.search.evaluations_to_best));
  if (!r.pass_sequence.empty()) {
    absl::StrAppendFormat(&t, "%-22s %lld -> default pipeline %lld -> best sequence %lld\n", "op count",
                          static_cast<long long>(r.initial_ops), static_cast<long long>(r.default_ops),
                          static_cast<long long>(r.best_ops));
    absl::StrAppendFormat(&t, "%-22s %s\n", "best sequence", absl::StrJoin(r.pass_sequence, " "));
  }
  absl::StrAppendFormat(&t, "%-22s %.6g\n", "default cost", r.search.default_cost);
  absl::StrAppendFormat(&t, "%-22s %.6g\n", "best cost", r.search.best_cost);
  if (r.search.default_costs.size() > 1) {
    auto [lo, hi] = std::minmax_element(r.search.default_costs.begin(), r.search.default_costs.end());
    absl::StrAppendFormat(&t, "%-22s %zu times, median %.6g (range %.6g .. %.6g)\n", "default measured",
                          r.search.default_costs.size(), r.search.default_cost, *lo, *hi);
  }
  if (o.search.objective == Objective::kScratchpad) {
    absl::StrAppendFormat(&t, "%-22s %.3fx  (default / best DRAM<->scratchpad traffic on %s: a deterministic count)\n",
                          "traffic reduction", r.search.speedup(), CachedScratchpadTarget().name);
  } else if (!r.search.estimates.empty()) {
    absl::StrAppendFormat(&t, "%-22s %.3fx  (unverified: median of %d drift-corrected measurements, less one standard error)\n",
                          "search estimate", r.search.speedup(), r.search.best_samples);
  } else {
    absl::StrAppendFormat(&t, "%-22s %.3fx  (unverified: best single sample, an optimistic estimate)\n", "search estimate",
                          r.search.speedup());
  }
  for (const RaceStanding& s : r.race.standings) {
    double cost = r.race_search_costs.size() > s.index ? r.race_search_costs[s.index] : NAN;
    std::string label = s.index == 0 ? "verdict race" : "";
    if (s.failed) {
      absl::StrAppendFormat(&t, "%-22s #%zu search %.3fx  race: measurement failed\n", label, s.index + 1,
                            r.search.default_cost / cost);
      continue;
    }
    absl::StrAppendFormat(&t, "%-22s #%zu search %.3fx  race %.3fx [%.3f, %.3f] %d rounds%s\n", label, s.index + 1,
                          r.search.default_cost / cost, s.speedup, s.low, s.high, s.rounds,
                          static_cast<int>(s.index) == r.race.chosen ? "  <- chosen" : "");
  }
  if (r.outcome == "default") {
    absl::StrAppendFormat(&t, "%-22s 1.000x  no verified gain: the default policy is kept (a gain needs its lower bound above 1 + delta, delta %.1f%%)\n",
                          "verified speedup", 100 * r.verdict.delta);
  } else if (r.verdict_measured) {
    const Verdict& v = r.verdict;
    const std::string note = v.outcome == "gain" ? std::string("faster: lower bound above 1 + delta")
                             : v.unstable        ? std::string("no verdict: too few rounds kept")
                             : v.outcome == "slower"
                                 ? std::string("slower: the default's decisions are written")
                                 : std::string("not confirmed: the interval reaches below 1 + delta");
    absl::StrAppendFormat(&t, "%-22s %.3fx  (95%% CI %.3f .. %.3f, fresh paired, %d rounds; %s)\n", "verified speedup",
                          r.best_speedup, r.ci_low, r.ci_high, v.rounds, note);
    absl::StrAppendFormat(&t, "%-22s delta %.1f%% for a %s module (calibration: %s)\n", "verdict rule", 100 * v.delta,
                          SizeClassName(v.size), v.calibration);
  }
  return t;
}

namespace {

// Turns a paired candidate/baseline measurement into the session's speedup, interval and
// calibrated verdict; a failed measurement leaves the search's own estimate.
void ApplyVerdict(const absl::StatusOr<PairedResult>& paired, SessionResult& r) {
  if (!paired.ok() || paired->ratio <= 0) return;
  r.verdict = Judge(*paired);
  r.best_speedup = r.verdict.speedup;
  r.ci_low = r.verdict.low;
  r.ci_high = r.verdict.high;
  r.verdict_measured = true;
}

// The raced verdict (search_race.h): the top candidates race against the default, each
// measurement a paired request to `measurer` (this process, or a worker of the campaign); the
// reported figure is the chosen one's fresh measurement. Never fails: measurement problems
// leave the default standing.
void RaceVerdict(const SessionOptions& o, PairedMeasurer& measurer, const SearchSpace& space,
                 SessionResult& r) {
  std::vector<RaceCandidate> cands = TopCandidates(r.search, space.defaults, o.race_k);
  for (const RaceCandidate& c : cands) r.race_search_costs.push_back(c.search_cost);
  r.outcome = "default";
  r.chosen = space.defaults;
  r.best_speedup = r.ci_low = r.ci_high = 1.0;
  if (cands.empty()) return;
  PairedRequest base;
  base.baseline_pipeline = base.pipeline = o.pipeline;
  base.baseline = space.Decisions(space.defaults);
  std::vector<PipelineDecisions> decisions;
  for (const RaceCandidate& c : cands) decisions.push_back(space.Decisions(c.decisions));
  auto measure = [&](size_t i, const TimingProtocol& p, uint64_t seed) -> absl::StatusOr<PairedResult> {
    PairedRequest q = base;
    q.candidate = decisions[i];
    q.protocol = p;
    q.seed = seed;
    return measurer.MeasurePaired(q);
  };
  if (o.progress) {
    std::fprintf(stderr, "verdict: racing the top %zu candidates against the default (paired, ~%.0fs)\n",
                 cands.size(), o.race_seconds + VerdictProtocol().time_cap_seconds);
  }
  RaceOptions ro;
  ro.select_seconds = o.race_seconds;
  ro.confirm = VerdictProtocol();
  ro.seed = o.search.seed;
  // The race's choice asks for the minimum effect of the default's size class too.
  ro.min_effect = [](double seconds) { return CachedVerdictCalibration().DeltaFor(seconds); };
  r.race = RaceCandidates(cands.size(), measure, ro);
  r.verdict_measured = true;  // the default kept is a measured outcome too
  // Until a fresh measurement replaces it: the default kept, under the rule the race applied.
  r.verdict.outcome = "default";
  r.verdict.delta = r.race.delta;
  r.verdict.size = SizeClassOf(r.race.baseline_seconds);
  r.verdict.calibration = CachedVerdictCalibration().source;
  if (r.race.chosen < 0 || !r.race.confirmed) return;
  ApplyVerdict(r.race.fresh, r);
  r.outcome = r.verdict.outcome;
  // A candidate the fresh measurement finds slower is not handed to the user.
  if (r.outcome != "slower") r.chosen = cands[r.race.chosen].decisions;
}

// The session's fleet: the broker given, else an embedded one.
absl::StatusOr<FleetConnection> ConnectSessionFleet(const SessionOptions& o) {
  FleetTarget target{.broker = o.broker, .curve_key = o.curve_key, .broker_key = o.broker_key,
                     .workers = o.workers, .threads = o.threads, .db_path = ""};
  return ConnectFleet(target);
}

// A search of the "order" pipeline's slots (passes/pass_order.h): the search's best vector as a
// pass sequence (its essential items) and the op counts the pass-order agent reports, so both
// ways of ordering passes read alike.
absl::Status DescribeOrder(const Module& module, const SearchSpace& space, SessionResult& r) {
  if (r.search.best.size() != space.sites.size()) return absl::OkStatus();
  std::vector<std::string> sequence;
  for (size_t i = 0; i < space.sites.size(); ++i) {
    if (r.search.best[i] != 0) sequence.push_back(space.sites[i].choices[r.search.best[i]]);
  }
  HLOX_ASSIGN_OR_RETURN(r.pass_sequence, EssentialPassSequence(module, std::move(sequence)));
  r.initial_ops = OpCount(module);
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> def, RunPipeline(module, space.pipeline, space.Decisions(space.defaults)));
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> best, RunPipeline(module, space.pipeline, space.Decisions(r.search.best)));
  r.default_ops = OpCount(*def);
  r.best_ops = OpCount(*best);
  return absl::OkStatus();
}

// --algo pass-order: REINFORCE over pass sequences with op-count reward; the best sequence is
// then measured against the default pipeline.
absl::StatusOr<SessionResult> RunPassOrderSession(const SessionOptions& o, const Module& module,
                                                  const std::string& campaign) {
  PassOrderOptions po;
  po.episodes = static_cast<int>(o.search.budget);
  po.seed = o.search.seed;
  po.start_default = !o.search.start_random;
  HLOX_ASSIGN_OR_RETURN(PassOrderResult pr, SearchPassOrder(module, po));
  SessionResult r;
  r.key = "pass-order";
  r.sites = static_cast<int64_t>(PassOrderMenu().size());
  r.search.evaluations = po.episodes;
  r.search.default_cost = static_cast<double>(pr.default_ops);
  r.search.best_cost = static_cast<double>(pr.best_ops);
  for (int64_t v : pr.best_so_far) r.search.best_so_far.push_back(static_cast<double>(v));
  // Episodes until the best op count was first reached (1-based, as for the other agents).
  auto first_best = std::find(pr.best_so_far.begin(), pr.best_so_far.end(), pr.best_ops);
  r.search.evaluations_to_best = first_best - pr.best_so_far.begin() + 1;
  HLOX_ASSIGN_OR_RETURN(r.pass_sequence, EssentialPassSequence(module, pr.best_sequence));
  r.initial_ops = pr.initial_ops;
  r.default_ops = pr.default_ops;
  r.best_ops = pr.best_ops;
  r.best_speedup = r.search.speedup();
  if (o.verdict) {
    // The best sequence as a pipeline ("seq:..."), measured against the default pipeline where
    // the session's evaluations would run: this process with --in-process, else the fleet.
    PairedRequest q;
    q.pipeline = PassSequencePipeline(pr.best_sequence);
    q.protocol = VerdictProtocol();
    q.seed = o.search.seed;
    std::optional<FleetConnection> fleet;  // outlives the measurer, which holds its client
    std::unique_ptr<PairedMeasurer> measurer;
    if (o.in_process) {
      measurer = o.in_process_backend.measurer(module, o.threads);
    } else {
      HLOX_ASSIGN_OR_RETURN(fleet, ConnectSessionFleet(o));
      measurer = std::make_unique<FleetEvaluator>(std::move(fleet->client), PrintModule(module), "default",
                                                  campaign, 1);
    }
    ApplyVerdict(measurer->MeasurePaired(q), r);
    r.verdict_measured_by = measurer->measured_by();
  }
  return r;
}

}  // namespace

absl::StatusOr<SessionResult> RunSearchSession(const SessionOptions& o) {
  if (o.in_process && !o.in_process_backend) {
    return absl::FailedPreconditionError(
        "in-process search without an in-process backend (link hlox_local and set LocalBackend())");
  }
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseModuleFile(o.module_path));
  std::string campaign = o.campaign;
  if (campaign.empty()) campaign = absl::StrCat("search-", std::random_device{}());
  if (o.search.algo == "pass-order") return RunPassOrderSession(o, *module, campaign);
  HLOX_ASSIGN_OR_RETURN(SearchSpace space, BuildSearchSpace(*module, o.pipeline, o.point));
  EvalOptions eval;
  eval.seed = o.search.seed;
  eval.threads = o.threads;
  eval.measure = o.search.objective == Objective::kMeasured;
  std::optional<FleetConnection> fleet;  // outlives the evaluator, which holds its client
  std::unique_ptr<Evaluator> evaluator;
  // Verdicts are measured where the evaluations run: this process, or the campaign's fleet.
  std::unique_ptr<PairedMeasurer> local_measurer;
  PairedMeasurer* measurer = nullptr;
  if (o.in_process) {
    evaluator = o.in_process_backend.evaluator(*module, o.pipeline, eval);
    local_measurer = o.in_process_backend.measurer(*module, o.threads);
    measurer = local_measurer.get();
  } else {
    HLOX_ASSIGN_OR_RETURN(fleet, ConnectSessionFleet(o));
    auto fe = std::make_unique<FleetEvaluator>(std::move(fleet->client), PrintModule(*module), o.pipeline,
                                               campaign, 2 * fleet->workers);
    measurer = fe.get();
    evaluator = std::move(fe);
  }
  ProgressBar bar(o.search.budget, o.progress);
  SearchOptions so = o.search;
  so.on_progress = [&](int64_t done, int64_t invalid, double speedup) { bar.Update(done, invalid, speedup); };
  HLOX_ASSIGN_OR_RETURN(SearchResult result, RunSearch(space, *evaluator, so));
  bar.Done();
  SessionResult r;
  r.search = std::move(result);
  r.key = space.key;
  r.sites = space.size();
  r.best_speedup = r.search.speedup();
  r.chosen = r.search.best;
  // The scratchpad objective is a deterministic count for another machine: its search result
  // is the verdict (the CPU time of its pick is for `hlox eval --paired-against` to tell).
  const bool verdict = o.verdict && o.search.objective != Objective::kScratchpad;
  if (verdict && o.race_k > 0) {
    RaceVerdict(o, *measurer, space, r);
  } else if (verdict && r.search.best != space.defaults && std::isfinite(r.search.best_cost)) {
    r.outcome = "single";
    PairedRequest q;
    q.baseline_pipeline = q.pipeline = o.pipeline;
    q.baseline = space.Decisions(space.defaults);
    q.candidate = space.Decisions(r.search.best);
    q.protocol = VerdictProtocol();
    q.seed = o.search.seed;
    ApplyVerdict(measurer->MeasurePaired(q), r);
  } else if (verdict) {
    r.best_speedup = 1.0;  // the default policy itself is the best configuration found
  }
  r.verdict_measured_by = measurer->measured_by();
  if (absl::StartsWith(space.key, "pass-order")) HLOX_RETURN_IF_ERROR(DescribeOrder(*module, space, r));
  if (!o.out_dir.empty()) HLOX_RETURN_IF_ERROR(WriteOutputs(o, space, r));
  return r;
}

}  // namespace hlox
