// Campaign loop, resume and summary tables.
#include "agent/campaign.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "agent/plot.h"
#include "agent/report_charts.h"
#include "agent/report_html.h"
#include "agent/search_log.h"
#include "client/embedded.h"
#include "common/csv.h"
#include "common/status_macros.h"

namespace hlox {
namespace fs = std::filesystem;
namespace {

std::optional<nlohmann::json> ReadSummary(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // a run that crashed while writing: run it again
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Every run's summary (null for a run without one), graphs x algorithms x seeds in order.
std::vector<CampaignRun> LoadRuns(const CampaignOptions& o, const std::vector<std::string>& graphs) {
  std::vector<CampaignRun> runs;
  for (const std::string& g : graphs) {
    for (const std::string& algo : o.algos) {
      for (int s = 0; s < o.seeds; ++s) {
        auto j = ReadSummary(fs::path(o.out_dir) / "runs" / g / algo / absl::StrCat("seed", s) / "summary.json");
        runs.push_back({g, algo, s, j ? *j : nlohmann::json()});
      }
    }
  }
  return runs;
}

// The row of one graph and algorithm over its finished seeds; false when none finished.
bool SummarizeAlgo(const std::vector<CampaignRun>& runs, const std::string& g, const std::string& algo,
                   CampaignAlgoRow& row) {
  std::vector<double> speedups, to_best;
  std::vector<std::array<double, 3>> verdicts;  // speedup, ci low, ci high per seed
  row = CampaignAlgoRow{g, algo};
  row.delta = NAN;
  for (const CampaignRun& r : runs) {
    if (r.graph != g || r.algo != algo || !r.summary.is_object()) continue;
    const nlohmann::json& j = r.summary;
    const double speedup = SummaryNumber(j, "best_speedup");
    const nlohmann::json ci = j.value("best_speedup_ci", nlohmann::json());
    const double lo = ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0].get<double>() : NAN;
    const double hi = ci.is_array() && ci.size() == 2 && ci[1].is_number() ? ci[1].get<double>() : NAN;
    speedups.push_back(speedup);
    to_best.push_back(SummaryNumber(j, "evaluations_to_best"));
    verdicts.push_back({speedup, lo, hi});
    row.invalid += j.value("invalid", int64_t{0});
    const nlohmann::json rule = j.value("verdict_rule", nlohmann::json());
    if (rule.is_object()) {
      row.gains += rule.value("outcome", "") == "gain";
      row.delta = rule.value("delta", NAN);
    }
  }
  if (speedups.empty()) return false;
  // The seed whose verdict is the median (lower middle for even counts), with its interval.
  std::sort(verdicts.begin(), verdicts.end());
  const std::array<double, 3>& mid = verdicts[(verdicts.size() - 1) / 2];
  row.speedup = mid[0], row.low = mid[1], row.high = mid[2];
  row.seeds = static_cast<int>(verdicts.size());
  row.min_speedup = *std::min_element(speedups.begin(), speedups.end());
  row.max_speedup = *std::max_element(speedups.begin(), speedups.end());
  row.median_to_best = Median(to_best);
  return true;
}

// results.csv: one RFC 4180 row per finished run, numbers at full precision.
void WriteCsv(const CampaignOptions& o, const std::vector<CampaignRun>& runs) {
  std::ofstream csv(fs::path(o.out_dir) / "results.csv", std::ios::binary);
  csv << CsvRow({"graph", "algo", "seed", "evaluations", "invalid", "evaluations_to_best", "search_speedup",
                 "best_speedup", "ci_low", "ci_high"});
  for (const CampaignRun& r : runs) {
    if (!r.summary.is_object()) continue;
    const nlohmann::json& j = r.summary;
    const nlohmann::json ci = j.value("best_speedup_ci", nlohmann::json());
    auto at = [&](size_t i) { return ci.is_array() && ci.size() == 2 && ci[i].is_number() ? ci[i].get<double>() : NAN; };
    csv << CsvRow({CsvField(r.graph), CsvField(r.algo), absl::StrCat(r.seed), absl::StrCat(j.value("evaluations", 0)),
                   absl::StrCat(j.value("invalid", 0)), CsvNumber(SummaryNumber(j, "evaluations_to_best")),
                   CsvNumber(SummaryNumber(j, "search_speedup")), CsvNumber(SummaryNumber(j, "best_speedup")),
                   CsvNumber(at(0)), CsvNumber(at(1))});
  }
}

// A graph's chart: per algorithm every seed's summary and seed 0's log.
ChartSpec GraphChart(const CampaignOptions& o, const std::vector<CampaignRun>& runs, const std::string& g) {
  std::vector<CampaignAlgoRuns> algos;
  for (const std::string& algo : o.algos) {
    CampaignAlgoRuns a{algo, {}, {}};
    for (const CampaignRun& r : runs) {
      if (r.graph == g && r.algo == algo && r.summary.is_object()) a.summaries.push_back(r.summary);
    }
    absl::StatusOr<SearchLog> log =
        ReadSearchLog((fs::path(o.out_dir) / "runs" / g / algo / "seed0" / "log.jsonl").string());
    if (log.ok()) a.seed0_log = std::move(log->entries);
    algos.push_back(std::move(a));
  }
  return CampaignChart(g, algos);
}

absl::Status WriteTables(const CampaignOptions& o, const std::vector<std::string>& graphs) {
  const std::vector<CampaignRun> runs = LoadRuns(o, graphs);
  WriteCsv(o, runs);
  std::vector<CampaignAlgoRow> rows;
  std::vector<std::pair<std::string, ChartSpec>> charts;
  std::ostringstream md;
  md << "| graph | algo | verified speedup over default (median seed) | its 95% CI | seeds with a gain verdict "
        "(lower bound above 1 + delta) | delta | range over seeds | evals to best | invalid |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  fs::create_directories(fs::path(o.out_dir) / "plots");
  for (const std::string& g : graphs) {
    for (const std::string& algo : o.algos) {
      CampaignAlgoRow r;
      if (!SummarizeAlgo(runs, g, algo, r)) continue;
      rows.push_back(r);
      // A '|' in a name would end a Markdown cell.
      md << absl::StrFormat("| %s | %s | %.3fx | %.3f .. %.3f | %d of %d | %s | %.3f .. %.3f | %.0f | %d |\n",
                            absl::StrReplaceAll(g, {{"|", "\\|"}}), absl::StrReplaceAll(algo, {{"|", "\\|"}}),
                            r.speedup, r.low, r.high, r.gains, r.seeds,
                            std::isfinite(r.delta) ? absl::StrFormat("%.1f%%", 100 * r.delta) : std::string("-"),
                            r.min_speedup, r.max_speedup, r.median_to_best, r.invalid);
    }
    ChartSpec chart = GraphChart(o, runs, g);
    if (chart.series.empty() && chart.marks.empty()) continue;
    HLOX_RETURN_IF_ERROR(WritePlotPng((fs::path(o.out_dir) / "plots" / (g + ".png")).string(), chart));
    charts.emplace_back(g, std::move(chart));
  }
  md << "\nPlots in plots/ (and report.html): per algorithm, seed 0's evaluations as dots and its best-so-far "
        "(the search's unverified, optimistic estimate) dashed; the marks at the right with bars are the "
        "verified paired speedups of every seed with their 95% intervals.\n";
  std::ofstream(fs::path(o.out_dir) / "table.md") << md.str();
  std::cout << md.str();
  const SessionOptions& so = o.session;
  nlohmann::json host;
  for (const CampaignRun& r : runs) {
    if (r.summary.is_object() && r.summary.contains("host")) host = r.summary["host"];
  }
  const std::vector<std::pair<std::string, std::string>> setup = {
      {"graphs", o.graphs_dir},
      {"algorithms", absl::StrJoin(o.algos, ", ")},
      {"seeds", absl::StrCat(o.seeds)},
      {"budget", absl::StrCat(so.search.budget, " evaluations per search")},
      {"pipeline", so.pipeline},
      {"decision point", so.point.empty() ? std::string("default (fusion)") : so.point},
      {"host", host.is_object() ? absl::StrCat(host.value("cpu", std::string("?")), ", ISA level ",
                                               host.value("isa", std::string("?")))
                                : std::string("?")},
  };
  std::ofstream report(fs::path(o.out_dir) / "report.html");
  report << CampaignReportHtml(setup, rows, runs, charts);
  if (!report.flush()) return absl::InternalError(absl::StrCat("cannot write ", o.out_dir, "/report.html"));
  return absl::OkStatus();
}

}  // namespace

absl::Status RunCampaign(const CampaignOptions& o) {
  if (o.algos.empty() || o.seeds < 1) return absl::InvalidArgumentError("need at least one algorithm and one seed");
  std::vector<std::string> graphs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.graphs_dir, ec)) {
    if (e.path().extension() == ".hlo") graphs.push_back(e.path().stem().string());
  }
  if (ec) return absl::InvalidArgumentError(absl::StrCat("cannot read ", o.graphs_dir, ": ", ec.message()));
  if (graphs.empty()) return absl::InvalidArgumentError(absl::StrCat("no .hlo files in ", o.graphs_dir));
  std::sort(graphs.begin(), graphs.end());
  if (fs::exists(fs::path(o.out_dir) / "runs") && !o.resume) {
    return absl::AlreadyExistsError(absl::StrCat(o.out_dir, " already holds a campaign; pass --resume to continue it"));
  }
  SessionOptions base = o.session;
  std::optional<client::EmbeddedFleet> fleet;
  if (base.broker.empty() && !base.in_process) {
    client::EmbeddedOptions eo;
    eo.threads = base.threads;
    eo.db_path = (fs::path(o.out_dir) / "broker.db").string();
    fs::create_directories(o.out_dir);
    int workers = base.workers > 0 ? base.workers : 2;
    HLOX_ASSIGN_OR_RETURN(client::EmbeddedFleet f, client::StartEmbeddedFleet(workers, eo));
    base.broker = f.address;
    base.workers = workers;
    fleet = std::move(f);
  }
  int total = static_cast<int>(graphs.size() * o.algos.size()) * o.seeds, done = 0;
  for (const std::string& g : graphs) {
    for (const std::string& algo : o.algos) {
      for (int s = 0; s < o.seeds; ++s) {
        ++done;
        fs::path run = fs::path(o.out_dir) / "runs" / g / algo / absl::StrCat("seed", s);
        if (ReadSummary(run / "summary.json")) continue;  // finished before a crash or stop
        SessionOptions so = base;
        so.module_path = (fs::path(o.graphs_dir) / (g + ".hlo")).string();
        so.out_dir = run.string();
        so.search.algo = algo;
        so.search.seed = static_cast<uint64_t>(s);
        so.campaign = absl::StrCat("campaign-", g, "-", algo, "-", s);
        std::cerr << absl::StrFormat("[%d/%d] %s %s seed %d\n", done, total, g, algo, s);
        absl::StatusOr<SessionResult> r = RunSearchSession(so);
        if (!r.ok()) {
          std::cerr << "  failed: " << r.status().message() << "\n";
          fs::create_directories(run);
          std::ofstream(run / "error.txt") << r.status().message() << "\n";
        }
      }
    }
  }
  return WriteTables(o, graphs);
}

}  // namespace hlox
