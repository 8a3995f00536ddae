// The worker's I/O loop and executor thread; see worker.h. The I/O thread owns the socket: it
// heartbeats, receives jobs, keeps the module cache and sends results. The executor thread runs
// evaluations (forking a child per job) and hands results back through a queue and an eventfd,
// so a long evaluation never delays a heartbeat. When a job waited behind the finished one, the
// eventfd wake-up happens once that job runs, so it overlaps the job instead of preceding it.
#include "worker/worker.h"

#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <condition_variable>
#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/build_info.h"
#include "common/cpu_isa.h"
#include "common/cpu_latency.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "cost/evaluate_memory.h"
#include "cost/module_hash.h"
#include "cost/provenance.h"
#include "ir/parser.h"
#include "protocol/hardware_class.h"
#include "protocol/frames.h"
#include "protocol/zmq_util.h"
#include "worker/evaluator.h"

namespace hlox::worker {
namespace {

using proto::Command;

struct Task {
  std::string job_id;
  uint32_t attempt = 0;
  EvalRequest req;
};

struct Finished {
  std::string job_id;
  uint32_t attempt = 0;
  EvalOutcome outcome;
};

struct CachedModule {
  std::shared_ptr<const Module> module;
  std::string module_hash;  // ModuleHash(*module), computed once per module
  std::string error;
  size_t bytes = 0;
};

class WorkerLoop {
 public:
  WorkerLoop(const WorkerOptions& o, proto::CurveClientKeys curve) : opts_(o), curve_(std::move(curve)) {
    settings_.threads = o.threads;
    settings_.fork = o.fork;
    settings_.warm_child = !o.fresh_child;
    settings_.hardware_class = o.hardware_class;
    settings_.memory_budget_bytes = JobMemoryBudgetBytes(o);
    settings_.time_budget_ms = static_cast<uint32_t>(
        std::clamp<int64_t>(o.job_time_s, 0, std::numeric_limits<uint32_t>::max() / 1000) * 1000);
    if (o.test_mode.rfind("sleep-", 0) == 0) settings_.sleep_ms = std::atoi(o.test_mode.c_str() + 6);
    if (o.test_mode.rfind("spin-", 0) == 0) {
      settings_.sleep_ms = std::atoi(o.test_mode.c_str() + 5);
      settings_.spin_job = true;
    }
    echo_ = o.test_mode == "echo";
    // "sleep-<ms>-serial": the old order, the hand-off before the next job starts (a baseline).
    serial_handoff_ = o.test_mode.size() > 7 &&
                      o.test_mode.compare(o.test_mode.size() - 7, 7, "-serial") == 0;
    id_ = o.worker_id;
    if (id_.empty()) {
      id_ = absl::StrCat(HostName(), "-", ::getpid(), "-", std::random_device{}() % 100000);
    }
    settings_.worker_id = id_;
  }

  absl::Status Run(std::atomic<bool>* stop);

 private:
  absl::Status Connect();
  void SendReady();
  void Send(Command c, const std::string& body);
  void OnJob(std::string_view body);
  void Reply(const std::string& job_id, uint32_t attempt, const EvalOutcome& out);
  void ExecutorMain();

