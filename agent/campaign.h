// Campaigns: many graphs x algorithms x seeds through one fleet. Each run writes its own folder
// (runs/<graph>/<algo>/seed<k>/) and its summary.json last, so a campaign that crashed or was
// stopped resumes by skipping finished runs; identical jobs are also answered by the broker's
// durable result cache. The summary is a Markdown table per graph and algorithm, a CSV row per run
// (RFC 4180, full precision), one plot per graph and a self-contained HTML report of it all.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/search_session.h"

namespace hlox {

struct CampaignOptions {
  std::string graphs_dir;
  std::vector<std::string> algos;
  int seeds = 1;
  std::string out_dir = "campaign";
  bool resume = false;
  SessionOptions session;        // budget, pipeline, broker/workers, threads, objective...
};

// Runs (or resumes) the campaign and writes table.md, results.csv, plots/ and report.html. Errors: bad
// options, an out_dir holding results without --resume, unreadable graphs folder.
absl::Status RunCampaign(const CampaignOptions& options);

}  // namespace hlox
