// The worker's reference outputs (worker/reference_prime.h): computed once in a forked child,
// bit-identical to an in-process reference run, reused by every later job's child (a corrupted
// cached reference makes the next job WRONG_OUTPUT, which proves the child did not recompute),
// and a reference run that crashes or hangs costs only the job that asked.
#include <cstdlib>

#include "cost/module_hash.h"
#include "cost/reference_cache.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"
#include "runtime/core/value.h"
#include "tests/service/eval_request_util.h"
#include "worker/evaluator.h"
#include "worker/reference_prime.h"

namespace hlox::worker {
namespace {

constexpr char kModule[] = R"(HloModule prime

ENTRY main {
  a = f32[33,17] parameter(0)
  b = f32[33,17] parameter(1)
  m = f32[33,17] multiply(a, b)
  s = f32[33,17] add(m, a)
  ROOT t = (f32[33,17], f32[33,17]) tuple(s, m)
}
)";

TEST(ServiceWorkerReference, ComputedOnceReusedByJobChildren) {
  EvalRequest req = TextRequest(kModule, "text-hash-1");
  ASSERT_TRUE(req.module);
  EXPECT_EQ(PrimeReference(req, 1, 20000).result, PrimeResult::kComputed);
  EXPECT_EQ(PrimeReference(req, 1, 20000).result, PrimeResult::kCached);
  const std::string key = ModuleHash(*req.module);
  ReferencePtr cached = GlobalReferenceCache().Find(key, 0);
  ASSERT_TRUE(cached);

  EvalSettings s;
  s.threads = 1;
  s.warm_child = false;  // a fresh child per job reads the parent's cache as it is now
  EvalOutcome ok = EvaluateJob(req, s);
  EXPECT_FALSE(ok.crashed);
  EXPECT_EQ(ok.record.status, JobStatus::kOk) << ok.record.message;

  // The job's child validates against the parent's cached entry: corrupt it and the job fails.
  auto bad = std::make_shared<ReferenceOutputs>(*cached);
  bad->result.tuple_elements()[1].SetFromDouble(5, 1e6);
  GlobalReferenceCache().Insert(key, 0, bad);
  EvalOutcome wrong = EvaluateJob(req, s);
  EXPECT_EQ(wrong.record.status, JobStatus::kWrongOutput) << wrong.record.message;
  GlobalReferenceCache().Insert(key, 0, cached);

  // Independent check, last (runs the runtime in this process): the same bits in-process.
  auto exec = rt::Executor::Create(*req.module, rt::ExecOptions{1, 0});
  ASSERT_TRUE(exec.ok());
  auto value = (*exec)->Run(rt::MakeSeededInputs(*req.module, 0));
  ASSERT_TRUE(value.ok());
  Literal direct = rt::LiteralFromValue(*value, req.module->entry()->ResultShape());
  EXPECT_TRUE(direct == cached->result);
}

TEST(ServiceWorkerReference, CrashOrHangCostsOnlyThatJob) {
  ::setenv("HLOX_TEST_TARGETS", "1", 1);
  auto module = [](const std::string& target) {
    return "HloModule cc\n\nENTRY main {\n  a = f32[4] parameter(0)\n"
           "  ROOT c = f32[4] custom-call(a), custom_call_target=\"" + target + "\"\n}\n";
  };
  EvalRequest abort_req = TextRequest(module("__hlox$abort"), "text-abort");
  ASSERT_TRUE(abort_req.module);
  EXPECT_EQ(PrimeReference(abort_req, 1, 20000).result, PrimeResult::kCrashed);
  EvalOutcome crashed = EvaluateJob(abort_req, EvalSettings{});
  EXPECT_TRUE(crashed.crashed);
  EXPECT_EQ(crashed.record.status, JobStatus::kRunError);

  EvalRequest hang_req = TextRequest(module("__hlox$hang"), "text-hang");
  ASSERT_TRUE(hang_req.module);
  hang_req.run_timeout_ms = 300;
  EvalOutcome hung = EvaluateJob(hang_req, EvalSettings{});
  EXPECT_EQ(hung.record.status, JobStatus::kTimeout);
  EXPECT_FALSE(hung.crashed);

  // An unknown custom call is an error, not a crash: the job's own child reports it.
  EvalRequest unknown = TextRequest(module("no_such_target"), "text-unknown");
  ASSERT_TRUE(unknown.module);
  EXPECT_EQ(PrimeReference(unknown, 1, 20000).result, PrimeResult::kFailed);
  EvalOutcome err = EvaluateJob(unknown, EvalSettings{});
  EXPECT_FALSE(err.crashed);
  EXPECT_NE(err.record.status, JobStatus::kOk);
}

}  // namespace
}  // namespace hlox::worker