  WorkerOptions opts_;
  proto::CurveClientKeys curve_;
  EvalSettings settings_;
  bool echo_ = false, serial_handoff_ = false;
  std::string id_;
  zmq::context_t ctx_{1};
  std::unique_ptr<zmq::socket_t> sock_;
  int64_t last_heard_ms_ = 0;
  uint64_t instance_ = 0;
  // Frames of another protocol version received in a row (Run stops at kOtherVersionFramesToStop).
  static constexpr int kOtherVersionFramesToStop = 3;
  int other_version_frames_ = 0;
  std::unordered_map<std::string, CachedModule> modules_;
  size_t module_bytes_ = 0;
  int64_t rejected_ = 0, rejected_logged_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> tasks_;
  std::deque<Finished> finished_;
  bool quit_ = false;
  int event_fd_ = -1;
};

absl::Status WorkerLoop::Connect() {
  sock_.reset();
  auto s = proto::ConnectDealer(ctx_, opts_.broker, id_, &curve_);
  if (!s.ok()) return s.status();
  sock_ = std::make_unique<zmq::socket_t>(std::move(*s));
  last_heard_ms_ = proto::NowMs();
  instance_ = 0;
  SendReady();
  return absl::OkStatus();
}

void WorkerLoop::SendReady() {
  proto::ReadyMsg r{id_, HostName(), opts_.hardware_class, HLOX_VERSION,
                    static_cast<uint32_t>(CoreCount()), static_cast<uint32_t>(opts_.threads),
                    static_cast<uint32_t>(std::max(1, opts_.credit)), CpuModelName(),
                    std::string(IsaName(ActiveIsa()))};
  r.protocol = proto::kVersion;
  r.build = AnnouncedBuildId();
  Send(Command::kReady, proto::Encode(r));
}

void WorkerLoop::Send(Command c, const std::string& body) {
  if (proto::SendMsg(*sock_, "", c, body) != proto::SendResult::kOk) {
    log::worker().warn("send to broker failed (queue full or not connected)");
  }
}

void WorkerLoop::Reply(const std::string& job_id, uint32_t attempt, const EvalOutcome& out) {
  proto::DoneMsg d{job_id, attempt, out.crashed, proto::EncodeRecord(out.record)};
  Send(Command::kDone, proto::Encode(d));
}

void WorkerLoop::OnJob(std::string_view body) {
  absl::StatusOr<proto::JobMsg> m = proto::DecodeJob(body);
  if (!m.ok()) {
    ++rejected_;
    log::worker().debug("bad JOB message: {}", std::string(m.status().message()));
    proto::ErrorMsg e{"", std::string(proto::ErrorCodeFor(m.status())),
                      std::string(m.status().message())};
    Send(Command::kError, proto::Encode(e));
    return;
  }
  Task t;
  t.job_id = m->job_id;
  t.attempt = m->attempt;
  t.req.text_hash = m->module_hash;
  t.req.pipeline = m->pipeline;
  t.req.decisions = std::move(m->decisions);
  t.req.run_timeout_ms = m->run_timeout_ms;
  t.req.kind = std::move(m->kind);
  t.req.paired = std::move(m->paired);
  if (echo_) {
    Reply(t.job_id, t.attempt, EvaluateJob(t.req, EvalSettings{settings_.threads, false, id_,
                                                               opts_.hardware_class, 0}));
    return;
  }
  auto it = modules_.find(m->module_hash);
  if (it == modules_.end() && !m->module_text.empty()) {
    if (proto::TextHash(m->module_text) != m->module_hash) {
      EvalOutcome bad;
      bad.record = MakeRecord(JobStatus::kRunError, "module text does not match its hash", t.req,
                              settings_);
      Reply(t.job_id, t.attempt, bad);
      return;
    }
    CachedModule cm;
    cm.bytes = m->module_text.size();
    if (module_bytes_ + cm.bytes > kModuleCacheBytes) {  // simple policy: start over
      modules_.clear();
      module_bytes_ = 0;
    }
    absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModule(m->module_text, "<job module>");
    if (parsed.ok()) {
      cm.module = std::shared_ptr<const Module>(std::move(*parsed));
      cm.module_hash = ModuleHash(*cm.module);
    }
    else cm.error = absl::StrCat("module does not parse: ", parsed.status().message());
    module_bytes_ += cm.bytes;
    it = modules_.emplace(m->module_hash, std::move(cm)).first;
  }
  if (it == modules_.end()) {
    Send(Command::kNeedModule, proto::Encode(proto::NeedModuleMsg{t.job_id, t.attempt,
                                                                  t.req.text_hash}));
    return;
  }
  t.req.module = it->second.module;
  t.req.module_hash = it->second.module_hash;
  t.req.parse_error = it->second.error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(t));
  }
  cv_.notify_one();
}

void WorkerLoop::ExecutorMain() {
  Task t;
  bool have = false, unannounced = false;
  // Waking the I/O thread (the eventfd write) is a cross-CPU wake-up costing 10-70 us on this
  // VM. When a job waited behind the one that finished, that wake-up happens once the next job
  // runs on its own (its warm child has it, the test job's clock runs), so it overlaps the job
  // instead of delaying its start; the result leaves only as much later as the job's start takes.
  auto announce = [this, &unannounced] {
    if (!unannounced) return;
    unannounced = false;
    uint64_t one = 1;
    if (::write(event_fd_, &one, sizeof(one)) < 0) {}
  };
  for (;;) {
    if (!have) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return quit_ || !tasks_.empty(); });
      if (quit_) return;
      t = std::move(tasks_.front());
      tasks_.pop_front();
    }
    EvalOutcome out = EvaluateJob(t.req, settings_, announce);
    {
      // Hand the result over and take the next waiting job under one lock, so the job that
      // waited (credit > 1) starts without a second lock round.
      std::lock_guard<std::mutex> lock(mu_);
      finished_.push_back({std::move(t.job_id), t.attempt, std::move(out)});
      have = !quit_ && !tasks_.empty();
      if (have) {
        t = std::move(tasks_.front());
        tasks_.pop_front();
      }
    }
    unannounced = true;
    if (!have || serial_handoff_) announce();  // nothing to overlap with: wake the I/O thread now
  }
}

