// The agent client's socket work and queues; see client.h.
//
// One socket, two possible users. A caller inside Submit/Next/Poll does the socket I/O itself
// when nobody else is using it (no hand-off between threads on the hot path: a tight
// submit-then-wait loop never wakes another thread); the background thread takes the socket
// only after the callers have left it alone for kCallerLingerMs, so heartbeats, resubmission
// and result collection go on while the caller is busy elsewhere. Ownership changes under mu_
// (which also orders the socket's memory between threads, as ZeroMQ requires); whoever owns the
// socket polls an eventfd with it, so Submit from another thread and a caller asking for the
// socket can wake it.
#include "client/client.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "client/embedded.h"
#include "common/logging.h"
#include "protocol/frames.h"
#include "protocol/zmq_util.h"

namespace hlox::client {

using proto::Command;

namespace {
constexpr int64_t kCallerLingerMs = 2;  // idle callers keep the socket this long
}  // namespace

class Client::Impl {
 public:
  Impl(std::string address, ClientOptions o) : address_(std::move(address)), opts_(std::move(o)) {
    opts_.max_in_flight = std::max<size_t>(1, opts_.max_in_flight);
    if (opts_.identity.empty()) {
      std::random_device rd;
      opts_.identity = absl::StrCat("agent-", rd(), "-", rd());
    }
  }
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_.store(true);
    }
    cv_.notify_all();
    io_cv_.notify_all();
    room_cv_.notify_all();
    Wake();
    if (io_.joinable()) io_.join();
    sock_.reset();
    if (event_fd_ >= 0) ::close(event_fd_);
  }

  absl::Status Start() {
    event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (event_fd_ < 0) return absl::InternalError("eventfd failed");
    if (opts_.local_inproc && !opts_.curve.enabled()) {  // a fleet of this process (embedded.h)
      LocalEndpoint local = LocalEndpointFor(address_);
      if (local.context) {
        local_ctx_ = std::move(local.context);
        address_ = local.inproc;
      }
    }
    auto s = proto::ConnectDealer(Ctx(), address_, opts_.identity, &opts_.curve);
    if (!s.ok()) return s.status();
    sock_ = std::make_unique<zmq::socket_t>(std::move(*s));
    last_heard_ = silent_since_ = proto::NowMs();
    io_ = std::thread([this] { IoMain(); });
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Submit(JobSpec job) {
    if (!job.module_text || job.module_text->empty()) {
      return absl::InvalidArgumentError("job has no module text");
    }
    if (job.module_text->size() > proto::kMaxModuleBytes) {
      return absl::ResourceExhaustedError("module larger than the protocol limit");
    }
    if (!proto::IsKnownKind(job.kind)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown job kind '", job.kind, "'"));
    }
    if (!proto::KindCacheable(job.kind)) job.use_cache = false;  // a verdict is measured afresh
    std::unique_lock<std::mutex> lock(mu_);
    if (job.module_hash.empty()) {
      // Agents submit many jobs of one module: hash each text once.
      if (job.module_text != last_text_) {
        lock.unlock();
        std::string h = proto::TextHash(*job.module_text);
        lock.lock();
        last_text_ = job.module_text;
        last_hash_ = std::move(h);
      }
      job.module_hash = last_hash_;
    }
    if (job.id.empty()) job.id = absl::StrCat(opts_.identity, "-", ++next_id_);
    while (jobs_.size() >= opts_.max_in_flight && !stop_.load()) {
      if (owner_ != Owner::kNone) {
        // The socket's owner collects the results that make room; wait until the backlog is
        // down to the low-water mark (or the socket is free), so a full pipeline wakes this
        // thread once per batch of results instead of once per result.
        ++submitters_waiting_;
        room_cv_.wait(lock, [&] {
          return jobs_.size() < LowWater() || owner_ == Owner::kNone || stop_.load();
        });
        --submitters_waiting_;
        continue;
      }
      owner_ = Owner::kCaller;  // nobody is collecting: do it here
      lock.unlock();
      Pump(opts_.heartbeat_ms);
      lock.lock();
      ReleaseLocked();
    }
    if (jobs_.count(job.id) || handed_out_.count(job.id)) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate job id ", job.id));
    }
    std::string id = job.id;
    modules_.try_emplace(job.module_hash, job.module_text);  // no node built when known
    jobs_.emplace(id, std::move(job));
    outbox_.push_back(id);
    if (owner_ == Owner::kNone) {
      // Nobody is on the socket: send from this thread (non-blocking) and leave.
      owner_ = Owner::kCaller;
      DrainOutboxLocked(proto::NowMs());
      ReleaseLocked();
    } else {
      lock.unlock();
      Wake();
    }
    return id;
  }

  std::optional<JobResult> Next(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!results_.empty()) {
        JobResult r = std::move(results_.front());
        results_.pop_front();
        return r;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (stop_.load()) return std::nullopt;
      if (owner_ == Owner::kCaller) {
        // Another caller thread is on the socket; it hands results over through cv_.
        if (left.count() <= 0) return std::nullopt;
        cv_.wait_until(lock, deadline, [&] {
          return !results_.empty() || owner_ != Owner::kCaller || stop_.load();
        });
        continue;
      }
      if (!AcquireLocked(lock, deadline)) {
        if (stop_.load() || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
        continue;
      }
      lock.unlock();
      Pump(std::max<int64_t>(0, left.count()));
      lock.lock();
      ReleaseLocked();
      if (results_.empty() && left.count() <= 0) return std::nullopt;
    }
  }

  std::vector<JobResult> Poll() {
    std::unique_lock<std::mutex> lock(mu_);
    if (owner_ == Owner::kNone) {  // collect what the socket holds now, without waiting
      owner_ = Owner::kCaller;
      lock.unlock();
      Pump(0);
      lock.lock();
      ReleaseLocked();
    }
    std::vector<JobResult> out(std::make_move_iterator(results_.begin()),
                               std::make_move_iterator(results_.end()));
    results_.clear();
    return out;
  }

  size_t unfinished() const {
    std::lock_guard<std::mutex> lock(mu_);
    return jobs_.size() + results_.size();
  }
  int64_t resubmissions() const { return resubmissions_.load(); }

 private:
  enum class Owner { kNone, kIoThread, kCaller };

  void Wake() {
    if (wake_pending_.exchange(true)) return;  // one wake-up at a time is enough
    uint64_t one = 1;
    if (event_fd_ >= 0 && ::write(event_fd_, &one, sizeof(one)) < 0) {}
  }

  // Makes this caller the socket's owner, asking the background thread to hand it over if it
  // holds it; false when the client is stopping, or when another caller took the socket first
  // and kept it past `deadline`. Caller holds mu_ and owner_ != kCaller.
  bool AcquireLocked(std::unique_lock<std::mutex>& lock,
                     std::chrono::steady_clock::time_point deadline) {
    if (owner_ == Owner::kIoThread) {
      ++callers_waiting_;
      lock.unlock();
      Wake();
      lock.lock();
      // The hand-over itself is quick; past the deadline keep waiting only while the
      // background thread still holds the socket (it is about to let go).
      while (owner_ != Owner::kNone && !stop_.load()) {
        if (owner_ == Owner::kIoThread) {
          cv_.wait(lock);
        } else if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
          break;
        }
      }
      --callers_waiting_;
    }
    if (stop_.load() || owner_ != Owner::kNone) return false;
    owner_ = Owner::kCaller;
    return true;
  }

  // A caller gives the socket up; caller holds mu_. Wakes other callers only: the background
  // thread looks again on its own timer, so a tight caller loop never wakes it.
  void ReleaseLocked() {
    owner_ = Owner::kNone;
    released_ms_ = proto::NowMs();
    cv_.notify_all();
    if (submitters_waiting_ > 0) room_cv_.notify_all();
  }

  // Back-pressure hysteresis: a blocked Submit resumes once the unfinished jobs drop below
  // this (max_in_flight less an eighth).
  size_t LowWater() const { return opts_.max_in_flight - opts_.max_in_flight / 8; }

  // Finishes job `id` with `r` (once); caller holds mu_.
  void FinishLocked(const std::string& id, JobResult r) {
    if (jobs_.erase(id) == 0) return;  // duplicate result (resubmission): already handed out
    if (submitters_waiting_ > 0 && jobs_.size() + 1 == LowWater()) room_cv_.notify_all();
    handed_out_.insert(id);
    results_.push_back(std::move(r));
  }

  void FailLocked(const std::string& id, const std::string& why) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return;
    JobResult r;
    r.job_id = id;
    r.record.status = JobStatus::kRunError;
    r.record.message = why;
    r.record.text_hash = it->second.module_hash;
    r.record.pipeline = it->second.pipeline;
    FinishLocked(id, std::move(r));
  }

  void ResubmitAllLocked(const char* why) {
    log::agent().info("resubmitting {} unfinished jobs ({})", jobs_.size(), why);
    ++resubmissions_;
    sent_modules_.clear();
    outbox_.clear();
    for (auto& [id, job] : jobs_) outbox_.push_back(id);
  }

  // Sends queued submissions until the socket would block; caller holds mu_ and owns the socket.
  void DrainOutboxLocked(int64_t now) {
    if (now < paused_until_) return;
    while (!outbox_.empty()) {
      auto it = jobs_.find(outbox_.front());
      if (it == jobs_.end()) { outbox_.pop_front(); continue; }
      const JobSpec& j = it->second;
      proto::SubmitMsg m;
      m.job_id = j.id;
      m.campaign = j.campaign;
      m.module_hash = j.module_hash;
      bool new_module = !sent_modules_.count(j.module_hash);
      if (new_module) m.module_text = *j.module_text;
      m.pipeline = j.pipeline;
      m.decisions = j.decisions;
      m.hardware_class = j.hardware_class;
      m.queue_timeout_ms = j.queue_timeout_ms;
      m.run_timeout_ms = j.run_timeout_ms;
      m.use_cache = j.use_cache;
      m.kind = j.kind;
      m.paired = j.paired;
      if (proto::SendMsg(*sock_, "", Command::kSubmit, proto::Encode(m)) != proto::SendResult::kOk) {
        return;  // socket full: try again next round
      }
      if (new_module) sent_modules_.insert(j.module_hash);
      outbox_.pop_front();
    }
  }
  void OnMessage(proto::Received& in, int64_t now) {
    absl::StatusOr<proto::Frames> f = proto::SplitFrames(in);
    if (!f.ok()) {
      log::agent().debug("bad message from the broker: {}", std::string(f.status().message()));
      return;
    }
    const Command cmd = f->command;
    const std::string_view body = f->body;
    std::lock_guard<std::mutex> lock(mu_);
    if (cmd == Command::kResult) {
      auto m = proto::DecodeResult(body);
      if (!m.ok()) { log::agent().warn("bad RESULT: {}", std::string(m.status().message())); return; }
      JobResult r;
      r.job_id = m->job_id;
      r.attempts = m->attempts;
      r.cached = m->cached;
      auto rec = proto::DecodeRecord(m->record);
      if (rec.ok()) {
        r.record = std::move(*rec);
      } else {
        r.record.status = JobStatus::kRunError;
        r.record.message = absl::StrCat("undecodable record: ", rec.status().message());
      }
      FinishLocked(m->job_id, std::move(r));
      cv_.notify_all();
    } else if (cmd == Command::kError) {
      auto e = proto::DecodeError(body);
      if (!e.ok()) return;
      if (e->code == proto::kErrFull || e->code == proto::kErrStoreFull) {
        // Back-pressure (a full queue, or a full result store, which frees more slowly): pause,
        // then resubmit.
        paused_until_ = now + (e->code == proto::kErrFull ? opts_.full_backoff_ms
                                                          : opts_.store_full_backoff_ms);
        if (jobs_.count(e->job_id)) outbox_.push_back(e->job_id);
      } else if (e->code == proto::kErrUnknownModule) {
        auto it = jobs_.find(e->job_id);
        if (it != jobs_.end()) {
          sent_modules_.erase(it->second.module_hash);
          outbox_.push_front(e->job_id);
        }
      } else if (!e->job_id.empty()) {
        FailLocked(e->job_id, absl::StrCat(e->code, ": ", e->message));
        cv_.notify_all();
      } else {
        log::agent().warn("broker error: {} {}", e->code, e->message);
      }
    } else if (cmd == Command::kHeartbeat) {
      auto h = proto::DecodeHeartbeat(body);
      if (h.ok() && h->instance != 0) {
        if (instance_ != 0 && h->instance != instance_) ResubmitAllLocked("broker restarted");
        instance_ = h->instance;
      }
    }
  }

  // One round of socket work by the socket's owner (mu_ not held): heartbeat when due, send the
  // outbox, wait up to `wait_ms` (capped at the next heartbeat) for input, handle it, and
  // reconnect and resubmit when the broker has been silent too long. Returns after one poll.
  void Pump(int64_t wait_ms) {
    int64_t now = proto::NowMs();
    if (now >= next_hb_) {
      proto::SendMsg(*sock_, "", Command::kHeartbeat, heartbeat_);
      next_hb_ = now + opts_.heartbeat_ms;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      DrainOutboxLocked(now);
      if (paused_until_ > now) wait_ms = std::min(wait_ms, paused_until_ - now);
    }
    wait_ms = std::min(wait_ms, std::max<int64_t>(0, next_hb_ - now));
    zmq::pollitem_t items[] = {{static_cast<void*>(*sock_), 0, ZMQ_POLLIN, 0},
                               {nullptr, event_fd_, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(wait_ms));
    } catch (const zmq::error_t&) {
      return;
    }
    if (items[1].revents & ZMQ_POLLIN) {
      // Read first, then clear: a Wake skipped in between finds its work (outbox, a waiting
      // caller) checked under mu_ right after this round.
      uint64_t n;
      if (::read(event_fd_, &n, sizeof(n)) < 0) {}
      wake_pending_.store(false);
    }
    now = proto::NowMs();
    for (int i = 0; i < 8192 && proto::RecvMsg(*sock_, false, &in_); ++i) {
      last_heard_ = silent_since_ = now;
      next_silence_warning_s_ = 0;
      OnMessage(in_, now);
    }
    if (now - last_heard_ > int64_t(opts_.heartbeat_ms) * opts_.liveness) {
      WarnSilence(now);
      // Broker gone: reconnect with a fresh socket and resubmit everything unfinished.
      auto s = proto::ConnectDealer(Ctx(), address_, opts_.identity, &opts_.curve);
      if (s.ok()) sock_ = std::make_unique<zmq::socket_t>(std::move(*s));
      std::lock_guard<std::mutex> lock(mu_);
      instance_ = 0;
      ResubmitAllLocked("broker silent");
      last_heard_ = now;
    }
  }

  // Tells the user, at 1, 2, 4, 8, ... seconds of silence (then every minute), that the broker
  // does not answer: retrying is right while it restarts, but a wrong address looks the same.
  void WarnSilence(int64_t now) {
    double silent_s = (now - silent_since_) / 1000.0;
    if (silent_s < next_silence_warning_s_) return;
    log::agent().warn("no reply from the broker at {} for {:.0f} s; still retrying (wrong address, or "
                      "broker down?)", address_, silent_s);
    next_silence_warning_s_ = std::min(2 * std::max(1.0, silent_s), silent_s + 60);
  }

  // The background thread: owns the socket whenever no caller has used it for kCallerLingerMs,
  // and gives it up as soon as a caller asks.
  void IoMain() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_.load()) {
      int64_t idle = proto::NowMs() - released_ms_;
      if (owner_ != Owner::kNone || callers_waiting_ > 0 || idle < kCallerLingerMs) {
        int64_t ms = owner_ == Owner::kNone && callers_waiting_ == 0
                         ? kCallerLingerMs - idle : std::max(1, opts_.heartbeat_ms / 2);
        io_cv_.wait_for(lock, std::chrono::milliseconds(ms));
        continue;
      }
      owner_ = Owner::kIoThread;
      while (!stop_.load() && callers_waiting_ == 0) {
        lock.unlock();
        Pump(opts_.heartbeat_ms);
        lock.lock();
      }
      owner_ = Owner::kNone;
      cv_.notify_all();
      if (submitters_waiting_ > 0) room_cv_.notify_all();
    }
  }

  zmq::context_t& Ctx() { return local_ctx_ ? *local_ctx_ : ctx_; }

  std::string address_;
  ClientOptions opts_;
  zmq::context_t ctx_{1};
  std::shared_ptr<zmq::context_t> local_ctx_;  // an in-process broker's (outlives sock_)
  std::thread io_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> wake_pending_{false};
  std::atomic<int64_t> resubmissions_{0};
  int event_fd_ = -1;

  // Used only by the socket's current owner.
  std::unique_ptr<zmq::socket_t> sock_;
  int64_t last_heard_ = 0, next_hb_ = 0;
  int64_t silent_since_ = 0;          // last message from the broker (or the connect)
  double next_silence_warning_s_ = 0;  // silence at which WarnSilence speaks next
  const std::string heartbeat_ = proto::Encode(proto::HeartbeatMsg{});
  proto::Received in_;

  mutable std::mutex mu_;
  std::condition_variable cv_;     // results, ownership changes, room under max_in_flight
  std::condition_variable io_cv_;  // the background thread's timer (notified only on stop)
  std::condition_variable room_cv_;  // Submit blocked at max_in_flight (see LowWater)
  int submitters_waiting_ = 0;
  Owner owner_ = Owner::kNone;
  int callers_waiting_ = 0;
  int64_t released_ms_ = 0;
  absl::node_hash_map<std::string, JobSpec> jobs_;           // submitted, no result yet
  absl::flat_hash_set<std::string> handed_out_;              // finished ids (dedupe)
  std::unordered_map<std::string, std::shared_ptr<const std::string>> modules_;
  std::unordered_set<std::string> sent_modules_;             // hashes this broker has
  std::deque<std::string> outbox_;
  std::deque<JobResult> results_;
  uint64_t instance_ = 0;
  int64_t paused_until_ = 0;
  uint64_t next_id_ = 0;
  std::shared_ptr<const std::string> last_text_;  // the last module text hashed, and its hash
  std::string last_hash_;
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string& address,
                                                        ClientOptions options) {
  auto impl = std::make_unique<Impl>(address, std::move(options));
  if (absl::Status st = impl->Start(); !st.ok()) return st;
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

absl::StatusOr<std::string> Client::Submit(JobSpec job) { return impl_->Submit(std::move(job)); }
std::optional<JobResult> Client::Next(std::chrono::milliseconds t) { return impl_->Next(t); }
std::vector<JobResult> Client::Poll() { return impl_->Poll(); }
size_t Client::unfinished() const { return impl_->unfinished(); }
int64_t Client::resubmissions() const { return impl_->resubmissions(); }

absl::StatusOr<std::string> ControlRequest(const std::string& control_address,
                                           const std::string& op, const std::string& target,
                                           std::chrono::milliseconds timeout,
                                           const proto::CurveClientKeys& curve) {
  zmq::context_t ctx(1);
  auto s = proto::ConnectDealer(ctx, control_address, "", &curve);
  if (!s.ok()) return s.status();
  if (proto::SendMsg(*s, "", Command::kControl, proto::Encode(proto::ControlMsg{op, target})) !=
      proto::SendResult::kOk) {
    // Not connected yet: a blocking send with the socket's own queue is fine here.
    try {
      s->send(zmq::str_buffer("HX\x01" "C"), zmq::send_flags::sndmore);
      std::string body = proto::Encode(proto::ControlMsg{op, target});
      s->send(zmq::buffer(body), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      return absl::UnavailableError(e.what());
    }
  }
  zmq::pollitem_t item{static_cast<void*>(*s), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, timeout);
  proto::Received in;
  if (!(item.revents & ZMQ_POLLIN) || !proto::RecvMsg(*s, false, &in)) {
    return absl::DeadlineExceededError("no reply from the broker's control channel");
  }
  absl::StatusOr<proto::Frames> f = proto::SplitFrames(in);
  if (!f.ok()) return f.status();
  if (f->command == Command::kError) {
    auto e = proto::DecodeError(f->body);
    if (!e.ok()) return e.status();
    return absl::FailedPreconditionError(absl::StrCat(e->code, ": ", e->message));
  }
  if (f->command != Command::kControlReply) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected command '", std::string(1, static_cast<char>(f->command)),
        "' on the control channel"));
  }
  auto r = proto::DecodeControlReply(f->body);
  if (!r.ok()) return r.status();
  if (!r->ok) return absl::FailedPreconditionError(r->message);
  return op == "status" ? r->json : r->message;
}

}  // namespace hlox::client
