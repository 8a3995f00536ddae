// The broker's control channel (status, drain, cancel, shutdown) and the status JSON that
// `hlox status`, metrics and the dashboard read. Control runs on the loop thread between
// messages; it never waits on an evaluation because the broker never does.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/cpu_isa.h"
#include "common/logging.h"
#include "nlohmann/json.hpp"

namespace hlox::broker {

using proto::Command;

void Broker::RecordFinished(const std::string& status, double seconds) {
  job_metrics_.OnFinished(status, seconds);
  if (latencies_.size() < 4096) {
    latencies_.push_back(seconds);
  } else {
    latencies_[latency_next_] = seconds;
    latency_next_ = (latency_next_ + 1) % latencies_.size();
  }
  int64_t sec = proto::NowMs() / 1000;
  int slot = static_cast<int>(sec % 16);
  if (tput_second_[slot] != sec) {
    tput_second_[slot] = sec;
    tput_bucket_[slot] = 0;
  }
  ++tput_bucket_[slot];
}

void Broker::RecordSpread(const proto::RecordSummary& r) {
  if (r.median <= 0 || r.samples == 0) return;
  double spread = r.mad / r.median;
  if (spreads_.size() < 4096) {
    spreads_.push_back(spread);
  } else {
    spreads_[spread_next_] = spread;
    spread_next_ = (spread_next_ + 1) % spreads_.size();
  }
}

std::string Broker::StatusJson() const {
  using nlohmann::json;
  int64_t now = proto::NowMs();
  // One worker's entry; a lost one has no jobs in flight and its uptime ended when it was lost.
  auto worker_json = [now](const Worker& w, const char* state, size_t in_flight, int64_t until_ms) {
    return json{{"id", w.caps.worker_id}, {"host", w.caps.host},
                {"hardware_class", w.caps.hardware_class}, {"isa", w.caps.isa},
                {"cpu", w.caps.cpu}, {"state", state}, {"jobs_done", w.done},
                {"jobs_failed", w.failed}, {"in_flight", in_flight}, {"credit", w.caps.credit},
                {"cores", w.caps.cores}, {"threads", w.caps.threads},
                {"last_heartbeat_age_s", double(now - w.last_seen_ms) / 1000.0},
                {"uptime_s", double(until_ms - w.registered_ms) / 1000.0},
                {"version", w.caps.version}};
  };
  json workers = json::array();
  for (const auto& [id, w] : workers_) {
    const char* state = w.draining ? "draining" : (w.jobs.empty() ? "idle" : "busy");
    workers.push_back(worker_json(w, state, w.jobs.size(), now));
  }
  // Lost workers stay listed (state "lost") for 10 minutes unless the same worker id rejoined.
  std::set<std::string> live;
  for (const auto& [id, w] : workers_) live.insert(w.caps.worker_id);
  for (const auto& [lost_ms, w] : lost_recent_) {
    if (now - lost_ms > 600000 || live.count(w.caps.worker_id)) continue;
    live.insert(w.caps.worker_id);
    workers.push_back(worker_json(w, "lost", 0, lost_ms));
  }
  json campaigns = json::object();
  for (const auto& [id, job] : jobs_) {
    json& c = campaigns[job->spec.campaign];
    if (c.is_null()) c = {{"pending", 0}, {"in_flight", 0}, {"done", 0}};
    c[job->running ? "in_flight" : "pending"] = c[job->running ? "in_flight" : "pending"].get<int64_t>() + 1;
  }
  for (const auto& [name, count] : done_by_campaign_) {
    json& c = campaigns[name];
    if (c.is_null()) c = {{"pending", 0}, {"in_flight", 0}, {"done", 0}};
    c["done"] = count;
  }
  // Throughput: completions over the last 10 full seconds.
  int64_t sec = now / 1000, recent = 0;
  for (int i = 0; i < 16; ++i) {
    if (tput_second_[i] < sec && tput_second_[i] >= sec - 10) recent += tput_bucket_[i];
  }
  std::vector<double> lat = latencies_;
  auto pct = [&](double p) -> double {
    if (lat.empty()) return 0;
    size_t k = std::min(lat.size() - 1, static_cast<size_t>(p * double(lat.size())));
    std::nth_element(lat.begin(), lat.begin() + static_cast<std::ptrdiff_t>(k), lat.end());
    return lat[k];
  };
  // Latency histogram over the recent window only (the cumulative one is in "metrics").
  json buckets = json::array();
  double lat_sum = 0;
  for (double v : lat) lat_sum += v;
  for (double le : {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 30.0}) {
    buckets.push_back({le, std::count_if(lat.begin(), lat.end(), [&](double v) { return v <= le; })});
  }
  buckets.push_back({nullptr, lat.size()});
  json by_status = json::object();
  for (const auto& [name, count] : done_by_status_) by_status[name] = count;
  std::vector<double> spreads = spreads_;
  double spread = 0;
  if (!spreads.empty()) {
    std::nth_element(spreads.begin(), spreads.begin() + spreads.size() / 2, spreads.end());
    spread = spreads[spreads.size() / 2];
  }
  json j = {{"broker", {{"instance", instance_}, {"uptime_s", double(now - started_ms_) / 1000.0},
                        {"version", HLOX_VERSION}, {"protocol", proto::kVersion},
                        {"durable", store_->durable()}, {"start_time_s", start_time_unix_s_},
                        {"isa", std::string(IsaName(CpuIsa()))}}},
            {"workers", workers},
            {"queues", {{"pending", pending_count_}, {"in_flight", running_count_},
                        {"campaigns", campaigns}}},
            {"totals", {{"completed", completed_total_}, {"cache_hits", cache_hits_},
                        {"rejected_messages", rejected_}, {"requeued", requeued_},
                        {"lost_workers", lost_workers_}, {"stored_results", done_.size()},
                        {"modules", modules_.size()}, {"by_status", by_status},
                        {"lease_expiries", lease_expiries_},
                        {"resident_result_bytes", resident_bytes_}, {"store_reads", store_reads_}}},
            {"cost_spread", spread},
            {"throughput_jobs_per_s", double(recent) / 10.0},
            {"latency_s", {{"p50", pct(0.50)}, {"p99", pct(0.99)}, {"samples", lat.size()},
                           {"sum", lat_sum}, {"buckets", buckets}}},
            {"metrics", job_metrics_.ToJson()}};
  return j.dump();
}

void Broker::OnControl(const std::string& identity, std::string_view body, bool control_socket) {
  zmq::socket_t& sock = control_socket ? *control_ : *front_;
  auto reply = [&](const proto::ControlReplyMsg& r) {
    if (proto::SendMsg(sock, identity, Command::kControlReply, proto::Encode(r)) !=
        proto::SendResult::kOk) {
      log::broker().debug("control reply dropped");
    }
  };
  absl::StatusOr<proto::ControlMsg> m = proto::DecodeControl(body);
  if (!m.ok()) {
    ++rejected_;
    reply({false, absl::StrCat(std::string(proto::ErrorCodeFor(m.status())), ": ", m.status().message()), ""});
    return;
  }
  log::broker().info("control: {} {}", m->op, m->target);
  if (m->op == "status") {
    reply({true, "", StatusJson()});
  } else if (m->op == "drain") {
    Worker* w = nullptr;
    for (auto& [id, cand] : workers_) {
      if (cand.caps.worker_id == m->target || id == m->target) w = &cand;
    }
    if (!w) {
      reply({false, absl::StrCat("no worker '", m->target, "'"), ""});
      return;
    }
    w->draining = true;
    reply({true, absl::StrCat("draining ", m->target, " (", w->jobs.size(), " jobs left)"), ""});
    if (w->jobs.empty()) {
      SendTo(w->identity, Command::kDisconnect, std::string(), false);
      workers_.erase(w->identity);
    }
  } else if (m->op == "cancel") {
    cancelled_.insert(m->target);
    std::vector<std::string> ids;
    for (auto& [id, job] : jobs_) {
      if (job->spec.campaign == m->target) ids.push_back(id);
    }
    for (const std::string& id : ids) CompleteWith(id, JobStatus::kCancelled, "campaign cancelled");
    FlushCompletions();
    reply({true, absl::StrCat("cancelled ", ids.size(), " jobs of '", m->target, "'"), ""});
  } else if (m->op == "shutdown") {
    shutdown_ = true;
    reply({true, "shutting down", ""});
  } else {
    ++rejected_;
    reply({false, absl::StrCat("unknown control op '", m->op, "'"), ""});
  }
}

}  // namespace hlox::broker
