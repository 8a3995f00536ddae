// Cumulative job histograms and counts; see job_metrics.h.
#include "broker/job_metrics.h"

#include <algorithm>

namespace hlox::broker {

void SecondsHistogram::Observe(double seconds) {
  if (!(seconds >= 0)) seconds = 0;  // NaN or a clock step backwards
  const auto* at = std::lower_bound(kJobSecondsBounds.begin(), kJobSecondsBounds.end(), seconds);
  ++per_bucket_[static_cast<size_t>(at - kJobSecondsBounds.begin())];
  ++count_;
  sum_ += seconds;
}

nlohmann::json SecondsHistogram::ToJson() const {
  nlohmann::json counts = nlohmann::json::array();
  uint64_t running = 0;
  for (uint64_t n : per_bucket_) {
    running += n;
    counts.push_back(running);
  }
  return {{"le", kJobSecondsBounds}, {"counts", counts}, {"sum", sum_}, {"count", count_}};
}

void JobMetrics::SeedFinished(const std::map<std::string, int64_t>& by_status) {
  for (const auto& [status, n] : by_status) by_status_[status] += n;
}

void JobMetrics::OnFinished(const std::string& status, double latency_s) {
  ++by_status_[status];
  latency_.Observe(latency_s);
}

void JobMetrics::OnDispatched(const std::string& hardware_class, double wait_s) {
  queue_wait_[hardware_class].Observe(wait_s);
}

void JobMetrics::OnRunEnded(const std::string& hardware_class, double run_s) {
  run_[hardware_class].Observe(run_s);
}

nlohmann::json JobMetrics::ToJson() const {
  nlohmann::json wait = nlohmann::json::object(), run = nlohmann::json::object();
  for (const auto& [cls, h] : queue_wait_) wait[cls] = h.ToJson();
  for (const auto& [cls, h] : run_) run[cls] = h.ToJson();
  return {{"jobs_by_status", by_status_},
          {"job_latency_seconds", latency_.ToJson()},
          {"job_queue_wait_seconds", wait},
          {"job_run_seconds", run}};
}

}  // namespace hlox::broker
