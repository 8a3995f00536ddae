// Running a piece of work in a forked child process: the child computes a byte string and
// writes it to a pipe, the parent reads it with a deadline, kills the child when the deadline
// passes and reaps it. The worker uses it for every evaluation and for reference outputs, so a
// crash or a hang there costs only the job that asked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace hlox::worker {

struct ChildOutput {
  std::string bytes;       // what the child wrote (up to max_bytes + one read)
  bool started = false;    // false when pipe or fork failed (see error)
  bool timed_out = false;  // killed at the deadline
  bool too_big = false;    // wrote more than max_bytes (the read stopped there)
  int wait_status = 0;     // waitpid status of the reaped child
  std::string error;
  double seconds = 0;      // fork to reap
  // True when the child exited with status 0 after writing everything.
  bool Clean() const;
  // True when the child exited with kOutOfMemoryExit (job_limits.h): its memory limit refused
  // an allocation that nothing inside it caught.
  bool OutOfMemory() const;
};

// Forks; the child runs `work`, writes its result to a pipe and _exits without destructors.
// The parent returns when the child closed the pipe or after timeout_ms (then it kills it).
// memory_budget_bytes > 0 holds the child to that budget (ApplyChildMemoryLimit, job_limits.h,
// with `threads` runtime threads); a std::bad_alloc out of `work` exits with kOutOfMemoryExit.
ChildOutput RunInChild(const std::function<std::string()>& work, uint32_t timeout_ms,
                       size_t max_bytes, int64_t memory_budget_bytes = 0, int threads = 1);

}  // namespace hlox::worker
