// Job evaluation with process isolation; see evaluator.h. The child inherits the parsed module
// (and the reference outputs that reference_prime.h keeps in this process) through fork, runs
// EvaluateCandidate and writes the msgpack record back; the parent waits with the run timeout
// and reaps a child that died or was killed. The child is the module's warm child
// (warm_child.h) or, with warm_child off, a fresh one per job (child_process.h).
#include "worker/evaluator.h"

#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cost/evaluate.h"
#include "cost/evaluate_memory.h"
#include "cost/provenance.h"
#include "passes/features.h"
#include "passes/pipeline.h"
#include "protocol/protocol.h"
#include "worker/child_process.h"
#include "worker/job_limits.h"
#include "worker/reference_prime.h"
#include "worker/warm_child.h"

namespace hlox::worker {

ResultRecord EvaluateInThisProcess(const EvalRequest& req, const EvalSettings& s) {
  if (!req.module) return MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
  if (req.kind == proto::kKindSites) return ListSites(req, s);
  EvalOptions opts;
  opts.threads = s.threads;
  opts.worker_id = s.worker_id;
  opts.hardware_class = s.hardware_class;
  opts.memory_budget_bytes = s.memory_budget_bytes;
  ResultRecord r;
  if (req.kind == proto::kKindPaired) {
    opts.protocol = req.paired.protocol;
    opts.seed = req.paired.seed;
    const std::string& base = req.paired.baseline_pipeline.empty() ? req.pipeline : req.paired.baseline_pipeline;
    r = EvaluatePairedCandidate(*req.module, req.pipeline, req.decisions, base,
                                req.paired.baseline_decisions, opts);
  } else {
    r = EvaluateCandidate(*req.module, req.pipeline, req.decisions, opts);
  }
  r.text_hash = req.text_hash;  // (module_hash: EvaluateCandidate's, the canonical one)
  return r;
}

namespace {

// "evaluation exceeded 120000 ms", naming the worker's time budget when that was the cap.
std::string TimeoutMessage(const EvalRequest& req, const EvalSettings& s) {
  const uint32_t ms = JobTimeoutMs(req.run_timeout_ms, s.time_budget_ms);
  const bool capped = ms < JobTimeoutMs(req.run_timeout_ms, 0);
  return absl::StrCat("evaluation exceeded ", ms, " ms",
                      capped ? " (this worker's job time budget)" : "");
}

EvalOutcome RunForked(const EvalRequest& req, const EvalSettings& s,
                      const std::function<void()>& started) {
  EvalOutcome out;
  // The previous result is handed off while this job runs in its warm child; when a reference
  // must be computed or a child forked first, right now instead (`started` runs only once).
  if (!(s.warm_child && ExecutorWarmChildren().PidFor(req) > 0) && started) started();
  // A reference-output child that crashed, hung or ran out of memory already decided this
  // job's fate.
  const uint32_t timeout_ms = JobTimeoutMs(req.run_timeout_ms, s.time_budget_ms);
  auto t0 = std::chrono::steady_clock::now();
  PrimeOutcome prime;  // a sites job runs no module, so it needs no reference outputs
  if (s.keep_reference && req.kind != proto::kKindSites) {
    prime = PrimeReference(req, s.threads, timeout_ms, s.memory_budget_bytes);
  }
  if (prime.result == PrimeResult::kTimedOut) {
    out.record = MakeRecord(JobStatus::kTimeout, TimeoutMessage(req, s), req, s);
  } else if (prime.result == PrimeResult::kCrashed) {
    out.crashed = true;
    out.record = MakeRecord(JobStatus::kRunError, prime.message, req, s);
  } else if (prime.result == PrimeResult::kOutOfMemory) {
    out.record = MakeRecord(JobStatus::kResourceExhausted,
                            absl::StrCat(OutOfMemoryMessage(s.memory_budget_bytes),
                                         " in the reference run"), req, s);
  }
  if (prime.result == PrimeResult::kTimedOut || prime.result == PrimeResult::kCrashed ||
      prime.result == PrimeResult::kOutOfMemory) {
    out.record.eval_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  }
  auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - t0).count();
  uint32_t left = static_cast<uint32_t>(std::max<int64_t>(1, int64_t{timeout_ms} - spent));
  ChildOutput child =
      s.warm_child
          ? ExecutorWarmChildren().Run(req, s, left, started)
          : RunInChild([&] { return proto::EncodeRecord(EvaluateInThisProcess(req, s)); }, left,
                       proto::kMaxMessageBytes, s.memory_budget_bytes, s.threads);
  if (!child.started) {
    out.record = MakeRecord(JobStatus::kRunError, child.error, req, s);
    return out;
  }
  const int wstatus = child.wait_status;
  if (child.timed_out) {
    out.record = MakeRecord(JobStatus::kTimeout, TimeoutMessage(req, s), req, s);
  } else if (child.OutOfMemory()) {  // no crash: the limit did its job, the worker is fine
    out.record = MakeRecord(JobStatus::kResourceExhausted,
                            OutOfMemoryMessage(s.memory_budget_bytes), req, s);
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

// The sleep test job: `sleep_ms` long as exactly as this host allows. A relative sleep
// overshoots by the timer slack and the wake-up latency (40-170 us typical here, milliseconds
// when both cores are busy), so it sleeps to an absolute deadline kSleepJobSpinUs short of the
// end and spins the rest. The spin does not yield: on a loaded machine a yield hands the core
// to any runnable process for a whole time slice. A spin job (`spin_job`) does not sleep at all:
// it keeps its core busy the whole time, as a CPU-bound evaluation does, so the vCPU never
// halts. `started` runs while the job's clock runs.
EvalOutcome RunSleepJob(const EvalRequest& req, const EvalSettings& s,
                        const std::function<void()>& started) {
  constexpr int64_t kSleepJobSpinUs = 150;
  auto now_ns = [] {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  };
  const int64_t t0 = now_ns(), end = t0 + int64_t{s.sleep_ms} * 1000000;
  if (started) started();
  const int64_t wake = end - kSleepJobSpinUs * 1000;
  if (!s.spin_job && wake > now_ns()) {
    timespec ts{static_cast<time_t>(wake / 1000000000), static_cast<long>(wake % 1000000000)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {}
  }
  int64_t t = now_ns();
  while (t < end) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    t = now_ns();
  }
  EvalOutcome out;
  out.record.eval_seconds = 1e-9 * double(t - t0);
  out.record.status = JobStatus::kOk;
  // When the job ended on the host's monotonic clock: a bench on this host measures from it
  // how long the result took to reach the agent (service_bench).
  out.record.message = absl::StrCat("test job ended at CLOCK_MONOTONIC ns ", t);
  out.record.module_hash = req.module_hash;
  out.record.text_hash = req.text_hash;
  out.record.pipeline = req.pipeline;
  out.record.provenance.worker_id = s.worker_id;
  out.record.provenance.hardware_class = s.hardware_class;
  return out;
}

// ListSites without the exception guard.
ResultRecord SitesRecord(const EvalRequest& req, const EvalSettings& s) {
  absl::StatusOr<std::vector<DecisionPointSites>> points =
      ListDecisionPoints(*req.module, req.pipeline, req.decisions);
  if (!points.ok()) {
    return MakeRecord(IsInvalidDecisions(points.status()) ? JobStatus::kInvalidDecisions
                                                          : JobStatus::kRunError,
                      std::string(points.status().message()), req, s);
  }
  ResultRecord r = MakeRecord(JobStatus::kOk, "", req, s);
  r.sites = DecisionPointsToJson(*points);
  if (r.sites.size() > proto::kMaxSitesBytes) {
    return MakeRecord(JobStatus::kRunError,
                      absl::StrCat("the sites list is ", r.sites.size(),
                                   " bytes, over the protocol's limit of ", proto::kMaxSitesBytes),
                      req, s);
  }
  return r;
}

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ResultRecord MakeRecord(JobStatus status, const std::string& message, const EvalRequest& req,
                        const EvalSettings& s) {
  ResultRecord r;
  r.status = status;
  r.message = message;
  r.module_hash = req.module_hash;
  r.text_hash = req.text_hash;
  r.pipeline = req.pipeline;
  r.provenance = MachineProvenance();
  r.provenance.threads = s.threads;
  r.provenance.worker_id = s.worker_id;
  r.provenance.hardware_class = s.hardware_class;
  return r;
}

ResultRecord ListSites(const EvalRequest& req, const EvalSettings& s) {
  if (!req.module) return MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
  const double t0 = SteadySeconds();
  ResultRecord r;
  try {  // as EvaluateCandidate: anything a pass throws becomes this job's RUN_ERROR
    r = SitesRecord(req, s);
  } catch (const std::bad_alloc&) {
    r = MakeRecord(JobStatus::kResourceExhausted, OutOfMemoryMessage(s.memory_budget_bytes), req, s);
  } catch (const std::exception& e) {
    r = MakeRecord(JobStatus::kRunError, absl::StrCat("exception: ", e.what()), req, s);
  } catch (...) {
    r = MakeRecord(JobStatus::kRunError, "unknown exception", req, s);
  }
  r.eval_seconds = SteadySeconds() - t0;
  return r;
}

EvalOutcome EvaluateJob(const EvalRequest& req, const EvalSettings& s,
                        const std::function<void()>& started) {
  bool called = false;  // every path calls `started` exactly once
  auto once = [&] {
    if (!called && started) started();
    called = true;
  };
  EvalOutcome out;
  std::optional<std::string> over;  // the first line: refuse before anything runs
  if (s.sleep_ms < 0 && req.module && s.memory_budget_bytes > 0 && req.kind != proto::kKindSites) {
    over = OverBudgetMessage(PlannedJobBytes(*req.module, nullptr), s.memory_budget_bytes);
  }
  if (s.sleep_ms >= 0) {
    out = RunSleepJob(req, s, once);
  } else if (!req.module) {
    once();
    out.record = MakeRecord(JobStatus::kRunError, req.parse_error, req, s);
  } else if (over) {
    once();
    out.record = MakeRecord(JobStatus::kResourceExhausted, *over, req, s);
  } else if (s.fork) {
    out = RunForked(req, s, once);
  } else {
    once();
    out.record = EvaluateInThisProcess(req, s);
  }
  once();
  return out;
}

}  // namespace hlox::worker
