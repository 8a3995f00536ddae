// The final verdict of a search as a race. The best single noisy measurement among hundreds is a
// lucky one (the winner's curse), so the search's own best is not trusted: the top K distinct
// validated candidates by search cost (the noise-aware estimate) are re-measured against the
// default with paired measurement in successive-halving levels (the faster half by pooled median goes on), the
// leader of the last level by lower bound of its pooled paired speedup is chosen (the default itself wins when no leader's lower bound exceeds 1 + delta, the calibrated minimum effect), and only
// then is the chosen one measured again, FRESH, for the reported figure and interval. Measuring
// is a callback, so tests race synthetic noisy candidates.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/search.h"
#include "cost/paired.h"

namespace hlox {

struct RaceCandidate {
  DecisionVector decisions;
  double search_cost = 0;       // its noise-aware estimate, else its cheapest logged cost
};

// Up to `k` distinct validated (OK, finite cost) configurations other than `defaults`, cheapest
// first: by `search.estimates` when the search was noise-aware, else by cheapest logged cost.
std::vector<RaceCandidate> TopCandidates(const SearchResult& search, const DecisionVector& defaults, int k);

struct RaceOptions {
  double select_seconds = 3;   // time cap of the whole selection, split over levels and survivors
  int select_max_rounds = 40;  // paired rounds per candidate per level at most (the time slot usually binds first)
  TimingProtocol confirm;      // the fresh measurement of the chosen candidate
  uint64_t seed = 0;
  // Minimum effect (cost/verdict.h) for a default taking `baseline_seconds` per call (as the
  // race measured it): the leader must beat the default with its lower bound above 1 + that to
  // be chosen. Empty: 0.
  std::function<double(double baseline_seconds)> min_effect;
};

// Measures candidate `index` against the default under `protocol` with `seed`.
using PairedMeasure =
    std::function<absl::StatusOr<PairedResult>(size_t index, const TimingProtocol& protocol, uint64_t seed)>;

// One candidate's selection standing: pooled paired rounds over the levels it survived.
struct RaceStanding {
  size_t index = 0;
  int levels = 0;               // levels measured in
  int rounds = 0;               // pooled paired rounds
  double speedup = 0;           // default/candidate, median of the pooled rounds
  double low = 0, high = 0;     // 95% interval of that speedup (PairedRatioInterval)
  bool failed = false;          // a measurement error: out of the race
  double baseline_seconds = 0;  // the default's median time per call in its last level
};

struct RaceResult {
  int chosen = -1;              // index of the chosen candidate; -1: the default is kept
  double delta = 0;             // the minimum effect the final choice applied
  double baseline_seconds = 0;  // the default's time per call it was sized on (0: none measured)
  std::vector<RaceStanding> standings;  // one per candidate, in input order
  bool confirmed = false;       // `fresh` holds the chosen candidate's fresh measurement
  PairedResult fresh;           // candidate/default ratios, measured after the choice
  uint64_t fresh_seed = 0;      // seed of the fresh measurement (never used in selection)
};

// Races `n` candidates. Never fails: candidates whose measurement fails drop out; with none left
// (or n == 0) the default is kept. A failed fresh measurement leaves confirmed false.
RaceResult RaceCandidates(size_t n, const PairedMeasure& measure, const RaceOptions& options);

}  // namespace hlox
