// Job evaluation with process isolation; see evaluator.h. The child inherits the parsed module
// (and the reference outputs that reference_prime.h keeps in this process) through fork, runs
// EvaluateCandidate and writes the msgpack record back; the parent waits with the run timeout
// and reaps a child that died or was killed. The child is the module's warm child
// (warm_child.h) or, with warm_child off, a fresh one per job (child_process.h).
#include "worker/evaluator.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "broker/protocol.h"
#include "cost/evaluate.h"
#include "cost/provenance.h"
#include "worker/child_process.h"
#include "worker/reference_prime.h"
#include "worker/warm_child.h"

namespace hlox::worker {

ResultRecord EvaluateInThisProcess(const EvalRequest& req, const EvalSettings& s) {
  if (!req.module) return MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
  EvalOptions opts;
  opts.threads = s.threads;
  opts.worker_id = s.worker_id;
  opts.hardware_class = s.hardware_class;
  ResultRecord r = EvaluateCandidate(*req.module, req.pipeline, req.decisions, opts);
  r.module_hash = req.module_hash;  // the service addresses modules by their text's hash
  return r;
}

namespace {

EvalOutcome RunForked(const EvalRequest& req, const EvalSettings& s) {
  EvalOutcome out;
  // A reference-output child that crashed or hung already decided this job's fate.
  uint32_t timeout_ms = req.run_timeout_ms ? req.run_timeout_ms : 120000;
  auto t0 = std::chrono::steady_clock::now();
  PrimeOutcome prime;
  if (s.keep_reference) prime = PrimeReference(req, s.threads, timeout_ms);
  if (prime.result == PrimeResult::kTimedOut) {
    out.record = MakeRecord(JobStatus::kTimeout,
                            absl::StrCat("evaluation exceeded ", req.run_timeout_ms, " ms"), req, s);
  } else if (prime.result == PrimeResult::kCrashed) {
    out.crashed = true;
    out.record = MakeRecord(JobStatus::kRunError, prime.message, req, s);
  }
  if (prime.result == PrimeResult::kTimedOut || prime.result == PrimeResult::kCrashed) {
    out.record.eval_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - t0).count();
  uint32_t left = static_cast<uint32_t>(std::max<int64_t>(1, int64_t{timeout_ms} - spent));
  ChildOutput child =
      s.warm_child
          ? ExecutorWarmChildren().Run(req, s, left)
          : RunInChild([&] { return proto::EncodeRecord(EvaluateInThisProcess(req, s)); }, left,
                       proto::kMaxMessageBytes);
  if (!child.started) {
    out.record = MakeRecord(JobStatus::kRunError, child.error, req, s);
    return out;
  }
  const int wstatus = child.wait_status;
  if (child.timed_out) {
    out.record = MakeRecord(JobStatus::kTimeout,
                            absl::StrCat("evaluation exceeded ", req.run_timeout_ms, " ms"), req, s);
  } else if (WIFSIGNALED(wstatus)) {
    out.crashed = true;
    out.record = MakeRecord(JobStatus::kRunError,
                            absl::StrCat("evaluation crashed: signal ", WTERMSIG(wstatus), " (",
                                         strsignal(WTERMSIG(wstatus)), ")"), req, s);
  } else {
    absl::StatusOr<ResultRecord> r = proto::DecodeRecord(child.bytes);
    if (r.ok() && child.Clean()) {
      out.record = std::move(*r);
    } else {
      out.crashed = true;
      out.record = MakeRecord(JobStatus::kRunError,
                              absl::StrCat("evaluation process exited with status ",
                                           WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1),
                              req, s);
    }
  }
  out.record.eval_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
    // spin the rest: the job's length is what it says, and any gap is the service's. The
    // spin does not yield: on a loaded machine a yield hands the core to any runnable
    // process for a whole time slice and the job overruns by milliseconds.
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::milliseconds(s.sleep_ms);
    if (s.sleep_ms > 0) std::this_thread::sleep_until(end - std::chrono::microseconds(150));
    while (std::chrono::steady_clock::now() < end) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
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
  out.record = EvaluateInThisProcess(req, s);
  return out;
}

}  // namespace hlox::worker
