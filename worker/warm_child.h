// A pre-forked evaluator child that serves several jobs of one module. A fresh child per job
// spent about 8-10 ms more per job than an in-process evaluation outside the timing samples
// (e2e_bench, corpus toy module): the fork, then page faults for what the evaluation touches in
// the new address space (copy-on-write heap, executor buffers, stacks). A warm child is forked
// once per module (after its reference outputs are primed, so it inherits the parsed module and
// the reference through fork) and then evaluates each job sent to it over a socketpair on its
// already-faulted heap. Isolation is unchanged: a crash or a
// hang kills only the child and costs only the job in flight; the next job forks a fresh child.
// WarmChildPool keeps one such child for each of the last few modules.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "worker/child_process.h"
#include "worker/evaluator.h"

namespace hlox::worker {

// Jobs one warm child serves before it is replaced (bounds what a long-lived child can leak).
inline constexpr int kWarmChildMaxJobs = 256;

class WarmChild {
 public:
  WarmChild() = default;
  ~WarmChild() { Stop(); }
  WarmChild(const WarmChild&) = delete;
  WarmChild& operator=(const WarmChild&) = delete;

  // Evaluates `req` (req.module must be set) in the warm child for req.module, forking one
  // first when there is none for it; `timeout_ms` bounds the job (the child is killed then).
  // The result is reported like RunInChild's: bytes are the encoded ResultRecord on success;
  // a child that died or was killed is reaped and forgotten. `started` (optional) is called
  // once the child has the job (not when none could be started). Not thread-safe.
  ChildOutput Run(const EvalRequest& req, const EvalSettings& settings, uint32_t timeout_ms,
                  const std::function<void()>& started = {});

  // Ends the current child (if any) and reaps it.
  void Stop();

  pid_t pid() const { return pid_; }
  int64_t forks() const { return forks_; }  // children started so far
  // True when the live child serves req's module (the next Run for it forks nothing).
  bool Serves(const EvalRequest& req) const {
    return pid_ > 0 && module_ == req.module && text_hash_ == req.text_hash;
  }

 private:
  bool Start(const EvalRequest& req, const EvalSettings& settings, std::string* error);
  void CloseFd();

  pid_t pid_ = -1;
  int fd_ = -1;                               // parent's end of the socketpair
  std::shared_ptr<const Module> module_;      // the module the child serves
  std::string text_hash_;
  int threads_ = 0, jobs_ = 0;
  int64_t forks_ = 0;
};

// Up to kWarmChildren warm children, one per module, least recently used replaced first, so
// jobs that alternate between a few modules (a campaign over several graphs) keep them warm.
inline constexpr int kWarmChildren = 3;

class WarmChildPool {
 public:
  // WarmChild::Run in the child serving req.module, else in a free or the least recently used
  // slot. Not thread-safe.
  ChildOutput Run(const EvalRequest& req, const EvalSettings& settings, uint32_t timeout_ms,
                  const std::function<void()>& started = {});
  void StopAll();
  // The pid of the child serving req.module, or -1.
  pid_t PidFor(const EvalRequest& req) const;
  int64_t forks() const;

 private:
  WarmChild slots_[kWarmChildren];
  int64_t last_used_[kWarmChildren] = {};
  int64_t clock_ = 0;
};

// The process-wide pool the worker's executor thread uses (evaluator.cc).
WarmChildPool& ExecutorWarmChildren();

}  // namespace hlox::worker
