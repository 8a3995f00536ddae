// The pre-forked evaluator child; see warm_child.h. Frames on the socketpair are a 4-byte
// little-endian length and a body: parent -> child a JOB message (proto::Encode(JobMsg), only
// pipeline, decisions, timeout, kind and the kind's fields are used; the module is the one the
// child was forked with), child -> parent the msgpack ResultRecord (proto::EncodeRecord).
#include "worker/warm_child.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>
#include <set>

#include "protocol/protocol.h"
#include "worker/job_limits.h"

namespace hlox::worker {
namespace {

using Deadline = std::chrono::steady_clock::time_point;

enum class Io { kOk, kClosed, kTimedOut };

// Reads exactly n bytes before `deadline`.
Io ReadFull(int fd, char* buf, size_t n, Deadline deadline) {
  size_t off = 0;
  while (off < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return Io::kTimedOut;
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc < 0 && errno != EINTR) return Io::kClosed;
    if (rc <= 0) continue;
    ssize_t got = ::read(fd, buf + off, n - off);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Io::kClosed;
    off += static_cast<size_t>(got);
  }
  return Io::kOk;
}

// Writes a length-prefixed frame; false when the peer is gone. No SIGPIPE (MSG_NOSIGNAL).
bool SendFrame(int fd, const std::string& body) {
  uint32_t len = static_cast<uint32_t>(body.size());
  char head[4] = {char(len & 0xff), char((len >> 8) & 0xff), char((len >> 16) & 0xff),
                  char((len >> 24) & 0xff)};
  for (const auto& [data, size] : {std::pair<const char*, size_t>{head, 4},
                                   std::pair<const char*, size_t>{body.data(), body.size()}}) {
    size_t off = 0;
    while (off < size) {
      ssize_t n = ::send(fd, data + off, size - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
  }
  return true;
}

// Parent-side ends of every live warm child's socketpair: a new child closes them, so only
// the worker holds them (executor thread only, like the rest of this file).
std::set<int>& ParentEnds() {
  static auto* s = new std::set<int>();
  return *s;
}

uint32_t FrameLength(const char* head) {
  return uint32_t(uint8_t(head[0])) | uint32_t(uint8_t(head[1])) << 8 |
         uint32_t(uint8_t(head[2])) << 16 | uint32_t(uint8_t(head[3])) << 24;
}

// The child's loop: one job per frame until the parent closes its end; never returns.
[[noreturn]] void ChildLoop(int fd, EvalRequest base, const EvalSettings& settings) {
  const Deadline never = std::chrono::steady_clock::time_point::max();
  for (;;) {
    char head[4];
    if (ReadFull(fd, head, 4, never) != Io::kOk) ::_exit(0);
    uint32_t len = FrameLength(head);
    if (len > proto::kMaxMessageBytes) ::_exit(4);
    std::string body(len, '\0');
    if (ReadFull(fd, body.data(), len, never) != Io::kOk) ::_exit(0);
    absl::StatusOr<proto::JobMsg> job = proto::DecodeJob(body);
    ResultRecord r;
    if (job.ok()) {
      base.pipeline = std::move(job->pipeline);
      base.decisions = std::move(job->decisions);
      base.run_timeout_ms = job->run_timeout_ms;
      base.kind = std::move(job->kind);
      base.paired = std::move(job->paired);
      try {  // EvaluateCandidate catches its own; a sites job or the encoding may not
        r = EvaluateInThisProcess(base, settings);
      } catch (const std::bad_alloc&) {
        ::_exit(kOutOfMemoryExit);
      }
    } else {
      r = MakeRecord(JobStatus::kRunError, "warm child: bad job frame", base, settings);
    }
    if (!SendFrame(fd, proto::EncodeRecord(r))) ::_exit(0);
  }
}

}  // namespace

bool WarmChild::Start(const EvalRequest& req, const EvalSettings& settings, std::string* error) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    *error = "socketpair failed";
    return false;
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    *error = "fork failed";
    return false;
  }
  if (pid == 0) {
    ::close(sv[0]);
    for (int fd : ParentEnds()) ::close(fd);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a worker killed with -9 takes its child along
    if (::getppid() != parent) ::_exit(0);
    // The limit covers every job this child serves: what it holds between jobs (its buffer
    // pool's cache, which gives itself back when a mapping is refused) counts too.
    ApplyChildMemoryLimit(settings.memory_budget_bytes, settings.threads);
    EvalRequest base;
    base.module = req.module;
    base.module_hash = req.module_hash;
    base.text_hash = req.text_hash;
    ChildLoop(sv[1], std::move(base), settings);
  }
  ::close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  ParentEnds().insert(fd_);
  module_ = req.module;
  text_hash_ = req.text_hash;
  threads_ = settings.threads;
  jobs_ = 0;
  ++forks_;
  return true;
}

