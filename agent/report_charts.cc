// Chart specs for the search and campaign reports (report_charts.h).
#include "agent/report_charts.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hlox {
namespace {

constexpr uint32_t kColors[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0x17becf};
constexpr uint32_t kInvalid = 0xd62728;
const char* const kYLabel = "speedup over default (higher is better)";

// A colour halfway to white: the points under a line of the full colour.
uint32_t Lighter(uint32_t rgb) {
  uint32_t out = 0;
  for (int shift : {16, 8, 0}) out |= ((((rgb >> shift) & 255) + 255) / 2) << shift;
  return out;
}

bool Valid(const LogEntry& e) { return e.status == JobStatus::kOk && std::isfinite(e.cost) && e.cost > 0; }

// Points (valid evaluations), crosses (invalid ones) and the best-so-far line of one search.
void AddSearchSeries(ChartSpec& spec, const std::vector<LogEntry>& log, std::vector<double> best_so_far,
                     double default_cost, uint32_t rgb, const std::string& prefix) {
  ChartSeries points{absl::StrCat(prefix, "every evaluation: default cost / its measured cost"), {}, {}, Lighter(rgb),
                     SeriesStyle::kPoints};
  ChartSeries invalid{"", {}, {}, kInvalid, SeriesStyle::kAxisCrosses};
  for (const LogEntry& e : log) {
    const double x = static_cast<double>(e.evaluation);
    if (Valid(e)) {
      points.x.push_back(x);
      points.y.push_back(default_cost / e.cost);
    } else {
      invalid.x.push_back(x);
      invalid.y.push_back(NAN);
    }
  }
  if (best_so_far.empty()) {
    double best = INFINITY;
    for (const LogEntry& e : log) best_so_far.push_back(best = Valid(e) ? std::min(best, e.cost) : best);
  }
  ChartSeries line{absl::StrCat(prefix, "best so far: the search's own estimate (unverified)"), {}, {}, rgb,
                   SeriesStyle::kDashed};
  for (size_t i = 0; i < best_so_far.size(); ++i) {
    const double c = best_so_far[i];
    line.x.push_back(static_cast<double>(i + 1));
    line.y.push_back(std::isfinite(c) && c > 0 ? default_cost / c : NAN);
  }
  if (!invalid.x.empty()) {
    invalid.label = absl::StrCat(prefix, invalid.x.size(), " invalid (wrong output or error), on the x axis");
  }
  if (!points.x.empty()) spec.series.push_back(std::move(points));
  if (!line.x.empty()) spec.series.push_back(std::move(line));
  if (!invalid.x.empty()) spec.series.push_back(std::move(invalid));
}

}  // namespace

double SummaryNumber(const nlohmann::json& summary, const char* key) {
  if (!summary.is_object() || !summary.contains(key) || !summary[key].is_number()) return NAN;
  return summary[key].get<double>();
}

ChartSpec SearchChart(const nlohmann::json& summary, const std::vector<LogEntry>& log,
                      const std::vector<double>& best_so_far) {
  ChartSpec spec;
  const std::string module = std::filesystem::path(summary.value("module", std::string())).filename().string();
  spec.title = absl::StrCat(module, ": ", summary.value("algo", std::string("?")), " search, ",
                            summary.value("pipeline", std::string("default")), " pipeline");
  spec.x_label = "evaluation";
  spec.y_label = kYLabel;
  spec.reference_label = "default policy (1.0)";
  const double default_cost = SummaryNumber(summary, "default_cost");
  AddSearchSeries(spec, log, best_so_far, default_cost, kColors[0], "");
  if (summary.value("verdict", std::string()) == "paired") {
    const nlohmann::json& ci = summary["best_speedup_ci"];
    ChartMark m;
    m.y = SummaryNumber(summary, "best_speedup");
    m.low = ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0].get<double>() : m.y;
    m.high = ci.is_array() && ci.size() == 2 && ci[1].is_number() ? ci[1].get<double>() : m.y;
    const double n = static_cast<double>(std::max<size_t>(log.size(), best_so_far.size()));
    m.x = n + std::max(1.0, 0.04 * n);
    m.rgb = 0x2ca02c;
    const std::string outcome = summary.value("verdict_outcome", std::string());
    m.text = outcome == "default" ? std::string("verified: default kept") : absl::StrFormat("verified %.3fx", m.y);
    m.label = outcome == "default"
                  ? std::string("verified: no gain confirmed, the default is kept (1.000x)")
                  : absl::StrFormat("verified (fresh paired measurement): %.3fx, 95%% CI %.3f .. %.3f (%s)", m.y,
                                    m.low, m.high, outcome);
    spec.marks.push_back(m);
  }
  return spec;
}

ChartSpec CampaignChart(const std::string& graph, const std::vector<CampaignAlgoRuns>& algos) {
  ChartSpec spec;
  spec.title = absl::StrCat(graph, ": search estimates (seed 0) and verified speedups (all seeds)");
  spec.x_label = "evaluation";
  spec.y_label = kYLabel;
  spec.reference_label = "default policy (1.0)";
  double last = 1;
  for (size_t a = 0; a < algos.size(); ++a) {
    const CampaignAlgoRuns& runs = algos[a];
    if (runs.summaries.empty()) continue;
    double default_cost = SummaryNumber(runs.summaries[0], "default_cost");
    if (!std::isfinite(default_cost) && !runs.seed0_log.empty()) default_cost = runs.seed0_log[0].cost;
    AddSearchSeries(spec, runs.seed0_log, {}, default_cost, kColors[a % 8], absl::StrCat(runs.algo, ": "));
    if (!runs.seed0_log.empty()) last = std::max(last, static_cast<double>(runs.seed0_log.back().evaluation));
  }
  // Every seed's verified figure after the curves, slightly apart.
  int k = 0;
  for (size_t a = 0; a < algos.size(); ++a) {
    bool labelled = false;
    for (size_t s = 0; s < algos[a].summaries.size(); ++s) {
      const nlohmann::json& j = algos[a].summaries[s];
      if (j.value("verdict", std::string()) != "paired") continue;  // no verified figure to show
      const nlohmann::json& ci = j.value("best_speedup_ci", nlohmann::json());
      ChartMark m;
      m.y = SummaryNumber(j, "best_speedup");
      m.low = ci.is_array() && ci.size() == 2 && ci[0].is_number() ? ci[0].get<double>() : m.y;
      m.high = ci.is_array() && ci.size() == 2 && ci[1].is_number() ? ci[1].get<double>() : m.y;
      m.x = last * (1.04 + 0.03 * k++);
      m.rgb = kColors[a % 8];
      if (!labelled) {
        m.label = absl::StrFormat("%s: verified speedup and 95%% CI, one mark per seed", algos[a].algo);
        labelled = true;
      }
      spec.marks.push_back(m);
    }
  }
  return spec;
}

}  // namespace hlox
