// Broker setup, the poll loop and message routing; see broker.h. Job and worker bookkeeping is
// in broker_jobs.cc, control and status in broker_status.cc.
#include "broker/broker.h"

#include <chrono>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "cost/provenance.h"
#include "protocol/spin_poll.h"

namespace hlox::broker {

using proto::Command;

absl::StatusOr<std::unique_ptr<Broker>> Broker::Create(const BrokerOptions& options) {
  std::unique_ptr<Broker> b(new Broker(options));
  b->instance_ = std::random_device{}() | (uint64_t(std::random_device{}()) << 32) | 1;
  b->started_ms_ = proto::NowMs();
  b->start_time_unix_s_ = std::chrono::duration<double>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  auto store = ResultStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  b->store_ = std::move(*store);
  absl::Status st = b->store_->ForEachResult([&](StoredResult&& r) {
    const size_t bytes = r.record.size();
    DoneJob d{std::move(r.record), std::move(r.campaign), std::move(r.status), r.attempts, true};
    if (!r.cache_key.empty()) b->cache_[r.cache_key] = r.job_id;
    const size_t before = b->done_.size();
    auto it = b->AddDone(std::move(r.job_id), std::move(d));
    if (b->done_.size() > before) b->KeepResident(it->first, bytes);
  });
  if (!st.ok()) return st;
  // Finished-job counters continue from the store, so a restart does not reset them.
  b->job_metrics_.SeedFinished({b->done_by_status_.begin(), b->done_by_status_.end()});
  st = b->store_->ForEachModule(
      [&](std::string&& h, std::string&& t) { b->modules_.emplace(std::move(h), std::move(t)); });
  if (!st.ok()) return st;

  b->control_addr_ =
      options.control_bind.empty() ? proto::ControlAddressFor(options.bind) : options.control_bind;
  b->ctx_ = options.context ? options.context : std::make_shared<zmq::context_t>(1);
  if (absl::Status sec = b->SetUpSecurity(); !sec.ok()) return sec;
  auto front = proto::BindRouter(*b->ctx_, options.bind, b->self_keys_.secret_key);
  if (!front.ok()) return front.status();
  b->front_ = std::make_unique<zmq::socket_t>(std::move(*front));
  if (!options.inproc_bind.empty()) {
    try {
      b->front_->bind(options.inproc_bind);
    } catch (const zmq::error_t& e) {
      return absl::UnavailableError(absl::StrCat("bind ", options.inproc_bind, ": ", e.what()));
    }
  }
  if (b->zap_) HLOX_RETURN_IF_ERROR(b->zap_->Watch(*b->front_, "main"));
  if (!b->control_addr_.empty()) {
    auto control = proto::BindRouter(*b->ctx_, b->control_addr_, b->self_keys_.secret_key);
    if (!control.ok()) return control.status();
    b->control_ = std::make_unique<zmq::socket_t>(std::move(*control));
    if (b->zap_) HLOX_RETURN_IF_ERROR(b->zap_->Watch(*b->control_, "control"));
  }
  b->latencies_.reserve(4096);
  b->host_ = HostName();
  b->cores_ = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  log::broker().info("broker {} on {} (control {}), store '{}': {} results, {} modules reloaded",
                     b->instance_, options.bind, b->control_addr_, options.db_path,
                     b->done_.size(), b->modules_.size());
  return b;
}

absl::Status Broker::SetUpSecurity() {
  if (opts_.curve_secret_file.empty()) {
    if (!opts_.allow_dir.empty()) return absl::InvalidArgumentError("--allow needs --curve-secret");
    for (const std::string& a : {opts_.bind, control_addr_}) {
      if (!a.empty() && !proto::IsLoopbackAddress(a) && !opts_.insecure) {
        return absl::FailedPreconditionError(absl::StrCat(
            "refusing to bind ", a, " (not loopback) without --curve-secret and --allow; "
            "pass --insecure to accept anyone who can reach it"));
      }
    }
    if (!proto::IsLoopbackAddress(opts_.bind)) {
      log::broker().warn("INSECURE: {} is reachable from other hosts without authentication", opts_.bind);
    }
    return absl::OkStatus();
  }
  if (opts_.allow_dir.empty()) return absl::InvalidArgumentError("--curve-secret needs --allow DIR");
  HLOX_ASSIGN_OR_RETURN(std::string secret, proto::ReadZ85KeyFile(opts_.curve_secret_file));
  HLOX_ASSIGN_OR_RETURN(std::string pub, proto::CurvePublicKey(secret));
  HLOX_ASSIGN_OR_RETURN(std::vector<std::string> allowed, proto::LoadAllowList(opts_.allow_dir));
  size_t listed = allowed.size();
  allowed.push_back(*proto::DecodeZ85Key(pub));  // the broker's own helpers (monitor)
  // The ZAP handler must exist before any CURVE socket binds.
  HLOX_ASSIGN_OR_RETURN(zap_, ZapHandler::Start(*ctx_, std::move(allowed)));
  self_keys_ = proto::CurveClientKeys{secret, pub};
  log::broker().info("CURVE on: public key {}, {} allowed keys from {}", pub, listed, opts_.allow_dir);
  return absl::OkStatus();
}

Broker::~Broker() {
  front_.reset();
  control_.reset();
  zap_.reset();
  ctx_.reset();  // a context shared with in-process agents ends with the last of them
}

absl::Status Broker::Run() {
  int64_t next_timer = proto::NowMs() + opts_.heartbeat_ms;
  proto::Received in;
  proto::SpinPoller poller(opts_.spin_us);
  while (!stop_.load() && !shutdown_) {
    std::vector<zmq::pollitem_t> items = {{static_cast<void*>(*front_), 0, ZMQ_POLLIN, 0}};
    if (control_) items.push_back({static_cast<void*>(*control_), 0, ZMQ_POLLIN, 0});
    const int64_t before_poll = proto::NowMs();
    const int64_t wait = std::max<int64_t>(0, next_timer - before_poll);
    try {
      poller.Poll(items.data(), items.size(), wait);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll: ", e.what()));
    }
    const int64_t after_poll = proto::NowMs();
    // A poll that returns far past its timeout means this process was not running (the
    // machine paused, or the host starved it): the workers were no more silent than we were.
    if (after_poll - before_poll - wait > opts_.heartbeat_ms / 2) {
      ForgiveStall(after_poll - before_poll - wait, after_poll);
    }
    // Control first, so status/drain/cancel never wait behind evaluations.
    if (control_) {
      for (int i = 0; i < 64 && proto::RecvMsg(*control_, true, &in); ++i) HandleMessage(in, true);
    }
    for (int i = 0; i < kMaxRecvPerPoll && proto::RecvMsg(*front_, true, &in); ++i) {
      HandleMessage(in, false);
      if (control_ && (i & 255) == 255) {
        for (int j = 0; j < 16 && proto::RecvMsg(*control_, true, &in); ++j) HandleMessage(in, true);
      }
    }
    const int64_t job_sends_before = job_sends_;
    Dispatch();
    FlushCompletions();
    // A job or a result just went out: its answer (DONE, the agent's next SUBMIT) may be back
    // within microseconds, so spin briefly before sleeping in poll, if a core is idle: the
    // local workers that hold a job and the broker itself leave one free.
    if (job_sends_ != job_sends_before &&
        (!opts_.spin_needs_spare_core || local_busy_ + 1 <= cores_)) {
      poller.Arm();
    }
    int64_t now = proto::NowMs();
    if (now - after_poll > opts_.heartbeat_ms / 2) ForgiveStall(now - after_poll, now);
    if (now >= next_timer) {
      OnTimer(now);
      Dispatch();
      FlushCompletions();
      next_timer = now + opts_.heartbeat_ms;
    }
  }
  FlushCompletions();
  log::broker().info("broker {} stopping", instance_);
  return absl::OkStatus();
}

void Broker::HandleMessage(proto::Received& in, bool control_socket) {
  if (in.frames.size() < 1 || in.frames.size() > 2) {
    Reject(in.identity, proto::kErrBadFrame, absl::StrCat(in.frames.size(), " frames"));
    return;
  }
  std::string_view header(static_cast<const char*>(in.frames[0].data()), in.frames[0].size());
  absl::StatusOr<Command> cmd = proto::ParseHeader(header);
  if (!cmd.ok()) {
    std::string msg(cmd.status().message());
    Reject(in.identity, msg.substr(0, msg.find(':')), msg);
    return;
  }
  std::string_view body;
  if (in.frames.size() == 2) {
    body = std::string_view(static_cast<const char*>(in.frames[1].data()), in.frames[1].size());
  }
  if (control_socket && *cmd != Command::kControl) {
    Reject(in.identity, proto::kErrUnknownCommand, "only CONTROL on the control socket");
    return;
  }
  auto wit = workers_.find(in.identity);
  if (wit != workers_.end()) wit->second.last_seen_ms = proto::NowMs();
  switch (*cmd) {
    case Command::kSubmit: OnSubmit(in.identity, body); return;
    case Command::kReady: OnReady(in.identity, body); return;
    case Command::kDone: OnDone(in.identity, body); return;
    case Command::kNeedModule: OnNeedModule(in.identity, body); return;
    case Command::kControl: OnControl(in.identity, body, control_socket); return;
    case Command::kHeartbeat:
      if (wit == workers_.end()) {
        // Agents ping to learn the broker instance; a worker we do not know re-registers.
        SendTo(in.identity, Command::kHeartbeat, proto::Encode(proto::HeartbeatMsg{instance_}),
               false);
      }
      return;
    case Command::kResult: case Command::kError: case Command::kJob: case Command::kReregister:
    case Command::kDisconnect: case Command::kControlReply:
      Reject(in.identity, proto::kErrUnknownCommand, "command is not for the broker");
      return;
  }
}

void Broker::SendTo(const std::string& identity, Command c, const std::string& body,
                    bool to_worker) {
  proto::SendResult r = proto::SendMsg(*front_, identity, c, body);
  if (r == proto::SendResult::kOk) {
    if (c == Command::kJob || c == Command::kResult) ++job_sends_;
    return;
  }
  if (to_worker && r == proto::SendResult::kUnreachable) {
    LoseWorker(identity, "unreachable");
    return;
  }
  // Agents that vanished or are full lose this message; they resubmit and the store answers.
  log::broker().debug("send {} to peer failed ({})", static_cast<char>(c), static_cast<int>(r));
}

void Broker::SendError(const std::string& identity, std::string_view job_id,
                       std::string_view code, const std::string& message) {
  proto::ErrorMsg e{std::string(job_id), std::string(code), message};
  SendTo(identity, Command::kError, proto::Encode(e), false);
}

void Broker::Reject(const std::string& identity, std::string_view code,
                    const std::string& message, std::string_view job_id) {
  ++rejected_;
  log::broker().debug("rejected message: {} {}", std::string(code), message);
  int64_t now = proto::NowMs();
  if (now - rejected_logged_at_ > 5000) {
    log::broker().warn("rejecting bad messages ({} so far), latest: {}", rejected_, message);
    rejected_logged_at_ = now;
  }
  proto::ErrorMsg e{std::string(job_id), std::string(code), message.substr(0, 512)};
  // The reply goes back on whichever socket it came from; a failed send is just dropped.
  proto::SendResult r = proto::SendMsg(*front_, identity, Command::kError, proto::Encode(e));
  if (r != proto::SendResult::kOk && control_) {
    proto::SendMsg(*control_, identity, Command::kError, proto::Encode(e));
  }
}

void Broker::FlushCompletions() {
  if (!to_commit_.empty()) {
    absl::Status st = store_->CommitResults(to_commit_);
    if (!st.ok()) {
      // Not acknowledged: keep everything and try again next round.
      log::broker().error("store commit failed, will retry: {}", std::string(st.message()));
      return;
    }
    for (const StoredResult& r : to_commit_) {
      auto it = done_.find(r.job_id);
      if (it == done_.end() || it->second.committed) continue;
      it->second.committed = true;
      KeepResident(r.job_id, it->second.record.size());
    }
    to_commit_.clear();
  }
  for (Ack& a : acks_) SendTo(a.agent, Command::kResult, proto::Encode(a.msg), false);
  acks_.clear();
}

std::unordered_map<std::string, Broker::DoneJob>::iterator Broker::AddDone(std::string job_id,
                                                                           DoneJob d) {
  auto [it, fresh] = done_.try_emplace(std::move(job_id), std::move(d));
  if (fresh) {
    ++done_by_campaign_[it->second.campaign];
    ++done_by_status_[it->second.status];
  }
  return it;
}

void Broker::EraseDone(std::unordered_map<std::string, DoneJob>::iterator it) {
  if (--done_by_campaign_[it->second.campaign] == 0) done_by_campaign_.erase(it->second.campaign);
  if (--done_by_status_[it->second.status] == 0) done_by_status_.erase(it->second.status);
  done_.erase(it);
}

void Broker::KeepResident(const std::string& job_id, size_t bytes) {
  resident_.emplace_back(job_id, bytes);
  resident_bytes_ += bytes;
  while (resident_bytes_ > opts_.result_memory_bytes && !resident_.empty()) {
    auto [id, size] = std::move(resident_.front());
    resident_.pop_front();
    resident_bytes_ -= size;
    auto it = done_.find(id);
    if (it == done_.end() || it->second.in_store_only) continue;
    std::string().swap(it->second.record);  // the store has it
    it->second.in_store_only = true;
  }
}

absl::StatusOr<std::string> Broker::RecordOf(const std::string& job_id, const DoneJob& d) {
  if (!d.in_store_only) return d.record;
  ++store_reads_;
  return store_->ReadRecord(job_id);
}

void Broker::ForgiveStall(int64_t stall_ms, int64_t now_ms) {
  log::broker().info("broker did not run for {} ms; not counted as its workers' silence",
                     stall_ms);
  for (auto& [id, w] : workers_) w.last_seen_ms = std::min(now_ms, w.last_seen_ms + stall_ms);
  for (auto& [id, job] : jobs_) {
    if (job->running) job->lease_deadline_ms += stall_ms;
  }
}

void Broker::OnTimer(int64_t now_ms) {
  const std::string hb = proto::Encode(proto::HeartbeatMsg{instance_});
  const int64_t expiry = int64_t(opts_.heartbeat_ms) * opts_.liveness;
  std::vector<std::string> lost;
  for (auto& [id, w] : workers_) {
    if (now_ms - w.last_seen_ms > expiry) lost.push_back(id);
  }
  for (const std::string& id : lost) LoseWorker(id, "silent");
  // A failed send may lose (erase) a worker: iterate over a copy of the identities.
  std::vector<std::string> ids;
  ids.reserve(workers_.size());
  for (auto& [id, w] : workers_) ids.push_back(id);
  for (const std::string& id : ids) SendTo(id, Command::kHeartbeat, hb, true);
  ExpireJobs(now_ms);
}

}  // namespace hlox::broker
