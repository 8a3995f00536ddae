// The verdict race: candidate choice from the log, successive halving on pooled paired rounds,
// and the fresh confirmation of the chosen candidate.
#include "agent/search_race.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/stats.h"

namespace hlox {

std::vector<RaceCandidate> TopCandidates(const SearchResult& search, const DecisionVector& defaults, int k) {
  if (!search.estimates.empty()) {  // noise-aware search: its estimates, already ranked
    std::vector<RaceCandidate> out;
    for (const CandidateEstimate& e : search.estimates) {
      if (static_cast<int>(out.size()) >= k) break;
      if (e.decisions != defaults && std::isfinite(e.cost)) out.push_back({e.decisions, e.cost});
    }
    return out;
  }
  std::map<DecisionVector, double> best;  // a configuration's cheapest logged cost
  for (const LogEntry& e : search.log) {
    if (e.status != JobStatus::kOk || !std::isfinite(e.cost) || e.decisions == defaults) continue;
    auto [it, inserted] = best.emplace(e.decisions, e.cost);
    if (!inserted) it->second = std::min(it->second, e.cost);
  }
  std::vector<std::pair<double, DecisionVector>> sorted;
  for (auto& [v, c] : best) sorted.emplace_back(c, v);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<RaceCandidate> out;
  for (auto& [c, v] : sorted) {
    if (static_cast<int>(out.size()) >= k) break;
    out.push_back({std::move(v), c});
  }
  return out;
}

namespace {

// Recomputes a standing's speedup and interval from its pooled candidate/default ratios.
void Score(const std::vector<double>& ratios, RaceStanding& s) {
  s.rounds = static_cast<int>(ratios.size());
  const double m = Median(ratios);
  auto [lo, hi] = PairedRatioInterval(ratios);
  s.speedup = m > 0 ? 1 / m : 0;
  s.low = hi > 0 ? 1 / hi : 0;
  s.high = lo > 0 ? 1 / lo : INFINITY;
}

// Between levels: higher median speedup first (a short noisy level must not knock out a fast
// candidate through its wide interval), then input order (search cost).
bool Faster(const RaceStanding& a, const RaceStanding& b) {
  if (a.speedup != b.speedup) return a.speedup > b.speedup;
  return a.index < b.index;
}

// The final choice: higher lower bound first (overlapping intervals favour the surer one), then
// higher speedup, then input order.
bool Ahead(const RaceStanding& a, const RaceStanding& b) {
  if (a.low != b.low) return a.low > b.low;
  return Faster(a, b);
}

}  // namespace

RaceResult RaceCandidates(size_t n, const PairedMeasure& measure, const RaceOptions& o) {
  RaceResult r;
  r.standings.resize(n);
  for (size_t i = 0; i < n; ++i) r.standings[i].index = i;
  if (n == 0) return r;
  // Levels: measure every survivor, keep the better half, until at most two were measured.
  int levels = 1;
  for (size_t s = n; s > 2; s = (s + 1) / 2) ++levels;
  uint64_t next_seed = o.seed * 0x9E3779B97F4A7C15ull + 17;
  std::vector<std::vector<double>> pooled(n);
  std::vector<size_t> survivors(n);
  for (size_t i = 0; i < n; ++i) survivors[i] = i;
  while (!survivors.empty()) {
    TimingProtocol p;
    p.warmups = 1;
    p.min_samples = 3;
    p.max_samples = std::max(3, o.select_max_rounds);
    // No early stop on precision: three rounds whose spread happens to be small said nothing, and
    // a good candidate knocked out on them never comes back. Each survivor uses its time slot.
    p.target_rel_error = 0;
    p.time_cap_seconds = o.select_seconds / levels / static_cast<double>(survivors.size());
    std::vector<RaceStanding> measured;
    for (size_t i : survivors) {
      absl::StatusOr<PairedResult> pr = measure(i, p, next_seed++);
      RaceStanding& s = r.standings[i];
      if (!pr.ok() || pr->ratios.empty()) {
        s.failed = true;
        continue;
      }
      pooled[i].insert(pooled[i].end(), pr->ratios.begin(), pr->ratios.end());
      ++s.levels;
      s.baseline_seconds = pr->baseline.median;
      Score(pooled[i], s);
      measured.push_back(s);
    }
    if (measured.size() <= 2) {
      std::sort(measured.begin(), measured.end(), Ahead);
      // The default is a candidate too: a leader must beat it with its whole interval, by more
      // than the minimum effect.
      if (!measured.empty()) {
        r.baseline_seconds = measured[0].baseline_seconds;
        r.delta = o.min_effect ? o.min_effect(r.baseline_seconds) : 0;
        if (measured[0].low > 1 + r.delta) r.chosen = static_cast<int>(measured[0].index);
      }
      break;
    }
    std::sort(measured.begin(), measured.end(), Faster);
    survivors.clear();
    for (size_t j = 0; j < (measured.size() + 1) / 2; ++j) survivors.push_back(measured[j].index);
  }
  if (r.chosen < 0) return r;
  // The reported figure: a fresh measurement after the choice, so the selection's luck does not
  // carry into it.
  r.fresh_seed = next_seed++;
  absl::StatusOr<PairedResult> fresh = measure(static_cast<size_t>(r.chosen), o.confirm, r.fresh_seed);
  if (fresh.ok() && fresh->ratio > 0) {
    r.fresh = *std::move(fresh);
    r.confirmed = true;
  }
  return r;
}

}  // namespace hlox
