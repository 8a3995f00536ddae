// The broker's control channel (status, drain, cancel, shutdown) and the status JSON that
// `hlox status`, metrics and the dashboard read. Control runs on the loop thread between
// messages; it never waits on an evaluation because the broker never does.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "broker/broker.h"
#include "common/build_info.h"
#include "common/cpu_isa.h"
#include "common/logging.h"
#include "nlohmann/json.hpp"

namespace hlox::broker {

using proto::Command;

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
                {"version", w.caps.version}, {"build", w.caps.build}};
  };
  json workers = json::array();
  // Live workers per build id ("" for workers that predate build ids): more than one key is a
  // mixed fleet, which `hlox status` points out.
  std::map<std::string, int64_t> builds;
  for (const auto& [id, w] : workers_.workers()) {
    const char* state = w.draining ? "draining" : (w.jobs.empty() ? "idle" : "busy");
    workers.push_back(worker_json(w, state, w.jobs.size(), now));
    ++builds[w.caps.build];
  }
  // Lost workers stay listed (state "lost") for 10 minutes unless the same worker id rejoined.
  std::set<std::string> live;
  for (const auto& [id, w] : workers_.workers()) live.insert(w.caps.worker_id);
  for (const auto& [lost_ms, w] : workers_.lost_recent()) {
    if (now - lost_ms > 600000 || live.count(w.caps.worker_id)) continue;
    live.insert(w.caps.worker_id);
    workers.push_back(worker_json(w, "lost", 0, lost_ms));
  }
  json campaigns = json::object();
  for (const auto& [id, job] : queue_.jobs()) {
    json& c = campaigns[job->spec.campaign];
    if (c.is_null()) c = {{"pending", 0}, {"in_flight", 0}, {"done", 0}};
    c[job->running ? "in_flight" : "pending"] = c[job->running ? "in_flight" : "pending"].get<int64_t>() + 1;
  }
  for (const auto& [name, count] : results_.done_by_campaign()) {
    json& c = campaigns[name];
    if (c.is_null()) c = {{"pending", 0}, {"in_flight", 0}, {"done", 0}};
    c["done"] = count;
  }
  json forbidden = json::object();
  for (const auto& [op, reasons] : stats_.forbidden) {
    for (const auto& [reason, count] : reasons) forbidden[op][reason] = count;
  }
  json security = {{"curve", zap_ != nullptr}, {"campaign_owners", owners_->size()}};
  if (zap_) {
    security["keys"] = {{"worker", roles_.Count(kRoleWorker)}, {"agent", roles_.Count(kRoleAgent)},
                        {"admin", roles_.Count(kRoleAdmin)}, {"legacy", roles_.legacy()}};
  }
  json by_status = json::object();
  for (const auto& [name, count] : results_.done_by_status()) by_status[name] = count;
  json j = {{"broker", {{"instance", instance_}, {"uptime_s", double(now - started_ms_) / 1000.0},
                        {"version", HLOX_VERSION}, {"protocol", proto::kVersion},
                        {"durable", store_->durable()}, {"start_time_s", start_time_unix_s_},
                        {"isa", std::string(IsaName(CpuIsa()))},
                        {"build", AnnouncedBuildId()},
                        {"store_full", store_health_.full},
                        {"store_error", store_health_.error},
                        {"uncommitted_results", to_commit_.size()},
                        {"store_failed_commits", store_health_.failed_commits},
                        {"store_full_refusals", store_health_.refused_submits}}},
            {"security", security},
            {"workers", workers},
            {"worker_builds", builds},
            {"queues", {{"pending", queue_.pending()}, {"in_flight", queue_.running()},
                        {"campaigns", campaigns}}},
            {"totals", {{"completed", stats_.completed}, {"cache_hits", stats_.cache_hits},
                        {"rejected_messages", stats_.rejected}, {"requeued", stats_.requeued},
                        {"lost_workers", stats_.lost_workers}, {"forbidden", forbidden},
                        {"stored_results", results_.done_count()},
                        {"modules", modules_.size()}, {"by_status", by_status},
                        {"lease_expiries", stats_.lease_expiries},
                        {"resident_result_bytes", results_.resident_bytes()},
                        {"store_reads", results_.store_reads()}}},
            {"cost_spread", stats_.MedianSpread()},
            {"throughput_jobs_per_s", stats_.Throughput(now)},
            {"latency_s", stats_.LatencyJson()},
            {"metrics", stats_.metrics().ToJson()}};
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
    ++stats_.rejected;
    reply({false, absl::StrCat(std::string(proto::ErrorCodeFor(m.status())), ": ", m.status().message()), ""});
    return;
  }
  log::broker().info("control: {} {}", m->op, m->target);
  // Checked on both sockets: the main socket accepts CONTROL too.
  std::string reason;
  if (std::string why = ControlRefusal(m->op, m->target, &reason); !why.empty()) {
    // Only known op names become counter labels, so a hostile peer cannot grow the map.
    const bool known = m->op == "status" || m->op == "drain" || m->op == "cancel" ||
                       m->op == "shutdown";
    CountForbidden(known ? m->op : "other", reason.c_str());
    log::broker().warn("control {} refused: {}", m->op, why);
    reply({false, absl::StrCat(proto::kErrForbidden, ": ", why), ""});
    return;
  }
  if (m->op == "status") {
    reply({true, "", StatusJson()});
  } else if (m->op == "drain") {
    Worker* w = workers_.FindByName(m->target);
    if (!w) {
      reply({false, absl::StrCat("no worker '", m->target, "'"), ""});
      return;
    }
    w->draining = true;
    reply({true, absl::StrCat("draining ", m->target, " (", w->jobs.size(), " jobs left)"), ""});
    if (w->jobs.empty()) {
      const std::string identity = w->identity;
      SendTo(identity, Command::kDisconnect, std::string(), false);
      workers_.Remove(identity);
    }
  } else if (m->op == "cancel") {
    std::vector<std::string> ids = queue_.Cancel(m->target);
    for (const std::string& id : ids) CompleteWith(id, JobStatus::kCancelled, "campaign cancelled");
    FlushCompletions();
    reply({true, absl::StrCat("cancelled ", ids.size(), " jobs of '", m->target, "'"), ""});
  } else if (m->op == "shutdown") {
    shutdown_ = true;
    reply({true, "shutting down", ""});
  } else {
    ++stats_.rejected;
    reply({false, absl::StrCat("unknown control op '", m->op, "'"), ""});
  }
}

}  // namespace hlox::broker
