// Broker setup, the poll loop and message routing; see broker.h. SUBMIT is in broker_submit.cc,
// workers and leases in broker_jobs.cc, control and status in broker_status.cc.
#include "broker/broker.h"

#include <chrono>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "cost/provenance.h"
#include "protocol/frames.h"
#include "protocol/spin_poll.h"

namespace hlox::broker {

using proto::Command;

Broker::Broker(const BrokerOptions& o, std::unique_ptr<ResultStore> store, std::string host)
    : opts_(o),
      store_(std::move(store)),
      queue_(o.poison_crashes),
      workers_(std::move(host)),
      results_(store_.get(), o.result_memory_bytes) {}

absl::StatusOr<std::unique_ptr<Broker>> Broker::Create(const BrokerOptions& options,
                                                       std::unique_ptr<DoneReader> done_reader) {
  auto store = ResultStore::Open(options.db_path);
  if (!store.ok()) return store.status();
  auto owners = CampaignOwners::Open(options.db_path);
  if (!owners.ok()) return owners.status();
  HLOX_RETURN_IF_ERROR((*store)->SetMaxBytes(options.db_max_bytes));
  std::unique_ptr<Broker> b(new Broker(options, std::move(*store), HostName()));
  b->owners_ = std::move(*owners);
  b->done_reader_ = done_reader ? std::move(done_reader) : std::make_unique<ScanDoneReader>();
  b->instance_ = std::random_device{}() | (uint64_t(std::random_device{}()) << 32) | 1;
  b->started_ms_ = proto::NowMs();
  b->start_time_unix_s_ = std::chrono::duration<double>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  HLOX_RETURN_IF_ERROR(b->results_.Reload());
  // Finished-job counters continue from the store, so a restart does not reset them.
  const auto& by_status = b->results_.done_by_status();
  b->stats_.metrics().SeedFinished({by_status.begin(), by_status.end()});
  absl::Status st = b->store_->ForEachModule(
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
  b->cores_ = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  log::broker().info("broker {} on {} (control {}), store '{}': {} results, {} modules reloaded",
                     b->instance_, options.bind, b->control_addr_, options.db_path,
                     b->results_.done_count(), b->modules_.size());
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
  // The broker's own key (its monitor's) is admin.
  HLOX_ASSIGN_OR_RETURN(roles_, KeyRoles::Load(opts_.allow_dir, pub));
  // The ZAP handler must exist before any CURVE socket binds.
  HLOX_ASSIGN_OR_RETURN(zap_, ZapHandler::Start(*ctx_, roles_.BinaryKeys()));
  self_keys_ = proto::CurveClientKeys{secret, pub};
  log::broker().info("CURVE on: public key {}, {} allowed keys from {} ({}, own key included)",
                     pub, roles_.size() - 1, opts_.allow_dir, roles_.Summary());
  if (roles_.legacy() > 0) {
    log::broker().info("{} keys directly in {} are worker+agent (not admin); put keys in its "
                       "worker/, agent/ or admin/ subfolder to give one role",
                       roles_.legacy(), opts_.allow_dir);
  }
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
    if (reload_requested_.exchange(false)) {
      if (absl::Status st = ReloadAllowList(); !st.ok()) {
        log::broker().error("allow-list reload failed, keeping the old list: {}",
                            std::string(st.message()));
      }
    }
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
        (!opts_.spin_needs_spare_core || workers_.local_busy() + 1 <= cores_)) {
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
  absl::StatusOr<proto::Frames> f = proto::SplitFrames(in);
  if (!f.ok()) {
    Reject(in.identity, proto::FrameErrorCode(f.status()), std::string(f.status().message()));
    return;
  }
  const Command cmd = f->command;
  const std::string_view body = f->body;
  if (control_socket && cmd != Command::kControl) {
    Reject(in.identity, proto::kErrUnknownCommand, "only CONTROL on the control socket");
    return;
  }
  IdentifyPeer(in);
  Worker* worker = workers_.Find(in.identity);
  if (worker) worker->last_seen_ms = proto::NowMs();
  switch (cmd) {
    case Command::kSubmit:
      if (Permit(kRoleAgent, in.identity, "submit", body)) OnSubmit(in.identity, body);
      return;
    case Command::kReady:
      if (Permit(kRoleWorker, in.identity, "ready")) OnReady(in.identity, body);
      return;
    case Command::kDone:
      if (Permit(kRoleWorker, in.identity, "done")) OnDone(in.identity, body);
      return;
    case Command::kNeedModule:
      if (Permit(kRoleWorker, in.identity, "need_module")) OnNeedModule(in.identity, body);
      return;
    case Command::kControl: OnControl(in.identity, body, control_socket); return;
    case Command::kHeartbeat:
      // Any role may ping (agents learn the broker instance); a key with none may not.
      if (peer_roles_ == kRoleNone) {
        Permit(kRoleAdmin, in.identity, "heartbeat");
        return;
      }
      if (!worker) {
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
  ++stats_.rejected;
  log::broker().debug("rejected message: {} {}", std::string(code), message);
  int64_t now = proto::NowMs();
  if (now - rejected_logged_at_ > 5000) {
    log::broker().warn("rejecting bad messages ({} so far), latest: {}", stats_.rejected,
                       message);
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
    const int64_t now = proto::NowMs();
    if (!store_health_.error.empty() && now < store_health_.retry_at_ms) return;  // held
    absl::Status st = store_->CommitResults(to_commit_);
    if (!st.ok()) {
      // Not acknowledged: keep everything and try again on the timer.
      NoteCommitFailure(st, now);
      return;
    }
    if (!store_health_.error.empty()) {
      log::broker().info("result store accepts commits again after {:.1f} s: {} held results "
                         "committed", double(now - store_health_.failing_since_ms) / 1000.0,
                         to_commit_.size());
      store_health_.full = false;
      store_health_.error.clear();
    }
    for (const StoredResult& r : to_commit_) results_.MarkCommitted(r.job_id);
    to_commit_.clear();
  }
  for (Ack& a : acks_) SendTo(a.agent, Command::kResult, proto::Encode(a.msg), false);
  acks_.clear();
}

void Broker::NoteCommitFailure(const absl::Status& st, int64_t now_ms) {
  const bool full = absl::IsResourceExhausted(st);
  const bool changed = store_health_.error.empty() || full != store_health_.full;
  if (store_health_.error.empty()) store_health_.failing_since_ms = now_ms;
  store_health_.full = full;
  store_health_.error = std::string(st.message());
  store_health_.retry_at_ms = now_ms + opts_.heartbeat_ms;
  ++store_health_.failed_commits;
  if (changed || now_ms - store_logged_at_ > 10000) {
    log::broker().error("{}: {} finished results held unacknowledged, retrying every {} ms{}",
                        full ? "result store disk full" : "result store commit failed",
                        to_commit_.size(), opts_.heartbeat_ms,
                        full ? "; SUBMIT answers STORE_FULL meanwhile" : "");
    log::broker().error("store error: {}", store_health_.error);
    store_logged_at_ = now_ms;
  }
}

void Broker::ForgiveStall(int64_t stall_ms, int64_t now_ms) {
  log::broker().info("broker did not run for {} ms; not counted as its workers' silence",
                     stall_ms);
  workers_.Forgive(stall_ms, now_ms);
  queue_.ExtendLeases(stall_ms);
}

void Broker::OnTimer(int64_t now_ms) {
  const std::string hb = proto::Encode(proto::HeartbeatMsg{instance_});
  const int64_t expiry = int64_t(opts_.heartbeat_ms) * opts_.liveness;
  for (const std::string& id : workers_.Silent(now_ms, expiry)) LoseWorker(id, "silent");
  // A failed send may lose (erase) a worker: iterate over a copy of the identities.
  for (const std::string& id : workers_.Identities()) SendTo(id, Command::kHeartbeat, hb, true);
  ExpireJobs(now_ms);
}

}  // namespace hlox::broker
