// The worker's long-lived reference outputs. EvaluateCandidate validates a candidate against
// the unoptimized module's outputs, cached per (module hash, seed) in GlobalReferenceCache; a
// job's forked child would lose that cache when it exits and recompute it for every job. So
// before forking a job, the worker computes the reference once in a forked child of its own (a
// crash or hang there costs only the job that asked), reads the output bytes back through a
// pipe and inserts them into its own GlobalReferenceCache, which every later job child
// inherits through fork (copy-on-write, nothing is copied).
#pragma once

#include <cstdint>
#include <string>

#include "worker/evaluator.h"

namespace hlox::worker {

enum class PrimeResult {
  kSkipped,   // nothing to prime (no module, or outputs above the size cap)
  kCached,    // already in this process's cache
  kComputed,  // computed in a child and cached now
  kFailed,    // the reference run reported an error: the job's child recomputes and reports it
  kCrashed,   // the reference child died: the job is a crash (message says why)
  kTimedOut,  // the reference child exceeded the job's run timeout
  kOutOfMemory,  // the reference child ran out of its memory limit (job_limits.h)
};

struct PrimeOutcome {
  PrimeResult result = PrimeResult::kSkipped;
  std::string message;
};

// Makes GlobalReferenceCache hold the reference outputs of req.module for the seed the
// worker's evaluations use, computing them in a child bounded by timeout_ms and, when
// memory_budget_bytes > 0, held to that budget. Not thread-safe: call from the executor thread
// only.
PrimeOutcome PrimeReference(const EvalRequest& req, int threads, uint32_t timeout_ms,
                            int64_t memory_budget_bytes = 0);

// Largest reference (total output bytes) kept in the worker; larger ones are recomputed per job.
inline constexpr int64_t kMaxPrimedReferenceBytes = int64_t{256} << 20;

}  // namespace hlox::worker
