// The broker's statistics for the status reply and the metrics: counters (completions, cache
// hits, rejected messages, re-queues, lost workers, lease expiries), a ring of recent
// submit-to-result latencies (percentiles, recent histogram), a ring of recent cost spreads,
// completions per second over a 16-second ring, and the cumulative JobMetrics. No sockets and
// no clock of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/job_metrics.h"
#include "nlohmann/json.hpp"
#include "protocol/record_scan.h"

namespace hlox::broker {

class BrokerStats {
 public:
  static constexpr size_t kRingSize = 4096;  // recent latencies and spreads kept

  // One job finished with `status` (wire name) `seconds` after its SUBMIT, at `now_ms`.
  void RecordFinished(const std::string& status, double seconds, int64_t now_ms);
  // Remembers the relative spread (MAD/median) of a measured OK record; ignores records
  // without samples or a positive median.
  void RecordSpread(const proto::RecordSummary& record);

  // Completions per second over the last 10 full seconds before `now_ms`.
  double Throughput(int64_t now_ms) const;
  // Median of the recent spreads (0 when none).
  double MedianSpread() const;
  // {"p50", "p99", "samples", "sum", "buckets": [[le, count]..., [null, samples]]} over the
  // recent latencies.
  nlohmann::json LatencyJson() const;

  JobMetrics& metrics() { return metrics_; }
  const JobMetrics& metrics() const { return metrics_; }

  // Counters, read by the status reply.
  int64_t completed = 0, cache_hits = 0, rejected = 0, requeued = 0, lost_workers = 0;
  int64_t lease_expiries = 0;  // leases ended by a lost worker or a run timeout
  // Messages refused for their key's role or a campaign's owner: operation -> reason -> count.
  std::map<std::string, std::map<std::string, int64_t>> forbidden;

 private:
  JobMetrics metrics_;  // cumulative (job_metrics.h)
  std::vector<double> latencies_;  // ring of recent submit->result seconds
  size_t latency_next_ = 0;
  std::vector<double> spreads_;    // ring of recent MAD/median of measured costs
  size_t spread_next_ = 0;
  int64_t tput_bucket_[16] = {};   // completions per second, ring by second
  int64_t tput_second_[16] = {};
};

}  // namespace hlox::broker
