// Broker status JSON -> Prometheus exposition text. Every family is written on every scrape with
// the same type (an idle broker shows empty histograms, not a different kind of metric), counters
// end in _total and never go down while the broker runs, and the job-time histograms are the
// broker's cumulative ones (status "metrics", broker/job_metrics.h). docs/PROTOCOL.md lists them.
#include <map>
#include <set>
#include <vector>

#include "broker/job_metrics.h"
#include "monitor/exposition.h"
#include "monitor/http_monitor.h"

namespace hlox::monitor {
namespace {

using nlohmann::json;

const json& Field(const json& j, const char* key) {
  static const json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

std::string Text(const json& j, const char* key) {
  const json& v = Field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

void BrokerIdentity(Exposition& e, const json& s) {
  const json& b = Field(s, "broker");
  e.Family("hlox_build_info", "gauge",
           "Constant 1 labelled with the broker's version, protocol, instruction-set level and build id.");
  const json& proto = Field(b, "protocol");
  e.Sample("hlox_build_info",
           {{"version", Text(b, "version")},
            {"protocol", proto.is_null() ? "" : proto.dump()},
            {"isa", Text(b, "isa")},
            {"build", Text(b, "build")}},
           1);
  e.Family("hlox_process_start_time_seconds", "gauge", "Start time of the broker since the Unix epoch in seconds.");
  e.Sample("hlox_process_start_time_seconds", {}, Field(b, "start_time_s"));
}

// The result store's health (broker.h StoreHealth): a full disk holds results unacknowledged.
void Store(Exposition& e, const json& s) {
  const json& b = Field(s, "broker");
  e.Family("hlox_store_full", "gauge", "1 while the result store's disk is full (SUBMIT gets STORE_FULL).");
  const json& full = Field(b, "store_full");
  e.Sample("hlox_store_full", {}, json(full.is_boolean() && full.get<bool>() ? 1 : 0));
  e.Family("hlox_uncommitted_results", "gauge",
           "Finished results held in memory, unacknowledged, because the store could not commit them.");
  e.Sample("hlox_uncommitted_results", {}, Field(b, "uncommitted_results"));
  e.Family("hlox_store_failed_commits_total", "counter", "Result store commits that failed (retried).");
  e.Sample("hlox_store_failed_commits_total", {}, Field(b, "store_failed_commits"));
  e.Family("hlox_store_full_refusals_total", "counter", "SUBMITs answered STORE_FULL.");
  e.Sample("hlox_store_full_refusals_total", {}, Field(b, "store_full_refusals"));
}

void Queues(Exposition& e, const json& s) {
  const json& q = Field(s, "queues");
  e.Family("hlox_queue_pending", "gauge", "Jobs waiting for a worker.");
  e.Sample("hlox_queue_pending", {}, Field(q, "pending"));
  e.Family("hlox_queue_in_flight", "gauge", "Jobs leased to workers.");
  e.Sample("hlox_queue_in_flight", {}, Field(q, "in_flight"));
  e.Family("hlox_campaign_jobs", "gauge", "Jobs per campaign and state (pending, in_flight, done = stored).");
  const json& campaigns = Field(q, "campaigns");
  if (!campaigns.is_object()) return;
  for (auto it = campaigns.begin(); it != campaigns.end(); ++it) {
    for (const char* k : {"pending", "in_flight", "done"}) {
      e.Sample("hlox_campaign_jobs", {{"campaign", it.key()}, {"state", k}}, Field(*it, k));
    }
  }
}

void Totals(Exposition& e, const json& s) {
  const json& t = Field(s, "totals");
  struct Counter {
    const char* key;
    const char* name;
    const char* help;
  };
  static constexpr Counter kCounters[] = {
      {"completed", "hlox_completed_total", "Jobs finished (any final status) since the broker started."},
      {"cache_hits", "hlox_cache_hits_total",
       "Jobs answered from the result cache or coalesced with an identical job in flight."},
      {"requeued", "hlox_requeued_total", "Leases re-queued after a worker died, went silent or crashed."},
      {"lost_workers", "hlox_lost_workers_total", "Workers declared lost."},
      {"lease_expiries", "hlox_lease_expiries_total",
       "Job leases that ended without a result (lost worker or run timeout)."},
      {"rejected_messages", "hlox_rejected_messages_total", "Malformed or hostile messages refused."},
      {"store_reads", "hlox_store_reads_total",
       "Result records read back from the store after being dropped from memory."},
  };
  for (const Counter& c : kCounters) {
    e.Family(c.name, "counter", c.help);
    e.Sample(c.name, {}, Field(t, c.key));
  }
  e.Family("hlox_forbidden_total", "counter",
           "Messages refused for their key's role, an unknown key or a campaign's owner, by "
           "operation and reason.");
  const json& forbidden = Field(t, "forbidden");
  if (forbidden.is_object()) {
    for (auto op = forbidden.begin(); op != forbidden.end(); ++op) {
      if (!op->is_object()) continue;
      for (auto why = op->begin(); why != op->end(); ++why) {
        e.Sample("hlox_forbidden_total", {{"op", op.key()}, {"reason", why.key()}}, *why);
      }
    }
  }
  // Cumulative and seeded from the store at start-up (status "metrics"), unlike totals.by_status,
  // which counts the stored results and may drop when one is re-run.
  e.Family("hlox_jobs_total", "counter",
           "Jobs finished, by final status (continues across restarts with a durable store).");
  const json& by_status = Field(Field(s, "metrics"), "jobs_by_status");
  if (by_status.is_object()) {
    for (auto it = by_status.begin(); it != by_status.end(); ++it) {
      e.Sample("hlox_jobs_total", {{"status", it.key()}}, *it);
    }
  }
  e.Family("hlox_stored_results", "gauge", "Finished jobs in the result store (in memory without --db).");
  e.Sample("hlox_stored_results", {}, Field(t, "stored_results"));
  e.Family("hlox_stored_modules", "gauge", "Distinct HLO modules the broker knows (stored with --db).");
  e.Sample("hlox_stored_modules", {}, Field(t, "modules"));
  e.Family("hlox_resident_result_bytes", "gauge", "Bytes of finished result records held in memory.");
  e.Sample("hlox_resident_result_bytes", {}, Field(t, "resident_result_bytes"));
  e.Family("hlox_throughput_jobs_per_second", "gauge", "Jobs finished per second over the last 10 s.");
  e.Sample("hlox_throughput_jobs_per_second", {}, Field(s, "throughput_jobs_per_s"));
  e.Family("hlox_cost_relative_spread", "gauge", "Median relative spread (MAD/median) of recently measured costs.");
  e.Sample("hlox_cost_relative_spread", {}, Field(s, "cost_spread"));
}

void JobHistograms(Exposition& e, const json& s) {
  const json& m = Field(s, "metrics");
  const std::vector<double> bounds(broker::kJobSecondsBounds.begin(), broker::kJobSecondsBounds.end());
  e.Family("hlox_job_latency_seconds", "histogram", "Submit-to-result latency of finished jobs.");
  e.Histogram("hlox_job_latency_seconds", {}, Field(m, "job_latency_seconds"), bounds);
  const std::pair<const char*, const char*> per_class[] = {
      {"job_queue_wait_seconds", "Time jobs waited in the queue before a worker of the class took them."},
      {"job_run_seconds", "Time from lease to the worker's answer, by the worker's hardware class."},
  };
  for (const auto& [key, help] : per_class) {
    const std::string name = std::string("hlox_") + key;
    e.Family(name, "histogram", help);
    const json& by_class = Field(m, key);
    if (!by_class.is_object()) continue;
    for (auto it = by_class.begin(); it != by_class.end(); ++it) {
      e.Histogram(name, {{"class", it.key()}}, *it, bounds);
    }
  }
}

void Workers(Exposition& e, const json& s) {
  // One entry per worker id: a status with two live workers of one id must not produce two
  // series with the same labels (Prometheus rejects the whole scrape then).
  std::vector<const json*> workers;
  std::set<std::string> seen;
  const json& all = Field(s, "workers");
  if (all.is_array()) {
    for (const json& w : all) {
      if (seen.insert(Text(w, "id")).second) workers.push_back(&w);
    }
  }
  std::map<std::string, int> by_state{{"idle", 0}, {"busy", 0}, {"draining", 0}, {"lost", 0}};
  for (const json* w : workers) by_state[w->value("state", "idle")]++;
  e.Family("hlox_workers", "gauge", "Workers by state (lost: listed for 10 minutes after being lost).");
  for (const auto& [state, n] : by_state) e.Sample("hlox_workers", {{"state", state}}, n);
  // Identity as an info metric (the Prometheus convention: constant 1, joined on `worker`), so
  // the ISA level and CPU model are not extra labels on every per-worker series.
  e.Family("hlox_worker_info", "gauge", "Worker identity: class, instruction-set level, CPU model, build id.");
  for (const json* w : workers) {
    e.Sample("hlox_worker_info",
             {{"worker", Text(*w, "id")}, {"class", Text(*w, "hardware_class")}, {"isa", Text(*w, "isa")},
              {"cpu", Text(*w, "cpu")}, {"build", Text(*w, "build")}},
             1);
  }
  // Live workers per build: more than one series means a mixed fleet.
  e.Family("hlox_worker_builds", "gauge", "Live workers per build id (more than one build: a mixed fleet).");
  const json& builds = Field(s, "worker_builds");
  if (builds.is_object()) {
    for (auto it = builds.begin(); it != builds.end(); ++it) {
      e.Sample("hlox_worker_builds", {{"build", it.key()}}, *it);
    }
  }
  const std::pair<const char*, const char*> counters[] = {
      {"jobs_done", "Jobs a worker finished with status ok since it registered."},
      {"jobs_failed", "Jobs a worker finished with another status, or crashed on, since it registered."},
  };
  for (const auto& [key, help] : counters) {
    const std::string name = std::string("hlox_worker_") + key + "_total";
    e.Family(name, "counter", help);
    for (const json* w : workers) {
      e.Sample(name, {{"worker", Text(*w, "id")}, {"class", Text(*w, "hardware_class")}}, Field(*w, key));
    }
  }
  e.Family("hlox_worker_heartbeat_age_seconds", "gauge", "Seconds since each worker was last heard.");
  for (const json* w : workers) {
    e.Sample("hlox_worker_heartbeat_age_seconds", {{"worker", Text(*w, "id")}}, Field(*w, "last_heartbeat_age_s"));
  }
}

}  // namespace

std::string PrometheusText(const nlohmann::json& status) {
  Exposition e;
  BrokerIdentity(e, status);
  Store(e, status);
  Queues(e, status);
  Totals(e, status);
  JobHistograms(e, status);
  Workers(e, status);
  return e.text();
}

}  // namespace hlox::monitor
