// The charts of the search and campaign reports, as ChartSpecs (chart.h) built from what a run
// leaves on disk (summary.json and log.jsonl), so the PNG and the HTML report of a search, and a
// campaign's per-graph charts, show the same things: every evaluation's speedup as a point,
// invalid evaluations as crosses, the search's best-so-far (an unverified estimate), the default
// at 1.0 and the verified verdict with its interval.
#pragma once

#include <string>
#include <vector>

#include "agent/chart.h"
#include "agent/search.h"
#include "nlohmann/json.hpp"

namespace hlox {

// One search. `summary` is SessionResult::Summary's JSON; `best_so_far` the search's own
// best-cost estimate after each evaluation (empty: the running minimum of the log's costs).
ChartSpec SearchChart(const nlohmann::json& summary, const std::vector<LogEntry>& log,
                      const std::vector<double>& best_so_far = {});

// One algorithm's runs of a campaign graph: every seed's summary, seed 0's log.
struct CampaignAlgoRuns {
  std::string algo;
  std::vector<nlohmann::json> summaries;
  std::vector<LogEntry> seed0_log;
};
// One campaign graph: per algorithm (own colour) seed 0's evaluations and best-so-far, and every
// seed's verified figure at the right.
ChartSpec CampaignChart(const std::string& graph, const std::vector<CampaignAlgoRuns>& algos);

// A summary number (NaN when absent or null).
double SummaryNumber(const nlohmann::json& summary, const char* key);

}  // namespace hlox
