// Search verdicts measured on the fleet: a paired job through a real broker and worker (figures,
// provenance, error statuses), the broker's refusal to cache or coalesce paired jobs (even
// when a raw SUBMIT asks for the cache), an unknown kind refused with an ERROR naming the job,
// and a `--broker` search (fusion race and pass-order) whose verdict a worker measured while
// this process never created an executor; the same search --in-process does create them.
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <unistd.h>

#include "agent/fleet_evaluator.h"
#include "agent/search_session.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "local/local_evaluator.h"
#include "nlohmann/json.hpp"
#include "protocol/frames.h"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"
#include "runtime/core/executor.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;
using proto::Command;

// Elementwise chain over parameters only: fusion sites, and nothing for constant folding (which
// runs the executor on constants), so building the search space executes nothing here.
constexpr char kChain[] = R"(HloModule chain

ENTRY main {
  p0 = f32[256] parameter(0)
  p1 = f32[256] parameter(1)
  a = f32[256] add(p0, p1)
  m = f32[256] multiply(a, p1)
  e = f32[256] exponential(m)
  ROOT s = f32[256] subtract(e, p0)
}
)";

client::JobSpec PairedJob(const std::string& id, const std::string& text) {
  client::JobSpec j;
  j.id = id;
  j.campaign = "verdicts";
  j.module_text = std::make_shared<const std::string>(text);
  j.kind = proto::kKindPaired;
  j.pipeline = "all-fuse";
  j.paired.baseline_pipeline = "default";
  j.paired.seed = 3;
  j.paired.protocol.time_cap_seconds = 0.2;
  j.paired.protocol.max_samples = 40;
  return j;
}

TEST(FleetVerdict, WorkerMeasuresPairedJobsAndReportsErrors) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "pw");
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Submit(PairedJob("ok", kChain)).ok());
  client::JobSpec bad = PairedJob("bad-candidate", kChain);
  bad.pipeline = "default";
  bad.decisions = {{"fusion#0", {7, 7, 7, 7, 7, 7, 7, 7, 7}}};
  ASSERT_TRUE((*client)->Submit(bad).ok());
  client::JobSpec bad_base = PairedJob("bad-baseline", kChain);
  bad_base.paired.baseline_decisions = {{"fusion#0", {7, 7, 7, 7, 7, 7, 7, 7, 7}}};
  ASSERT_TRUE((*client)->Submit(bad_base).ok());
  client::JobSpec unknown = PairedJob("unknown-kind", kChain);
  unknown.kind = "transmogrify";
  EXPECT_FALSE((*client)->Submit(unknown).ok()) << "the client refuses an unknown kind itself";
  auto got = Collect(**client, 3, 60s, nullptr);
  ASSERT_EQ(got.size(), 3u);
  const ResultRecord& ok = got["ok"].record;
  ASSERT_EQ(ok.status, JobStatus::kOk) << ok.message;
  ASSERT_TRUE(ok.paired.has_value());
  EXPECT_GT(ok.paired->ratio, 0);
  EXPECT_GE(ok.paired->rounds, 8);  // kMinPairedRounds
  EXPECT_EQ(static_cast<size_t>(ok.paired->rounds), ok.paired->ratios.size());
  EXPECT_GT(ok.paired->baseline_median, 0);
  EXPECT_GT(ok.paired->candidate_median, 0);
  EXPECT_LE(ok.paired->ci_low, ok.paired->ratio);
  EXPECT_GE(ok.paired->ci_high, ok.paired->ratio);
  EXPECT_EQ(ok.provenance.worker_id, "pw");
  EXPECT_FALSE(ok.provenance.hardware_class.empty());
  EXPECT_EQ(ok.pipeline, "all-fuse");
  EXPECT_FALSE(got["ok"].cached);
  EXPECT_EQ(got["bad-candidate"].record.status, JobStatus::kInvalidDecisions);
  EXPECT_FALSE(got["bad-candidate"].record.paired.has_value());
  EXPECT_EQ(got["bad-baseline"].record.status, JobStatus::kInvalidDecisions);
  EXPECT_NE(got["bad-baseline"].record.message.find("baseline"), std::string::npos)
      << got["bad-baseline"].record.message;
}

