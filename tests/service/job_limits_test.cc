// A worker's per-job budget (worker/job_limits.h, cost/evaluate_memory.h): a module planned over
// the memory budget is refused RESOURCE_EXHAUSTED before anything runs, with both numbers; a
// module the plan lets through but that allocates past the child's hard limit (bf16 dot
// operands widened to f32 in scratch the plan does not count) ends RESOURCE_EXHAUSTED too, not
// as a crash: the broker finishes it at once (no re-queue, no POISON) and the worker serves the
// next job. Real broker and worker processes on loopback, plus the warm child directly.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "client/client.h"
#include "cost/evaluate.h"
#include "cost/evaluate_memory.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "runtime/core/executor.h"
#include "tests/service/eval_request_util.h"
#include "tests/service/service_test_util.h"
#include "tests/test_util.h"
#include "worker/child_process.h"
#include "worker/job_limits.h"
#include "worker/warm_child.h"
#include "worker/worker.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

// No parameters: one 64 GiB broadcast of a constant.
constexpr char kHuge[] = R"(HloModule huge
ENTRY e {
  c = f32[] constant(1)
  ROOT b = f32[16,1024,1024,1024] broadcast(c), dimensions={}
})";

// Planned at about 256 MiB (the bf16 operand); running it widens that operand to f32 in a
// 512 MiB scratch buffer the plan does not count.
constexpr char kWidened[] = R"(HloModule widened
ENTRY e {
  a = bf16[32768,4096] parameter(0)
  b = bf16[4096,1] parameter(1)
  ROOT d = bf16[32768,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

client::JobSpec Job(const std::string& id, const std::string& text) {
  client::JobSpec j;
  j.id = id;
  j.campaign = "limits";
  j.module_text = std::make_shared<const std::string>(text);
  j.pipeline = "default";
  j.use_cache = false;
  return j;
}

nlohmann::json Status(const std::string& addr) {
  auto st = client::ControlRequest(proto::ControlAddressFor(addr), "status");
  EXPECT_TRUE(st.ok()) << st.status();
  return st.ok() ? nlohmann::json::parse(*st) : nlohmann::json::object();
}

TEST(JobLimits, BudgetHelpers) {
  EXPECT_EQ(FormatBytes(int64_t{64} << 30), "64.0 GiB");
  EXPECT_EQ(FormatBytes(int64_t{512} << 20), "512.0 MiB");
  EXPECT_EQ(FormatBytes(100), "100 B");
  EXPECT_FALSE(OverBudgetMessage(int64_t{1} << 30, 0).has_value()) << "no budget";
  EXPECT_FALSE(OverBudgetMessage(int64_t{1} << 30, int64_t{1} << 30).has_value());
  EXPECT_EQ(OverBudgetMessage(int64_t{64} << 30, int64_t{5734} << 20).value_or(""),
            "planned peak 64.0 GiB exceeds this worker's job budget 5.6 GiB; not run");
  EXPECT_EQ(worker::JobTimeoutMs(0, 0), proto::kDefaultRunTimeoutMs);
  EXPECT_EQ(worker::JobTimeoutMs(5000, 0), 5000u);
  EXPECT_EQ(worker::JobTimeoutMs(5000, 2000), 2000u) << "the worker's budget caps the job's";
  EXPECT_EQ(worker::JobTimeoutMs(0, 2000), 2000u);
  EXPECT_GE(DefaultJobMemoryBytes(), int64_t{256} << 20);
  worker::WorkerOptions o;
  o.job_memory_mb = 100;
  EXPECT_EQ(worker::JobMemoryBudgetBytes(o), int64_t{100} << 20);
  o.job_memory_mb = -1;
  EXPECT_EQ(worker::JobMemoryBudgetBytes(o), 0) << "-1: no budget";
  o.job_memory_mb = 0;
  EXPECT_EQ(worker::JobMemoryBudgetBytes(o), DefaultJobMemoryBytes());
}

// `hlox eval --in-process` gets the same refusal: EvaluateCandidate checks the plan first.
TEST(JobLimits, InProcessEvaluationRefusesOverBudgetPlan) {
  worker::EvalRequest req = worker::TextRequest(kHuge, "huge");
  ASSERT_TRUE(req.module);
  EvalOptions o;
  o.memory_budget_bytes = int64_t{512} << 20;
  ResultRecord r = EvaluateCandidate(*req.module, "default", {}, o);
  EXPECT_EQ(r.status, JobStatus::kResourceExhausted) << r.message;
  // The candidate's 64 GiB plan plus the 64 GiB reference output it is compared with.
  EXPECT_TRUE(Contains(r.message, "planned peak 128.")) << r.message;
  EXPECT_TRUE(Contains(r.message, "job budget 512.0 MiB")) << r.message;
}

TEST(JobLimits, PlannedOverBudgetIsRefusedBeforeRunning) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "small", {"--job-memory-mb", "512"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Submit(Job("huge", kHuge)).ok());
  auto first = Collect(**client, 1, 30s, nullptr);
  ASSERT_EQ(first.size(), 1u);
  const client::JobResult& r = first["huge"];
  EXPECT_EQ(r.record.status, JobStatus::kResourceExhausted) << r.record.message;
  EXPECT_TRUE(Contains(r.record.message, "planned peak 64.")) << r.record.message;
  EXPECT_TRUE(Contains(r.record.message, "exceeds this worker's job budget 512.0 MiB"))
      << r.record.message;
  EXPECT_EQ(r.attempts, 1u) << "final at once, not re-queued";
  EXPECT_EQ(r.record.provenance.worker_id, "small");
  ASSERT_TRUE((*client)->Submit(Job("after", AddModule())).ok());
  auto second = Collect(**client, 1, 30s, nullptr);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second["after"].record.status, JobStatus::kOk) << second["after"].record.message;
  EXPECT_TRUE(w->Running());
  nlohmann::json st = Status(addr);
  EXPECT_EQ(st["totals"]["requeued"], 0);
  EXPECT_EQ(st["metrics"]["jobs_by_status"]["RESOURCE_EXHAUSTED"], 1) << st["metrics"].dump();
}