absl::Status WorkerLoop::Run(std::atomic<bool>* stop) {
  event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return absl::InternalError("eventfd failed");
  if (absl::Status st = Connect(); !st.ok()) return st;
  log::worker().info("worker {} connecting to {} (class {}, isa {}, credit {}, fork {}, mode '{}', "
                     "build {})", id_, opts_.broker, opts_.hardware_class, IsaName(ActiveIsa()),
                     opts_.credit, opts_.fork, opts_.test_mode, AnnouncedBuildId());
  log::worker().info(
      "worker {} job budget: memory {}, time {}", id_,
      settings_.memory_budget_bytes > 0 ? FormatBytes(settings_.memory_budget_bytes) : "unlimited",
      settings_.time_budget_ms > 0 ? absl::StrCat(settings_.time_budget_ms / 1000, " s")
                                   : std::string("each job's run timeout"));
  // Sleep test jobs: 1 ns timer slack (inherited by the executor) so a job's sleep ends on time.
  if (settings_.sleep_ms > 0) ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  std::thread executor([this] { ExecutorMain(); });
  int64_t next_hb = proto::NowMs() + opts_.heartbeat_ms, last_hb_sent = 0;
  const std::string hb = proto::Encode(proto::HeartbeatMsg{});
  proto::Received in;
  absl::Status result = absl::OkStatus();
  bool running = true;
  while (running && !(stop && stop->load())) {
    zmq::pollitem_t items[] = {{static_cast<void*>(*sock_), 0, ZMQ_POLLIN, 0},
                               {nullptr, event_fd_, ZMQ_POLLIN, 0}};
    const int64_t before_poll = proto::NowMs();
    const int64_t wait = std::max<int64_t>(0, next_hb - before_poll);
    try {
      zmq::poll(items, 2, std::chrono::milliseconds(wait));
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;
      result = absl::InternalError(absl::StrCat("poll: ", e.what()));
      break;
    }
    // A poll that returns far past its timeout means this thread was not running (the machine
    // paused, or the host starved it): that time is not the broker's silence.
    if (const int64_t late = proto::NowMs() - before_poll - wait; late > opts_.heartbeat_ms / 2) {
      log::worker().info("worker did not run for {} ms; not counted as the broker's silence", late);
      last_heard_ms_ += late;
    }
    if (items[1].revents & ZMQ_POLLIN) {
      uint64_t n;
      if (::read(event_fd_, &n, sizeof(n)) < 0) {}
    }
    {
      // Results go out whenever this thread wakes, also before their eventfd write.
      std::deque<Finished> done;
      {
        std::lock_guard<std::mutex> lock(mu_);
        done.swap(finished_);
      }
      for (Finished& f : done) Reply(f.job_id, f.attempt, f.outcome);
    }
    for (int i = 0; i < 4096 && running && proto::RecvMsg(*sock_, false, &in); ++i) {
      last_heard_ms_ = proto::NowMs();
      absl::StatusOr<proto::Frames> f = proto::SplitFrames(in);
      if (!f.ok()) {
        // Frames of another protocol version in a row, with nothing readable between them:
        // the broker speaks another protocol, nothing it sends can be read and retrying is a
        // silent loop, so stop and say why. One such frame among readable ones is only a bad
        // frame (dropped, as any other).
        if (proto::FrameErrorCode(f.status()) == proto::kErrBadVersion &&
            ++other_version_frames_ >= kOtherVersionFramesToStop) {
          const auto* h = static_cast<const uint8_t*>(in.frames[0].data());
          result = absl::FailedPreconditionError(absl::StrCat(
              "the broker at ", opts_.broker, " speaks protocol ", int(h[2]), ", this worker (build ",
              AnnouncedBuildId(), ") speaks ", int(proto::kVersion), "; run a matching hlox build"));
          log::worker().error("{}", std::string(result.message()));
          running = false;
          break;
        }
        if (proto::FrameErrorCode(f.status()) != proto::kErrBadVersion) other_version_frames_ = 0;
        ++rejected_;
        log::worker().debug("bad message from broker: {}", std::string(f.status().message()));
        continue;
      }
      other_version_frames_ = 0;
      const std::string_view body = f->body;
      switch (f->command) {
        case Command::kJob: OnJob(body); break;
        case Command::kHeartbeat: {
          // A new broker instance (restart) does not know us: register again.
          auto h = proto::DecodeHeartbeat(body);
          if (h.ok() && h->instance != 0) {
            if (instance_ != 0 && h->instance != instance_) {
              log::worker().info("broker restarted; registering again");
              {
                std::lock_guard<std::mutex> lock(mu_);
                tasks_.clear();
              }
              SendReady();
            }
            instance_ = h->instance;
          }
          // Heartbeat in the broker's phase: answer its heartbeat with ours (at most one per
          // half interval) and let our own timer fire only if its next one is late. The
          // broker then reads a whole fleet's heartbeats in one burst per interval instead of
          // waking for each worker; the rate, and so failure detection, is unchanged.
          const int64_t t = proto::NowMs();
          if (t - last_hb_sent >= opts_.heartbeat_ms / 2) {
            Send(Command::kHeartbeat, hb);
            last_hb_sent = t;
          }
          next_hb = t + opts_.heartbeat_ms + opts_.heartbeat_ms / 4;
          break;
        }
        case Command::kReregister: SendReady(); break;
        case Command::kDisconnect:
          log::worker().info("broker asked worker {} to disconnect", id_);
          running = false;
          break;
        case Command::kError: {
          auto e = proto::DecodeError(body);
          if (e.ok() && e->code == proto::kErrBadVersion) {
            // Refused for its protocol: reconnecting would only be refused again.
            result = absl::FailedPreconditionError(
                absl::StrCat("the broker refused this worker: ", e->message));
            log::worker().error("{}", std::string(result.message()));
            running = false;
            break;
          }
          log::worker().warn("broker error: {}", e.ok() ? e->code + " " + e->message : "?");
          break;
        }
        default:
          ++rejected_;
          log::worker().debug("unexpected command {} from broker", static_cast<char>(f->command));
      }
    }
    if (!running) break;  // disconnected or refused: no reconnect, no heartbeat
    int64_t now = proto::NowMs();
    if (now - last_heard_ms_ > int64_t(opts_.heartbeat_ms) * opts_.liveness) {
      log::worker().warn("broker silent for {} ms; reconnecting", now - last_heard_ms_);
      {
        std::lock_guard<std::mutex> lock(mu_);
        tasks_.clear();  // the broker re-queues whatever it had leased to us
      }
      if (absl::Status st = Connect(); !st.ok()) { result = st; break; }
      next_hb = now + opts_.heartbeat_ms;
      continue;
    }
    if (now >= next_hb) {
      if (rejected_ != rejected_logged_) {
        log::worker().warn("dropped {} bad messages from the broker side so far", rejected_);
        rejected_logged_ = rejected_;
      }
      Send(Command::kHeartbeat, hb);
      last_hb_sent = now;
      next_hb = now + opts_.heartbeat_ms;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  executor.join();  // an evaluation in flight finishes (its child is bounded by the run timeout)
  ::close(event_fd_);
  sock_.reset();
  log::worker().info("worker {} stopped ({} bad messages seen)", id_, rejected_);
  return result;
}

}  // namespace

absl::StatusOr<std::string> ApplyIsaAndResolveClass(const WorkerOptions& options) {
  if (!options.isa.empty()) {
    HLOX_ASSIGN_OR_RETURN(IsaLevel level, ParseIsa(options.isa));
    HLOX_RETURN_IF_ERROR(SetActiveIsa(level));
  }
  return proto::EffectiveHardwareClass(options.hardware_class, ActiveIsa());
}

int64_t JobMemoryBudgetBytes(const WorkerOptions& options) {
  if (options.job_memory_mb < 0) return 0;
  if (options.job_memory_mb == 0) return DefaultJobMemoryBytes();
  return std::min<int64_t>(options.job_memory_mb, int64_t{1} << 40) << 20;
}

absl::Status RunWorker(const WorkerOptions& options, std::atomic<bool>* stop) {
  if (options.broker.empty()) return absl::InvalidArgumentError("--broker is required");
  WorkerOptions resolved = options;
  HLOX_ASSIGN_OR_RETURN(resolved.hardware_class, ApplyIsaAndResolveClass(options));
  absl::StatusOr<proto::CurveClientKeys> curve =
      proto::LoadCurveClientKeys(options.curve_key_file, options.broker_key_file);
  if (!curve.ok()) return curve.status();
  std::unique_ptr<CpuLatencyRequest> latency;
  if (options.cpu_latency_us >= 0) {
    absl::StatusOr<std::unique_ptr<CpuLatencyRequest>> held =
        CpuLatencyRequest::Hold(options.cpu_latency_us);
    if (held.ok()) {
      latency = std::move(*held);
      log::worker().info("holding the CPU wake-up latency at {} us", options.cpu_latency_us);
    } else {
      log::worker().warn("CPU wake-up latency not held: {}", std::string(held.status().message()));
    }
  }
  WorkerLoop loop(resolved, std::move(*curve));
  return loop.Run(stop);
}

}  // namespace hlox::worker