void WarmChild::CloseFd() {
  if (fd_ < 0) return;
  ParentEnds().erase(fd_);
  ::close(fd_);
  fd_ = -1;
}

void WarmChild::Stop() {
  if (pid_ <= 0) return;
  CloseFd();
  ::kill(pid_, SIGKILL);  // idle between jobs: nothing to lose
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {}
  pid_ = -1;
  module_.reset();
}

ChildOutput WarmChild::Run(const EvalRequest& req, const EvalSettings& settings,
                           uint32_t timeout_ms, const std::function<void()>& started) {
  ChildOutput out;
  const auto t0 = std::chrono::steady_clock::now();
  const Deadline deadline = t0 + std::chrono::milliseconds(timeout_ms);
  proto::JobMsg j;
  j.module_hash = req.text_hash;
  j.pipeline = req.pipeline;
  j.decisions = req.decisions;
  j.run_timeout_ms = req.run_timeout_ms;
  j.kind = req.kind;
  j.paired = req.paired;
  const std::string body = proto::Encode(j);
  // A child that died while idle shows up as a failed send: start a fresh one, once.
  for (int attempt = 0;; ++attempt) {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;  // died while idle (killed from outside): reaped here, forget it
      CloseFd();
    }
    if (pid_ <= 0 || module_ != req.module || text_hash_ != req.text_hash ||
        threads_ != settings.threads || jobs_ >= kWarmChildMaxJobs) {
      Stop();
      if (!Start(req, settings, &out.error)) return out;
    }
    if (SendFrame(fd_, body)) break;
    Stop();
    if (attempt == 1) {
      out.error = "warm child did not accept the job";
      return out;
    }
  }
  out.started = true;
  ++jobs_;
  if (started) started();  // the child computes meanwhile
  char head[4];
  Io io = ReadFull(fd_, head, 4, deadline);
  if (io == Io::kOk) {
    uint32_t len = FrameLength(head);
    if (len > proto::kMaxMessageBytes) {
      out.too_big = true;
    } else {
      out.bytes.resize(len);
      io = ReadFull(fd_, out.bytes.data(), len, deadline);
    }
  }
  if (io == Io::kOk && !out.too_big) {
    out.wait_status = 0;  // alive and well: reads as a clean exit
  } else {
    // Killed at the deadline, a protocol violation, or the child died mid-job: reap it and
    // report how it ended; the next job starts a new child.
    out.timed_out = io == Io::kTimedOut;
    if (out.timed_out || out.too_big) ::kill(pid_, SIGKILL);
    CloseFd();
    while (::waitpid(pid_, &out.wait_status, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
    module_.reset();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

ChildOutput WarmChildPool::Run(const EvalRequest& req, const EvalSettings& settings,
                               uint32_t timeout_ms, const std::function<void()>& started) {
  int pick = -1;
  for (int i = 0; i < kWarmChildren && pick < 0; ++i) {
    if (slots_[i].Serves(req)) pick = i;
  }
  for (int i = 0; i < kWarmChildren && pick < 0; ++i) {
    if (slots_[i].pid() <= 0) pick = i;
  }
  if (pick < 0) {
    pick = 0;
    for (int i = 1; i < kWarmChildren; ++i) {
      if (last_used_[i] < last_used_[pick]) pick = i;
    }
  }
  last_used_[pick] = ++clock_;
  return slots_[pick].Run(req, settings, timeout_ms, started);
}

void WarmChildPool::StopAll() {
  for (WarmChild& w : slots_) w.Stop();
}

pid_t WarmChildPool::PidFor(const EvalRequest& req) const {
  for (const WarmChild& w : slots_) {
    if (w.Serves(req)) return w.pid();
  }
  return -1;
}

int64_t WarmChildPool::forks() const {
  int64_t n = 0;
  for (const WarmChild& w : slots_) n += w.forks();
  return n;
}

WarmChildPool& ExecutorWarmChildren() {
  static auto* p = new WarmChildPool();
  return *p;
}

}  // namespace hlox::worker