TEST(JobLimits, ChildOverItsHardLimitIsNoCrash) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "tight", {"--job-memory-mb", "384"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->Submit(Job("widened", kWidened)).ok());
  auto first = Collect(**client, 1, 60s, nullptr);
  ASSERT_EQ(first.size(), 1u);
  const client::JobResult& r = first["widened"];
  EXPECT_EQ(r.record.status, JobStatus::kResourceExhausted) << r.record.message;
  EXPECT_TRUE(Contains(r.record.message, "ran out of its 384 MiB memory limit")) << r.record.message;
  EXPECT_EQ(r.attempts, 1u) << "not counted as a crash: no re-queue towards POISON";
  ASSERT_TRUE((*client)->Submit(Job("next", AddModule())).ok());
  auto second = Collect(**client, 1, 30s, nullptr);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second["next"].record.status, JobStatus::kOk) << second["next"].record.message;
  EXPECT_EQ(second["next"].record.provenance.worker_id, "tight") << "the same worker serves on";
  EXPECT_TRUE(w->Running());
  nlohmann::json st = Status(addr);
  EXPECT_EQ(st["totals"]["requeued"], 0);
  EXPECT_EQ(st["totals"]["lost_workers"], 0);
  EXPECT_EQ(st["metrics"]["jobs_by_status"].value("POISON", 0), 0);
}

// The warm child carries the limit across its jobs: the widened dot runs out inside it (the
// evaluation's guard reports it), the child lives on, and a small job of another module runs.
TEST(JobLimits, WarmChildRunsOutWithoutDying) {
  worker::EvalRequest req = worker::TextRequest(kWidened, "widened-warm");
  ASSERT_TRUE(req.module);
  worker::EvalSettings s;
  s.threads = 1;
  s.memory_budget_bytes = int64_t{384} << 20;
  worker::WarmChild child;
  worker::ChildOutput out = child.Run(req, s, 60000);
  ASSERT_TRUE(out.started) << out.error;
  ASSERT_TRUE(out.Clean()) << "a reported record, not a dead child";
  absl::StatusOr<ResultRecord> r = proto::DecodeRecord(out.bytes);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, JobStatus::kResourceExhausted) << r->message;
  EXPECT_TRUE(Contains(r->message, "ran out of its 384 MiB")) << r->message;
  EXPECT_GT(child.pid(), 0) << "the child survived its job";
  worker::EvalRequest small = worker::TextRequest(AddModule("limits"), "small-warm");
  worker::ChildOutput ok = child.Run(small, s, 20000);
  ASSERT_TRUE(ok.Clean());
  absl::StatusOr<ResultRecord> rok = proto::DecodeRecord(ok.bytes);
  ASSERT_TRUE(rok.ok()) << rok.status();
  EXPECT_EQ(rok->status, JobStatus::kOk) << rok->message;
}

// Every corpus module fits the default budget by its plan, and the plan is honest enough for
// the hard limit: run in a child held to a budget of exactly its planned job bytes (the
// tightest one the first line accepts), it never runs out. A sample by default; every module
// with HLOX_FULL=1.
TEST(JobLimits, CorpusRunsWithinItsPlannedBudget) {
  HLOX_REQUIRE_CORPUS();
  const char* full_env = std::getenv("HLOX_FULL");
  const bool full = full_env != nullptr && std::string(full_env) == "1";
  const int64_t default_budget = DefaultJobMemoryBytes();
  int ran = 0;
  for (const std::string& path : CorpusFiles()) {
    const std::string name = std::filesystem::path(path).filename().string();
    SCOPED_TRACE(name);
    worker::EvalRequest req = worker::TextRequest(ReadFileOrDie(path), name);
    ASSERT_TRUE(req.module);
    const int64_t planned = PlannedJobBytes(*req.module, nullptr);
    EXPECT_LE(planned, default_budget) << FormatBytes(planned);
    if (!full && ran >= 4) continue;
    ++ran;
    const Module& m = *req.module;
    worker::ChildOutput out = worker::RunInChild(
        [&] {
          auto exec = rt::Executor::Create(m, rt::ExecOptions{});
          if (!exec.ok()) return std::string("E") + std::string(exec.status().message());
          auto v = (*exec)->Run(rt::MakeSeededInputs(m, 0));
          return v.ok() ? std::string("O") : std::string("E") + std::string(v.status().message());
        },
        120000, 1 << 20, planned, 1);
    EXPECT_FALSE(out.OutOfMemory()) << "ran out under its planned " << FormatBytes(planned);
    EXPECT_TRUE(out.Clean()) << out.error;
    EXPECT_EQ(out.bytes.substr(0, 1), "O") << out.bytes;
  }
}

}  // namespace
}  // namespace hlox::testing
