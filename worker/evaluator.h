// How a worker evaluates one job: in a forked child process (default), so a kernel that aborts
// or hangs costs that job only: a crash comes back as crashed=true, a hang is killed at the run
// timeout and comes back as TIMEOUT. By default the child is a warm one that serves several jobs
// of the same module (warm_child.h); with warm_child off, a fresh child per job. Test modes
// (echo, sleep) skip evaluation for benchmarks.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"
#include "protocol/protocol.h"

namespace hlox::worker {

struct EvalRequest {
  std::shared_ptr<const Module> module;  // parsed; null when the text did not parse
  std::string parse_error;               // why module is null
  std::string text_hash;    // the job's address of the module text (proto::TextHash)
  std::string module_hash;  // the module's identity (cost/module_hash.h); empty when module is null
  std::string pipeline;
  PipelineDecisions decisions;
  uint32_t run_timeout_ms = 0;
  std::string kind = proto::kKindEvaluate;  // what the job asks (proto::kKind*)
  proto::PairedSpec paired;                 // kind "paired": the baseline and the protocol
};

struct EvalSettings {
  int threads = 1;
  bool fork = true;            // evaluate in a child process
  std::string worker_id, hardware_class;
  int sleep_ms = -1;           // >= 0: test mode, sleep this long and return OK
  bool spin_job = false;       // test mode "spin-<ms>": busy the whole sleep_ms, as a CPU-bound evaluation
  bool keep_reference = true;  // compute reference outputs once and keep them (reference_prime.h)
  bool warm_child = true;      // fork mode: reuse a pre-forked child per module (warm_child.h)
  int64_t memory_budget_bytes = 0;  // per-job memory budget (job_limits.h); 0 = none
  uint32_t time_budget_ms = 0;      // per-job time cap over the job's run timeout; 0 = none
};

struct EvalOutcome {
  ResultRecord record;
  bool crashed = false;        // the evaluation killed its process
};

// Evaluates `req` per `settings`; never throws, never crashes the caller in fork mode. With a
// memory budget, a module whose planned peak exceeds it (PlannedJobBytes) ends
// RESOURCE_EXHAUSTED before anything runs, and a child that runs out of its limit ends so too
// (crashed stays false: it is no crash, and the broker finishes the job at once).
// `started` (optional) is called exactly once, as soon as the job runs on its own (the warm
// child has it, the test job's clock runs) or before it runs on this thread, so the caller can
// hand off the previous job's result while this one runs.
EvalOutcome EvaluateJob(const EvalRequest& req, const EvalSettings& settings,
                        const std::function<void()>& started = {});

// The job in the calling process (no isolation); what a job's child runs. By kind: an
// evaluation is EvaluateCandidate, a sites job ListSites, a paired job EvaluatePairedCandidate
// (cost/evaluate.h).
ResultRecord EvaluateInThisProcess(const EvalRequest& req, const EvalSettings& settings);

// A sites job's record: OK with `sites` (DecisionPointsToJson of ListDecisionPoints), or
// INVALID_DECISIONS / RUN_ERROR with the reason. Runs the passes only; nothing is measured.
ResultRecord ListSites(const EvalRequest& req, const EvalSettings& settings);

// The record a worker sends for a job whose module did not parse, or an echo job.
ResultRecord MakeRecord(JobStatus status, const std::string& message, const EvalRequest& req,
                        const EvalSettings& settings);

}  // namespace hlox::worker
