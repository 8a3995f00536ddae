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
#include "agent/embedded.h"
#include "agent/plot.h"
#include "agent/search_log.h"
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

absl::Status WriteTables(const CampaignOptions& o, const std::vector<std::string>& graphs) {
  std::ofstream csv(fs::path(o.out_dir) / "results.csv");
  csv << "graph,algo,seed,evaluations,invalid,evaluations_to_best,search_speedup,best_speedup,ci_low,ci_high\n";
  std::ostringstream md;
  md << "| graph | algo | verified speedup over default (median seed) | its 95% CI | seeds with a gain verdict "
        "(lower bound above 1 + delta) | delta | range over seeds | evals to best | invalid |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (const std::string& g : graphs) {
    std::vector<PlotSeries> series;
    std::vector<PlotMark> marks;
    const uint32_t colors[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f};
    for (size_t a = 0; a < o.algos.size(); ++a) {
      std::vector<double> speedups, to_best;
      std::vector<std::array<double, 3>> verdicts;  // speedup, ci low, ci high per seed
      int64_t invalid = 0;
      int gains = 0;
      double delta = NAN;
      for (int s = 0; s < o.seeds; ++s) {
        fs::path run = fs::path(o.out_dir) / "runs" / g / o.algos[a] / absl::StrCat("seed", s);
        auto j = ReadSummary(run / "summary.json");
        if (!j) continue;
        auto num = [&](const char* k) { return (*j)[k].is_number() ? (*j)[k].get<double>() : NAN; };
        speedups.push_back(num("best_speedup"));
        to_best.push_back(num("evaluations_to_best"));
        invalid += (*j)["invalid"].get<int64_t>();
        const nlohmann::json& ci = (*j)["best_speedup_ci"];
        double lo = ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0].get<double>() : NAN;
        double hi = ci.is_array() && ci.size() == 2 && ci[1].is_number() ? ci[1].get<double>() : NAN;
        verdicts.push_back({num("best_speedup"), lo, hi});
        const nlohmann::json rule = j->value("verdict_rule", nlohmann::json());
        if (rule.is_object()) {
          gains += rule.value("outcome", "") == "gain";
          delta = rule.value("delta", NAN);
        }
        // Every seed's verified figure, after the curves (slightly apart per algorithm).
        marks.push_back({NAN, num("best_speedup"), lo, hi, colors[a % 8]});
        csv << absl::StrFormat("%s,%s,%d,%d,%d,%g,%g,%g,%g,%g\n", g, o.algos[a], s, (*j)["evaluations"].get<int64_t>(),
                               (*j)["invalid"].get<int64_t>(), num("evaluations_to_best"), num("search_speedup"),
                               num("best_speedup"), lo, hi);
        if (s == 0) {
          absl::StatusOr<SearchLog> log = ReadSearchLog((run / "log.jsonl").string());
          if (log.ok() && !log->entries.empty()) {
            PlotSeries ps;  // the search's best-so-far: an unverified estimate, dashed
            ps.rgb = colors[a % 8];
            ps.dashed = true;
            double base = log->entries[0].cost, best = INFINITY;
            for (const LogEntry& e : log->entries) {
              best = std::min(best, e.cost);
              ps.x.push_back(static_cast<double>(e.evaluation));
              ps.y.push_back(std::isfinite(best) && best > 0 ? base / best : NAN);
            }
            series.push_back(ps);
          }
        }
      }
      if (speedups.empty()) continue;
      // The seed whose verdict is the median (lower middle for even counts), with its interval.
      std::sort(verdicts.begin(), verdicts.end());
      const std::array<double, 3>& mid = verdicts[(verdicts.size() - 1) / 2];
      md << absl::StrFormat("| %s | %s | %.3fx | %.3f .. %.3f | %d of %d | %s | %.3f .. %.3f | %.0f | %d |\n", g,
                            o.algos[a], mid[0], mid[1], mid[2], gains, verdicts.size(),
                            std::isfinite(delta) ? absl::StrFormat("%.1f%%", 100 * delta) : std::string("-"),
                            *std::min_element(speedups.begin(), speedups.end()),
                            *std::max_element(speedups.begin(), speedups.end()), Median(to_best), invalid);
    }
    fs::create_directories(fs::path(o.out_dir) / "plots");
    double last = 1;
    for (const PlotSeries& ps : series) {
      if (!ps.x.empty()) last = std::max(last, ps.x.back());
    }
    for (size_t i = 0; i < marks.size(); ++i) marks[i].x = last * (1.03 + 0.02 * static_cast<double>(i));
    if (!series.empty() || !marks.empty()) {
      HLOX_RETURN_IF_ERROR(
          WriteLinePlot((fs::path(o.out_dir) / "plots" / (g + ".png")).string(), series, 1.0, marks));
    }
  }
  md << "\nPlots in plots/: the dashed curves are each algorithm's search estimate (seed 0's best-so-far "
        "of unverified, noisy single measurements: optimistic); the marks at the right with bars are the "
        "verified paired speedups of every seed with their 95% intervals. Colours: ";
  for (size_t a = 0; a < o.algos.size(); ++a) md << (a ? ", " : "") << o.algos[a];
  md << " (blue, orange, green, red, purple, brown, pink, grey).\n";
  std::ofstream(fs::path(o.out_dir) / "table.md") << md.str();
  std::cout << md.str();
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
  std::optional<agent::EmbeddedFleet> fleet;
  if (base.broker.empty() && !base.in_process) {
    agent::EmbeddedOptions eo;
    eo.threads = base.threads;
    eo.db_path = (fs::path(o.out_dir) / "broker.db").string();
    fs::create_directories(o.out_dir);
    int workers = base.workers > 0 ? base.workers : 2;
    HLOX_ASSIGN_OR_RETURN(agent::EmbeddedFleet f, agent::StartEmbeddedFleet(workers, eo));
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