TEST(FleetVerdict, BrokerNeverCachesOrCoalescesPairedJobs) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "sw", {"--test-mode", "sleep-100"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  // A raw agent, so the SUBMITs can ask for the cache (the client library never does for
  // paired jobs): two identical paired jobs in flight together, a third after they finished.
  zmq::context_t ctx(1);
  auto s = proto::ConnectDealer(ctx, addr, "raw-agent");
  ASSERT_TRUE(s.ok());
  auto submit = [&](const std::string& id, const std::string& kind) {
    proto::SubmitMsg m;
    m.job_id = id;
    m.campaign = "nocache";
    m.module_text = AddModule();
    m.module_hash = proto::TextHash(m.module_text);
    m.pipeline = "default";
    m.use_cache = true;
    m.kind = kind;
    m.paired.seed = 1;
    ASSERT_EQ(proto::SendMsg(*s, "", Command::kSubmit, proto::Encode(m)), proto::SendResult::kOk);
  };
  std::map<std::string, proto::ResultMsg> results;
  std::map<std::string, proto::ErrorMsg> errors;
  auto wait = [&](size_t n) {
    proto::Received in;
    auto deadline = std::chrono::steady_clock::now() + 20s;
    while (results.size() + errors.size() < n && std::chrono::steady_clock::now() < deadline) {
      zmq::pollitem_t item{static_cast<void*>(*s), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, 100ms);
      while (proto::RecvMsg(*s, false, &in)) {
        auto f = proto::SplitFrames(in);
        ASSERT_TRUE(f.ok()) << f.status();
        if (f->command == Command::kResult) {
          auto r = proto::DecodeResult(f->body);
          ASSERT_TRUE(r.ok());
          results[r->job_id] = *r;
        } else if (f->command == Command::kError) {
          auto e = proto::DecodeError(f->body);
          ASSERT_TRUE(e.ok());
          errors[e->job_id] = *e;
        }
      }
    }
  };
  submit("p1", proto::kKindPaired);
  submit("p2", proto::kKindPaired);
  wait(2);
  submit("p3", proto::kKindPaired);
  submit("odd", "transmogrify");
  wait(4);
  ASSERT_EQ(results.size(), 3u);
  for (const char* id : {"p1", "p2", "p3"}) {
    EXPECT_FALSE(results[id].cached) << id;
    EXPECT_GE(results[id].attempts, 1u) << id << " was dispatched to the worker";
  }
  ASSERT_EQ(errors.count("odd"), 1u) << "an unknown kind is refused, naming the job";
  EXPECT_EQ(errors["odd"].code, proto::kErrDecode);
  // Evaluations of the same module are still cached: the rule is the kind's.
  submit("e1", proto::kKindEvaluate);
  wait(5);
  submit("e2", proto::kKindEvaluate);
  wait(6);
  ASSERT_EQ(results.count("e2"), 1u);
  EXPECT_TRUE(results["e2"].cached);
  auto st = nlohmann::json::parse(*client::ControlRequest(proto::ControlAddressFor(addr), "status"));
  EXPECT_EQ(st["totals"]["cache_hits"].get<int>(), 1);
  EXPECT_EQ(st["workers"][0]["jobs_done"].get<int>(), 4);
}

std::string WriteModule(const std::string& text) {
  auto dir = std::filesystem::temp_directory_path() /
             ("hlox-fleet-verdict-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "chain.hlo").string();
  std::ofstream(path) << text;
  return path;
}

SessionOptions SearchOn(const std::string& path, const std::string& broker) {
  SessionOptions o;
  o.module_path = path;
  o.broker = broker;
  o.progress = false;
  o.race_k = 3;
  o.race_seconds = 0.5;
  o.search.algo = "random";
  o.search.budget = 10;
  o.search.seed = 5;
  return o;
}

TEST(FleetVerdict, BrokerSearchVerdictIsMeasuredByAWorkerNotThisProcess) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "vw1");
  auto w2 = StartWorker(addr, "vw2");
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 2, 10s));
  const std::string path = WriteModule(kChain);
  const int64_t before = rt::ExecutorsCreated();

  absl::StatusOr<SessionResult> r = RunSearchSession(SearchOn(path, addr));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->race.standings.empty()) << "the search found candidates to race";
  EXPECT_TRUE(r->verdict_measured);
  const MeasuredBy& by = r->verdict_measured_by;
  EXPECT_EQ(by.where, "fleet");
  EXPECT_GT(by.measurements, 0);
  EXPECT_TRUE(by.worker_id == "vw1" || by.worker_id == "vw2") << by.worker_id;
  EXPECT_FALSE(by.hardware_class.empty());
  int measured = 0;
  for (const RaceStanding& s : r->race.standings) measured += !s.failed;
  EXPECT_GT(measured, 0) << "race measurements succeeded on the fleet";
  const nlohmann::json summary = r->Summary(SearchOn(path, addr));
  EXPECT_EQ(summary["verdict_measured_by"]["where"], "fleet");

  // Pass-order: the best sequence goes to the fleet as a "seq:" pipeline.
  SessionOptions po = SearchOn(path, addr);
  po.search.algo = "pass-order";
  po.search.budget = 4;
  absl::StatusOr<SessionResult> p = RunSearchSession(po);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->verdict_measured);
  EXPECT_EQ(p->verdict_measured_by.where, "fleet");
  EXPECT_EQ(p->verdict_measured_by.measurements, 1);

  EXPECT_EQ(rt::ExecutorsCreated(), before) << "the agent process executed a module";

  // The agent library alone cannot evaluate in-process: that needs the local library's backend.
  SessionOptions local = SearchOn(path, "");
  local.in_process = true;
  local.search.budget = 4;
  absl::StatusOr<SessionResult> none = RunSearchSession(local);
  EXPECT_EQ(none.status().code(), absl::StatusCode::kFailedPrecondition) << none.status();
  EXPECT_EQ(rt::ExecutorsCreated(), before);

  // The control: the same search --in-process with LocalBackend() measures here, and the
  // counter sees it.
  local.in_process_backend = LocalBackend();
  absl::StatusOr<SessionResult> l = RunSearchSession(local);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_GT(rt::ExecutorsCreated(), before);
  if (l->verdict_measured_by.measurements > 0) {
    EXPECT_EQ(l->verdict_measured_by.where, "in-process");
  }
}

}  // namespace
}  // namespace hlox::testing
