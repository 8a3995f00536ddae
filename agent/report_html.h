// Self-contained HTML reports (no external resources: inline CSS, inline SVG charts): one per
// search (`hlox search --out DIR` writes DIR/report.html) and one per campaign (OUT/report.html).
// Everything is read from the runs' summary JSON, so a report can be rebuilt from files.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "agent/chart.h"
#include "nlohmann/json.hpp"

namespace hlox {

// A search's report: setup (module, pipeline, point, algorithm, budget, seed, host CPU and ISA),
// the verdict and its rule, `chart`, the verdict race and the pass sequence if any.
// `summary` is SessionResult::Summary's JSON.
std::string SearchReportHtml(const nlohmann::json& summary, const ChartSpec& chart);

// One graph and algorithm of a campaign over its seeds (the Markdown table's row).
struct CampaignAlgoRow {
  std::string graph, algo;
  double speedup = 1, low = 1, high = 1;  // the median seed's verified speedup and its interval
  int gains = 0, seeds = 0;               // seeds with a gain verdict, of seeds finished
  double delta = 0;                       // minimum effect (NaN: none measured)
  double min_speedup = 1, max_speedup = 1, median_to_best = 0;
  int64_t invalid = 0;
};
// One finished run of a campaign (summary.json; null when it failed).
struct CampaignRun {
  std::string graph, algo;
  int seed = 0;
  nlohmann::json summary;
};
// A campaign's report: `setup` as key/value pairs, the summary table, then per graph its chart
// and its runs.
std::string CampaignReportHtml(const std::vector<std::pair<std::string, std::string>>& setup,
                               const std::vector<CampaignAlgoRow>& rows, const std::vector<CampaignRun>& runs,
                               const std::vector<std::pair<std::string, ChartSpec>>& charts);

}  // namespace hlox
