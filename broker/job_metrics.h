// Cumulative job statistics for monitoring: histograms of submit-to-result latency, queue wait
// and run time (the last two per hardware class) and finished-job counts by status. Unlike the
// status JSON's recent-window percentiles, nothing here ever goes down while the broker runs, so
// Prometheus can take rate() and histogram_quantile() of it. The finished-job counts start from
// the store's rows at start-up (restart-safe with --db); the histograms start empty.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "nlohmann/json.hpp"

namespace hlox::broker {

// Upper bounds (seconds) of every job-time histogram: 0.5 ms (a cache hit) to 10 min (a long
// run timeout). Fixed, so a series' buckets never change between scrapes.
inline constexpr std::array<double, 18> kJobSecondsBounds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
    0.5,    1.0,   2.5,    5.0,   10.0, 30.0,  60.0, 120.0, 600.0};

// A cumulative histogram over kJobSecondsBounds, as Prometheus defines one.
class SecondsHistogram {
 public:
  // Counts one observation; NaN and negative values count in the first bucket.
  void Observe(double seconds);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  // {"le": [bounds...], "counts": [cumulative count <= each bound..., count], "sum", "count"}:
  // "counts" has one more entry than "le", the +Inf bucket.
  nlohmann::json ToJson() const;

 private:
  std::array<uint64_t, kJobSecondsBounds.size() + 1> per_bucket_{};  // not cumulative
  uint64_t count_ = 0;
  double sum_ = 0;
};

class JobMetrics {
 public:
  // Adds the finished jobs already in the store (status wire name -> rows) to the counts.
  void SeedFinished(const std::map<std::string, int64_t>& by_status);
  // One job finished with `status` (wire name), `latency_s` after its SUBMIT.
  void OnFinished(const std::string& status, double latency_s);
  // One job leased to a worker of `hardware_class` after waiting `wait_s` in its queue.
  void OnDispatched(const std::string& hardware_class, double wait_s);
  // A worker of `hardware_class` answered a lease after `run_s` (result or crash report).
  void OnRunEnded(const std::string& hardware_class, double run_s);
  // {"jobs_by_status": {status: n}, "job_latency_seconds": histogram,
  //  "job_queue_wait_seconds": {class: histogram}, "job_run_seconds": {class: histogram}}.
  nlohmann::json ToJson() const;

 private:
  std::map<std::string, int64_t> by_status_;
  SecondsHistogram latency_;
  std::map<std::string, SecondsHistogram> queue_wait_, run_;
};

}  // namespace hlox::broker
