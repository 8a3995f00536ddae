// One whole search as the CLI and campaigns run it: build the space, choose the evaluator
// (in-process, embedded fleet or a broker), run the agent, take the paired final verdict, and
// write the outputs (best decisions, log, summary, plot).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "agent/evaluator.h"
#include "agent/search.h"
#include "agent/search_race.h"
#include "cost/verdict.h"
#include "nlohmann/json.hpp"

namespace hlox {

struct SessionOptions {
  std::string module_path;
  std::string pipeline = "default";
  std::string point;             // decision point key hint ("" = fusion, else largest)
  std::string broker;            // broker address; "" = embedded fleet (or in-process)
  std::string curve_key;         // own CURVE secret key file for a secured --broker ("" = off)
  std::string broker_key;        // the broker's CURVE public key file
  int workers = 0;               // embedded workers; 0 = one per core
  bool in_process = false;       // evaluate in this process, no fleet
  InProcessBackend in_process_backend;  // what evaluates with in_process (the CLI: LocalBackend())
  int threads = 1;               // runtime threads per evaluation
  std::string out_dir;           // "" = write nothing
  bool progress = true;          // progress bar on stderr
  bool verdict = true;           // paired final verdict
  // Verdict race over this many top candidates (0 = the search's best only). The search's ranking of
  // its top candidates is weak (unpaired noisy estimates): over 42 searches of 2026-11-26 the
  // race's truly best was at any of the six ranks (13, 8, 7, 5, 3, 6 times), so twelve are raced.
  int race_k = 12;
  double race_seconds = 4;       // selection time of the race (the fresh confirmation comes on top)
  std::string campaign;          // "" = generated
  SearchOptions search;
};

struct SessionResult {
  SearchResult search;
  std::string key;
  int64_t sites = 0;
  double best_speedup = 1;       // paired verdict (or the search's own ratio without verdict)
  double ci_low = 1, ci_high = 1;
  bool verdict_measured = false;
  Verdict verdict;               // the calibrated verdict of the paired measurement (cost/verdict.h)
  MeasuredBy verdict_measured_by;  // where the verdict's paired measurements ran (none: zero count)
  // The race (race_k > 0): candidates raced, their standings, the outcome and what was written.
  std::vector<double> race_search_costs;  // the raced candidates' search costs, race order
  RaceResult race;
  std::string outcome = "search";  // gain|unconfirmed|slower|default|single|search
  DecisionVector chosen;           // the decisions written as best
  // Pass ordering (--algo pass-order, or the "order" pipeline's slots): the search's best
  // sequence (its essential items: EssentialPassSequence) and op counts (passes/module_util.h OpCount) of the unoptimized module, the default
  // pipeline's and the best sequence's; 0 and empty otherwise.
  std::vector<std::string> pass_sequence;
  int64_t initial_ops = 0, default_ops = 0, best_ops = 0;
  nlohmann::json Summary(const SessionOptions& o) const;
};

absl::StatusOr<SessionResult> RunSearchSession(const SessionOptions& options);
// The human-readable final table.
std::string FormatSessionTable(const SessionOptions& o, const SessionResult& r);

}  // namespace hlox
