// Broker status JSON -> Prometheus exposition text.
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "monitor/http_monitor.h"

namespace hlox::monitor {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

double Num(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

void Metric(std::string& out, const std::string& name, const std::string& type, const std::string& help) {
  absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
}

}  // namespace

std::string PrometheusText(const nlohmann::json& s) {
  std::string out;
  std::map<std::string, int> by_state{{"idle", 0}, {"busy", 0}, {"draining", 0}, {"lost", 0}};
  for (const auto& w : s.value("workers", nlohmann::json::array())) by_state[w.value("state", "idle")]++;
  Metric(out, "hlox_workers", "gauge", "Workers by state.");
  for (const auto& [state, n] : by_state) absl::StrAppendFormat(&out, "hlox_workers{state=\"%s\"} %d\n", state, n);
  const nlohmann::json q = s.value("queues", nlohmann::json::object());
  Metric(out, "hlox_queue_pending", "gauge", "Jobs waiting for a worker.");
  absl::StrAppendFormat(&out, "hlox_queue_pending %g\n", Num(q, "pending"));
  Metric(out, "hlox_queue_in_flight", "gauge", "Jobs leased to workers.");
  absl::StrAppendFormat(&out, "hlox_queue_in_flight %g\n", Num(q, "in_flight"));
  Metric(out, "hlox_campaign_jobs", "gauge", "Jobs per campaign and state.");
  const nlohmann::json campaigns = q.value("campaigns", nlohmann::json::object());
  for (auto it = campaigns.begin(); it != campaigns.end(); ++it) {
    for (const char* k : {"pending", "in_flight", "done"}) {
      absl::StrAppendFormat(&out, "hlox_campaign_jobs{campaign=\"%s\",state=\"%s\"} %g\n", Escape(it.key()), k,
                            Num(*it, k));
    }
  }
  const nlohmann::json t = s.value("totals", nlohmann::json::object());
  const std::pair<const char*, const char*> counters[] = {
      {"completed", "Jobs finished (any final status)."},
      {"cache_hits", "Jobs answered from the result cache."},
      {"requeued", "Leases re-queued after a worker died, went silent or crashed."},
      {"lost_workers", "Workers declared lost."},
      {"lease_expiries", "Job leases that ended without a result (lost worker or run timeout)."},
      {"rejected_messages", "Malformed or hostile messages refused."},
  };
  for (const auto& [key, help] : counters) {
    std::string name = absl::StrCat("hlox_", key, "_total");
    Metric(out, name, "counter", help);
    absl::StrAppendFormat(&out, "%s %g\n", name, Num(t, key));
  }
  if (t.contains("by_status")) {
    Metric(out, "hlox_jobs_total", "counter", "Jobs by final status.");
    for (auto it = t["by_status"].begin(); it != t["by_status"].end(); ++it) {
      absl::StrAppendFormat(&out, "hlox_jobs_total{status=\"%s\"} %g\n", Escape(it.key()), it->get<double>());
    }
  }
  Metric(out, "hlox_stored_results", "gauge", "Results in the durable store.");
  absl::StrAppendFormat(&out, "hlox_stored_results %g\n", Num(t, "stored_results"));
  Metric(out, "hlox_throughput_jobs_per_second", "gauge", "Jobs finished per second over the last 10 s.");
  absl::StrAppendFormat(&out, "hlox_throughput_jobs_per_second %g\n", Num(s, "throughput_jobs_per_s"));
  const nlohmann::json lat = s.value("latency_s", nlohmann::json::object());
  if (lat.contains("buckets")) {
    Metric(out, "hlox_job_latency_seconds", "histogram", "Submit-to-result latency.");
    for (const auto& b : lat["buckets"]) {
      absl::StrAppendFormat(&out, "hlox_job_latency_seconds_bucket{le=\"%s\"} %g\n",
                            b[0].is_number() ? absl::StrFormat("%g", b[0].get<double>()) : "+Inf", b[1].get<double>());
    }
    absl::StrAppendFormat(&out, "hlox_job_latency_seconds_sum %g\nhlox_job_latency_seconds_count %g\n",
                          Num(lat, "sum"), Num(lat, "samples"));
  } else {
    Metric(out, "hlox_job_latency_seconds", "summary", "Submit-to-result latency.");
    absl::StrAppendFormat(&out, "hlox_job_latency_seconds{quantile=\"0.5\"} %g\n", Num(lat, "p50"));
    absl::StrAppendFormat(&out, "hlox_job_latency_seconds{quantile=\"0.99\"} %g\n", Num(lat, "p99"));
    absl::StrAppendFormat(&out, "hlox_job_latency_seconds_count %g\n", Num(lat, "samples"));
  }
  if (s.contains("cost_spread")) {
    Metric(out, "hlox_cost_relative_spread", "gauge", "Median relative spread (MAD/median) of measured costs.");
    absl::StrAppendFormat(&out, "hlox_cost_relative_spread %g\n", Num(s, "cost_spread"));
  }
  // Identity as an info metric (the Prometheus convention: constant 1, joined on `worker`), so
  // the ISA level and CPU model are not extra labels on every per-worker series.
  Metric(out, "hlox_worker_info", "gauge", "Worker identity: class, instruction-set level, CPU model.");
  for (const auto& w : s.value("workers", nlohmann::json::array())) {
    absl::StrAppendFormat(&out, "hlox_worker_info{worker=\"%s\",class=\"%s\",isa=\"%s\",cpu=\"%s\"} 1\n",
                          Escape(w.value("id", "")), Escape(w.value("hardware_class", "")),
                          Escape(w.value("isa", "")), Escape(w.value("cpu", "")));
  }
  Metric(out, "hlox_worker_jobs_done", "counter", "Jobs completed per worker.");
  for (const auto& w : s.value("workers", nlohmann::json::array())) {
    absl::StrAppendFormat(&out, "hlox_worker_jobs_done{worker=\"%s\",class=\"%s\"} %g\n",
                          Escape(w.value("id", "")), Escape(w.value("hardware_class", "")), Num(w, "jobs_done"));
  }
  Metric(out, "hlox_worker_heartbeat_age_seconds", "gauge", "Seconds since each worker was last heard.");
  for (const auto& w : s.value("workers", nlohmann::json::array())) {
    absl::StrAppendFormat(&out, "hlox_worker_heartbeat_age_seconds{worker=\"%s\"} %g\n", Escape(w.value("id", "")),
                          Num(w, "last_heartbeat_age_s"));
  }
  return out;
}

}  // namespace hlox::monitor
