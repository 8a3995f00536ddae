// Job evaluation with process isolation; see evaluator.h. The child inherits the parsed module
// through fork, runs EvaluateCandidate, writes the msgpack record to a pipe and _exits; the
// parent waits on the pipe with the run timeout and reaps the child.
#include "worker/evaluator.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "broker/protocol.h"
#include "cost/evaluate.h"
#include "cost/provenance.h"

namespace hlox::worker {
namespace {

ResultRecord RunInProcess(const EvalRequest& req, const EvalSettings& s) {
  if (!req.module) return MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
  EvalOptions opts;
  opts.threads = s.threads;
  opts.worker_id = s.worker_id;
  opts.hardware_class = s.hardware_class;
  ResultRecord r = EvaluateCandidate(*req.module, req.pipeline, req.decisions, opts);
  r.module_hash = req.module_hash;  // the service addresses modules by their text's hash
  return r;
}

bool WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

EvalOutcome RunForked(const EvalRequest& req, const EvalSettings& s) {
  EvalOutcome out;
  auto t0 = std::chrono::steady_clock::now();
  int fds[2];
  if (::pipe(fds) != 0) {
    out.record = MakeRecord(JobStatus::kRunError, "pipe failed", req, s);
    return out;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    out.record = MakeRecord(JobStatus::kRunError, "fork failed", req, s);
    return out;
  }
  if (pid == 0) {  // child: evaluate, write, leave without running any destructor
    ::close(fds[0]);
    std::string bytes = proto::EncodeRecord(RunInProcess(req, s));
    ::_exit(WriteAll(fds[1], bytes) ? 0 : 3);
  }
  ::close(fds[1]);
  std::string bytes;
  char buf[65536];
  auto deadline = t0 + std::chrono::milliseconds(req.run_timeout_ms ? req.run_timeout_ms : 120000);
  bool timed_out = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) { timed_out = true; break; }
    pollfd p{fds[0], POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child finished or died
    bytes.append(buf, static_cast<size_t>(n));
    if (bytes.size() > proto::kMaxMessageBytes) { timed_out = false; break; }
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {}
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timed_out) {
    out.record = MakeRecord(JobStatus::kTimeout,
                            absl::StrCat("evaluation exceeded ", req.run_timeout_ms, " ms"), req, s);
  } else if (WIFSIGNALED(wstatus)) {
    out.crashed = true;
    out.record = MakeRecord(JobStatus::kRunError,
                            absl::StrCat("evaluation crashed: signal ", WTERMSIG(wstatus), " (",
                                         strsignal(WTERMSIG(wstatus)), ")"), req, s);
  } else {
    absl::StatusOr<ResultRecord> r = proto::DecodeRecord(bytes);
    if (r.ok() && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
      out.record = std::move(*r);
    } else {
      out.crashed = true;
      out.record = MakeRecord(JobStatus::kRunError,
                              absl::StrCat("evaluation process exited with status ",
                                           WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1),
                              req, s);
    }
  }
  out.record.eval_seconds = secs;
  return out;
}

}  // namespace

ResultRecord MakeRecord(JobStatus status, const std::string& message, const EvalRequest& req,
                        const EvalSettings& s) {
  ResultRecord r;
  r.status = status;
  r.message = message;
  r.module_hash = req.module_hash;
  r.pipeline = req.pipeline;
  r.provenance = MachineProvenance();
  r.provenance.threads = s.threads;
  r.provenance.worker_id = s.worker_id;
  r.provenance.hardware_class = s.hardware_class;
  return r;
}

EvalOutcome EvaluateJob(const EvalRequest& req, const EvalSettings& s) {
  if (s.sleep_ms >= 0) {
    // Test mode: a job that takes sleep_ms. A plain sleep overshoots by the timer slack and
    // the wake-up latency (~1.10 ms for 1 ms here), so sleep to just short of the end and
    // yield the rest: the job's length is what it says, and any gap is the service's.
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::milliseconds(s.sleep_ms);
    if (s.sleep_ms > 0) std::this_thread::sleep_until(end - std::chrono::microseconds(150));
    while (std::chrono::steady_clock::now() < end) std::this_thread::yield();
    EvalOutcome out;
    out.record.eval_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.record.status = JobStatus::kOk;
    out.record.module_hash = req.module_hash;
    out.record.pipeline = req.pipeline;
    out.record.provenance.worker_id = s.worker_id;
    out.record.provenance.hardware_class = s.hardware_class;
    return out;
  }
  if (!req.module) {
    EvalOutcome out;
    out.record = MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
    return out;
  }
  if (s.fork) return RunForked(req, s);
  EvalOutcome out;
  out.record = RunInProcess(req, s);
  return out;
}

}  // namespace hlox::worker
