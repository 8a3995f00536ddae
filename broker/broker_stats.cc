// The broker's counters, rings and metrics; see broker_stats.h.
#include "broker/broker_stats.h"

#include <algorithm>

namespace hlox::broker {

namespace {
// Puts `v` into a ring of kRingSize entries whose next slot to overwrite is `next`.
void PushRing(std::vector<double>& ring, size_t& next, double v) {
  if (ring.size() < BrokerStats::kRingSize) {
    ring.push_back(v);
  } else {
    ring[next] = v;
    next = (next + 1) % ring.size();
  }
}
}  // namespace

void BrokerStats::RecordFinished(const std::string& status, double seconds, int64_t now_ms) {
  ++completed;
  metrics_.OnFinished(status, seconds);
  PushRing(latencies_, latency_next_, seconds);
  int64_t sec = now_ms / 1000;
  int slot = static_cast<int>(sec % 16);
  if (tput_second_[slot] != sec) {
    tput_second_[slot] = sec;
    tput_bucket_[slot] = 0;
  }
  ++tput_bucket_[slot];
}

void BrokerStats::RecordSpread(const proto::RecordSummary& r) {
  if (r.median <= 0 || r.samples == 0) return;
  PushRing(spreads_, spread_next_, r.mad / r.median);
}

double BrokerStats::Throughput(int64_t now_ms) const {
  int64_t sec = now_ms / 1000, recent = 0;
  for (int i = 0; i < 16; ++i) {
    if (tput_second_[i] < sec && tput_second_[i] >= sec - 10) recent += tput_bucket_[i];
  }
  return double(recent) / 10.0;
}

double BrokerStats::MedianSpread() const {
  if (spreads_.empty()) return 0;
  std::vector<double> s = spreads_;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2), s.end());
  return s[s.size() / 2];
}

nlohmann::json BrokerStats::LatencyJson() const {
  using nlohmann::json;
  std::vector<double> lat = latencies_;
  auto pct = [&](double p) -> double {
    if (lat.empty()) return 0;
    size_t k = std::min(lat.size() - 1, static_cast<size_t>(p * double(lat.size())));
    std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
    return lat[k];
  };
  // Histogram over the recent window only (the cumulative one is in the metrics).
  json buckets = json::array();
  double sum = 0;
  for (double v : lat) sum += v;
  for (double le : {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0}) {
    buckets.push_back({le, std::count_if(lat.begin(), lat.end(), [&](double v) { return v <= le; })});
  }
  buckets.push_back({nullptr, lat.size()});
  const double p50 = pct(0.50), p99 = pct(0.99);
  return json{{"p50", p50}, {"p99", p99}, {"samples", lat.size()}, {"sum", sum},
              {"buckets", buckets}};
}

}  // namespace hlox::broker
