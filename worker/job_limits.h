// A worker's per-job resource budget and how a job's child is held to it. The first line is a
// refusal before running (cost/evaluate_memory.h: a planned peak over the budget ends the job
// RESOURCE_EXHAUSTED); the second is a hard limit in the child: RLIMIT_DATA set right after
// fork to what the child inherited plus the budget plus a margin, so an allocation the plan did
// not foresee fails (std::bad_alloc, reported as RESOURCE_EXHAUSTED) instead of letting the
// kernel's OOM killer pick a process. RLIMIT_DATA rather than RLIMIT_AS: the worker's address
// space already holds reservations that are not memory (glibc's 64 MiB per-thread arena
// reservations, ZeroMQ's threads' stacks inherited through fork), which RLIMIT_AS would count.
#pragma once

#include <cstdint>

namespace hlox::worker {

// The exit status of a job child that ran out of memory outside the evaluation's own guard
// (encoding the record, a bad_alloc in a thread-pool thread): the parent reports the job
// RESOURCE_EXHAUSTED, not as a crash.
inline constexpr int kOutOfMemoryExit = 86;

// Writable memory a child may take beyond its budget: stacks of its runtime threads and their
// malloc arenas, fused-loop code, the record being encoded.
inline constexpr int64_t kChildMarginBytes = int64_t{128} << 20;
inline constexpr int64_t kChildMarginPerThreadBytes = int64_t{16} << 20;

// In a freshly forked child: limits its data segment to what it holds now plus
// `budget_bytes` plus the margin for `threads` runtime threads, and makes an uncaught
// std::bad_alloc end the process with kOutOfMemoryExit. No-op when budget_bytes <= 0.
// Returns false when the limit could not be set (the job then runs without it).
bool ApplyChildMemoryLimit(int64_t budget_bytes, int threads);

// The run timeout a job gets: the job's own (0: proto::kDefaultRunTimeoutMs), capped by the
// worker's time budget `budget_ms` when that is > 0.
uint32_t JobTimeoutMs(uint32_t job_ms, uint32_t budget_ms);

}  // namespace hlox::worker
