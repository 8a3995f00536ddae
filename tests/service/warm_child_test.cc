// The worker's warm evaluator child (worker/warm_child.h): one child serves many jobs of a module
// with the same results as an in-process evaluation, it inherits the reference outputs the
// worker kept when it was forked, and a job that crashes or hangs it costs only that job: the
// child is reaped and the next job gets a fresh one.
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "cost/module_hash.h"
#include "cost/reference_cache.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/service/eval_request_util.h"
#include "worker/evaluator.h"
#include "worker/reference_prime.h"
#include "worker/warm_child.h"

namespace hlox::worker {
namespace {

constexpr char kModule[] = R"(HloModule warm

ENTRY main {
  a = f32[19,23] parameter(0)
  b = f32[19,23] parameter(1)
  m = f32[19,23] multiply(a, b)
  e = f32[19,23] exponential(m)
  ROOT s = f32[19,23] add(e, b)
}
)";

std::string CustomCallModule(const std::string& target) {
  return "HloModule cc\n\nENTRY main {\n  a = f32[4] parameter(0)\n"
         "  ROOT c = f32[4] custom-call(a), custom_call_target=\"" + target + "\"\n}\n";
}

// True once `pid` (our unreaped child) has died.
bool IsZombie(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(f, line);
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(ServiceWarmChild, ServesManyJobsLikeInProcess) {
  EvalRequest req = TextRequest(kModule, "warm-text-1");
  ASSERT_TRUE(req.module);
  EvalSettings s;
  s.threads = 1;
  ResultRecord direct = EvaluateInThisProcess(req, s);
  ASSERT_EQ(direct.status, JobStatus::kOk) << direct.message;
  WarmChildPool& w = ExecutorWarmChildren();
  const int64_t forks0 = w.forks();
  pid_t pid = -1;
  for (int i = 0; i < 4; ++i) {
    EvalOutcome out = EvaluateJob(req, s);
    EXPECT_FALSE(out.crashed);
    EXPECT_EQ(out.record.status, JobStatus::kOk) << out.record.message;
    EXPECT_EQ(out.record.instruction_count, direct.instruction_count);
    EXPECT_EQ(out.record.analytical.op_count, direct.analytical.op_count);
    EXPECT_DOUBLE_EQ(out.record.analytical.flops, direct.analytical.flops);
    EXPECT_GT(out.record.cost.samples.size(), 0u);
    if (i == 0) pid = w.PidFor(req);
    EXPECT_EQ(w.PidFor(req), pid);  // the same child every time
  }
  EXPECT_GT(pid, 0);
  EXPECT_EQ(w.forks(), forks0 + 1);
  EXPECT_NE(pid, ::getpid());

  // Jobs alternating between modules keep one warm child each (up to kWarmChildren).
  EvalRequest other = TextRequest(kModule, "warm-text-1b");  // another parse: another module
  ASSERT_TRUE(other.module);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(EvaluateJob(other, s).record.status, JobStatus::kOk);
    EXPECT_EQ(EvaluateJob(req, s).record.status, JobStatus::kOk);
  }
  EXPECT_EQ(w.forks(), forks0 + 2);
  EXPECT_EQ(w.PidFor(req), pid);
  EXPECT_GT(w.PidFor(other), 0);
  EXPECT_NE(w.PidFor(other), pid);
}

TEST(ServiceWarmChild, InheritsTheReferenceKeptAtFork) {
  EvalRequest req = TextRequest(kModule, "warm-text-2");
  ASSERT_TRUE(req.module);
  ExecutorWarmChildren().StopAll();
  PrimeResult primed = PrimeReference(req, 1, 20000).result;
  ASSERT_TRUE(primed == PrimeResult::kComputed || primed == PrimeResult::kCached);
  const std::string key = ModuleHash(*req.module);
  ReferencePtr good = GlobalReferenceCache().Find(key, 0);
  ASSERT_TRUE(good);
  // A corrupted kept reference before the child is forked: the child validates against it.
  auto bad = std::make_shared<ReferenceOutputs>(*good);
  bad->result.SetFromDouble(7, 1e6);
  GlobalReferenceCache().Insert(key, 0, bad);
  EvalSettings s;
  EXPECT_EQ(EvaluateJob(req, s).record.status, JobStatus::kWrongOutput);
  GlobalReferenceCache().Insert(key, 0, good);
  ExecutorWarmChildren().StopAll();  // a fresh child inherits the good one
  EXPECT_EQ(EvaluateJob(req, s).record.status, JobStatus::kOk);
}

TEST(ServiceWarmChild, CrashOrHangCostsOnlyThatJob) {
  ::setenv("HLOX_TEST_TARGETS", "1", 1);
  EvalSettings s;
  s.keep_reference = false;  // the crash and the hang happen in the warm child itself
  EvalRequest good = TextRequest(kModule, "warm-text-3");
  ASSERT_TRUE(good.module);
  WarmChildPool& w = ExecutorWarmChildren();
  EXPECT_EQ(EvaluateJob(good, s).record.status, JobStatus::kOk);

  EvalRequest abort_req = TextRequest(CustomCallModule("__hlox$abort"), "warm-abort");
  ASSERT_TRUE(abort_req.module);
  EvalOutcome crashed = EvaluateJob(abort_req, s);
  EXPECT_TRUE(crashed.crashed);
  EXPECT_EQ(crashed.record.status, JobStatus::kRunError);
  EXPECT_NE(crashed.record.message.find("signal"), std::string::npos) << crashed.record.message;
  EXPECT_EQ(w.PidFor(abort_req), -1);  // reaped
  EXPECT_EQ(EvaluateJob(good, s).record.status, JobStatus::kOk);

  EvalRequest hang_req = TextRequest(CustomCallModule("__hlox$hang"), "warm-hang");
  ASSERT_TRUE(hang_req.module);
  hang_req.run_timeout_ms = 300;
  EvalOutcome hung = EvaluateJob(hang_req, s);
  EXPECT_EQ(hung.record.status, JobStatus::kTimeout);
  EXPECT_FALSE(hung.crashed);
  EXPECT_EQ(w.PidFor(hang_req), -1);

  // A child killed from outside while idle: the next job notices and starts another.
  EXPECT_EQ(EvaluateJob(good, s).record.status, JobStatus::kOk);
  pid_t before = w.PidFor(good);
  ASSERT_GT(before, 0);
  ::kill(before, SIGKILL);
  for (int i = 0; i < 200 && !IsZombie(before); ++i) ::usleep(10000);
  EvalOutcome after = EvaluateJob(good, s);
  EXPECT_EQ(after.record.status, JobStatus::kOk) << after.record.message;
  EXPECT_NE(w.PidFor(good), before);
  EXPECT_GT(w.PidFor(good), 0);
}

// EvaluateJob's `started` (the worker hands off the previous result there) runs exactly once on
// every path; for the sleep test job before the job's end, and the job never ends early.
TEST(ServiceWarmChild, StartedRunsOnceOnEveryPath) {
  ::setenv("HLOX_TEST_TARGETS", "1", 1);
  int calls = 0;
  int64_t called_ns = 0;
  auto started = [&] {
    ++calls;
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    called_ns = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
  };
  EvalSettings sleep;
  sleep.sleep_ms = 3;
  EvalOutcome slept = EvaluateJob(EvalRequest{}, sleep, started);
  EXPECT_EQ(calls, 1);
  EXPECT_GE(slept.record.eval_seconds, 3e-3);
  const std::string& m = slept.record.message;
  ASSERT_NE(m.rfind(' '), std::string::npos) << m;
  const int64_t end_ns = std::atoll(m.c_str() + m.rfind(' ') + 1);
  EXPECT_LE(called_ns, end_ns);  // the hand-off ran inside the job, not after it

  // The CPU-bound test job (spin-<ms>) never sleeps: it gives up its core only when preempted
  // (an involuntary switch), never voluntarily, where the sleep job above blocks at least once.
  auto voluntary_switches = [] {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
  };
  EvalSettings spin = sleep;
  spin.spin_job = true;
  for (bool spins : {false, true}) {
    calls = 0;
    const long before = voluntary_switches();
    EvalOutcome out = EvaluateJob(EvalRequest{}, spins ? spin : sleep, started);
    const long blocked = voluntary_switches() - before;
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(out.record.status, JobStatus::kOk);
    EXPECT_GE(out.record.eval_seconds, 3e-3);
    if (spins) {
      EXPECT_EQ(blocked, 0) << "the spin job slept";
    } else {
      EXPECT_GE(blocked, 1) << "the sleep job never slept";
    }
  }

  EvalRequest req = TextRequest(kModule, "warm-text-4");
  ASSERT_TRUE(req.module);
  EvalSettings s;
  pid_t during = -1;
  auto check_child = [&] {
    ++calls;
    during = ExecutorWarmChildren().PidFor(req);
  };
  for (int i = 0; i < 2; ++i) {  // the first forks the child (hand-off first), then warm
    calls = 0;
    EXPECT_EQ(EvaluateJob(req, s, check_child).record.status, JobStatus::kOk);
    EXPECT_EQ(calls, 1);
  }
  EXPECT_GT(during, 0);  // the second job's hand-off ran while its warm child had it

  EvalSettings fresh, inproc;
  fresh.warm_child = false;
  inproc.fork = false;
  EvalRequest broken;  // no module: the parse-error path
  broken.parse_error = "does not parse";
  EvalRequest abort_req = TextRequest(CustomCallModule("__hlox$abort"), "warm-abort-2");
  ASSERT_TRUE(abort_req.module);
  for (const auto& [r, st] : {std::pair{&req, &fresh}, std::pair{&req, &inproc},
                              std::pair{&broken, &s}, std::pair{&abort_req, &s}}) {
    calls = 0;
    (void)EvaluateJob(*r, *st, started);
    EXPECT_EQ(calls, 1);
  }
}

}  // namespace
}  // namespace hlox::worker
