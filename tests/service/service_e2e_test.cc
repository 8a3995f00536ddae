// End-to-end service tests with real processes on loopback: jobs evaluated by real workers,
// the result cache and coalescing, status JSON, control ops, and the embedded mode.
#include <filesystem>
#include <thread>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "client/embedded.h"
#include "common/cpu_isa.h"
#include "cost/evaluate.h"
#include "cost/module_hash.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"
#include "tests/test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

client::JobSpec Job(const std::string& id, std::shared_ptr<const std::string> text,
                   bool cache = true) {
  client::JobSpec j;
  j.id = id;
  j.campaign = "e2e";
  j.module_text = std::move(text);
  j.pipeline = "default";
  j.use_cache = cache;
  return j;
}

TEST(ServiceE2E, RealWorkersEvaluateJobs) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "w1");
  auto w2 = StartWorker(addr, "w2");
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 2, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  const std::string module_hash = ModuleHash(**ParseModule(*text, "add"));
  const int n = 12;
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*client)->Submit(Job("j" + std::to_string(i), text, false)).ok());
  int dups = 0;
  auto results = Collect(**client, n, 30s, &dups);
  ASSERT_EQ(results.size(), size_t(n));
  EXPECT_EQ(dups, 0);
  // `hlox worker` without --class registers as "cpu" plus its ISA level (the active one, which
  // it inherits from this process's environment).
  const std::string isa(IsaName(ActiveIsa()));
  std::set<std::string> workers;
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id << ": " << r.record.message;
    EXPECT_EQ(r.record.module_hash, module_hash);
    EXPECT_EQ(r.record.text_hash, proto::TextHash(*text));
    EXPECT_GE(r.attempts, 1u);
    EXPECT_EQ(r.record.provenance.isa, isa);
    EXPECT_EQ(r.record.provenance.hardware_class, "cpu-" + isa);
    workers.insert(r.record.provenance.worker_id);
  }
  EXPECT_EQ(workers.size(), 2u) << "both workers should get work";
  // Status JSON: both workers, jobs counted.
  auto st = client::ControlRequest(proto::ControlAddressFor(addr), "status");
  ASSERT_TRUE(st.ok()) << st.status();
  auto j = nlohmann::json::parse(*st);
  EXPECT_EQ(j["workers"].size(), 2u);
  EXPECT_EQ(j["totals"]["completed"].get<int>(), n);
  int64_t done = 0;
  for (auto& w : j["workers"]) {
    done += w["jobs_done"].get<int64_t>();
    EXPECT_TRUE(w["state"] == "idle" || w["state"] == "busy");
    EXPECT_EQ(w["hardware_class"], "cpu-" + isa);
    EXPECT_EQ(w["isa"], isa);
    EXPECT_NE(w["cpu"], "");
  }
  EXPECT_EQ(done, n);
  EXPECT_EQ(j["queues"]["campaigns"]["e2e"]["done"].get<int>(), n);
}

// A job pinned to a bare class ("cpu", no level) runs on that class at whatever level a worker
// runs; a campaign of such jobs is held to the class (and so the level) of its first dispatch.
// With a generic-level worker beside the best-level one, no job of the campaign may run on the
// other level.
// One module identity: a fleet record and an in-process record of the same module carry the
// same module_hash, whatever metadata or text the job sent; the text's hash (the fleet's
// address) is reported separately.
TEST(ServiceE2E, FleetAndInProcessRecordsShareTheModuleHash) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "w1");
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  const std::string body =
      "\n\nENTRY main {\n  a = f32[4] parameter(0), metadata={op_name=\"x\"}\n  b = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] add(a, b), metadata={op_name=\"jit(f)/add\" source_file=\"f.py\" source_line=";
  auto one = std::make_shared<const std::string>("HloModule meta" + body + "3}\n}\n");
  auto two = std::make_shared<const std::string>("HloModule meta" + body + "7}\n}\n");
  ASSERT_TRUE((*client)->Submit(Job("one", one, false)).ok());
  ASSERT_TRUE((*client)->Submit(Job("two", two, false)).ok());
  auto results = Collect(**client, 2, 30s, nullptr);
  ASSERT_EQ(results.size(), 2u);
  auto parsed = ParseModule(*one, "one");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EvalOptions local;
  local.measure = false;  // identity only: no timing needed
  ResultRecord here = EvaluateCandidate(**parsed, "default", {}, local);
  ASSERT_EQ(here.status, JobStatus::kOk) << here.message;
  EXPECT_EQ(here.module_hash, ModuleHash(**parsed));
  EXPECT_TRUE(here.text_hash.empty());
  for (const auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id << ": " << r.record.message;
    EXPECT_EQ(r.record.module_hash, here.module_hash) << id;
  }
  EXPECT_EQ(results["one"].record.text_hash, proto::TextHash(*one));
  EXPECT_EQ(results["two"].record.text_hash, proto::TextHash(*two));
  EXPECT_NE(results["one"].record.text_hash, results["two"].record.text_hash);
}

TEST(ServiceE2E, BareClassPinsRunAtOneLevelPerCampaign) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  auto broker = StartBroker(addr);
  auto best = StartWorker(addr, "best");
  auto generic = StartWorker(addr, "generic", {"--isa", "generic"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 2, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 10;
  for (int i = 0; i < n; ++i) {
    client::JobSpec j = Job("b" + std::to_string(i), text, false);
    j.campaign = "bare";
    j.hardware_class = "cpu";
    ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
  }
  auto results = Collect(**client, n, 30s, nullptr);
  ASSERT_EQ(results.size(), size_t(n));
  std::set<std::string> classes;
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id << ": " << r.record.message;
    EXPECT_EQ(r.record.provenance.hardware_class.rfind("cpu-", 0), 0u) << r.record.provenance.hardware_class;
    classes.insert(r.record.provenance.hardware_class);
  }
  EXPECT_EQ(classes.size(), 1u) << "one campaign ran on two levels";
}

TEST(ServiceE2E, CacheAnswersIdenticalJobsAndCoalesces) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "w1", {"--test-mode", "sleep-200"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  // Two identical jobs in flight together: one evaluation, the twin coalesced.
  ASSERT_TRUE((*client)->Submit(Job("a", text)).ok());
  ASSERT_TRUE((*client)->Submit(Job("b", text)).ok());
  auto first = Collect(**client, 2, 10s, nullptr);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first["a"].cached + first["b"].cached, 1);
  // A third identical job later: answered from the cache, no dispatch.
  ASSERT_TRUE((*client)->Submit(Job("c", text)).ok());
  auto third = Collect(**client, 1, 10s, nullptr);
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third["c"].attempts, 0u);
  EXPECT_TRUE(third["c"].cached);
  EXPECT_EQ(third["c"].record.status, JobStatus::kOk);
  auto st = nlohmann::json::parse(*client::ControlRequest(proto::ControlAddressFor(addr), "status"));
  EXPECT_EQ(st["totals"]["cache_hits"].get<int>(), 2);
  EXPECT_EQ(st["workers"][0]["jobs_done"].get<int>(), 1);
}

TEST(ServiceE2E, RecordsBeyondTheMemoryBoundAreReadBackFromTheStore) {
  // With --result-memory-mb 0 every committed record leaves memory at once; a resubmitted job
  // id and an identical job must still get the stored record, without running again.
  std::string dir = std::filesystem::temp_directory_path() / ("hlox-mem-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr, dir + "/broker.db", {"--result-memory-mb", "0"});
  auto w1 = StartWorker(addr, "w1", {"--test-mode", "sleep-10"});
  const std::string control = proto::ControlAddressFor(addr);
  ASSERT_TRUE(WaitForWorkers(control, 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto x = std::make_shared<const std::string>(AddModule("x"));
  auto y = std::make_shared<const std::string>(AddModule("y"));
  ASSERT_TRUE((*client)->Submit(Job("a", x)).ok());
  ASSERT_TRUE((*client)->Submit(Job("b", y)).ok());
  auto first = Collect(**client, 2, 10s, nullptr);
  ASSERT_EQ(first.size(), 2u);
  auto status = [&] { return nlohmann::json::parse(*client::ControlRequest(control, "status")); };
  EXPECT_EQ(status()["totals"]["resident_result_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(status()["totals"]["store_reads"].get<int64_t>(), 0);
  auto late = client::Client::Connect(addr);
  ASSERT_TRUE((*late)->Submit(Job("a", x)).ok());   // the same id again
  ASSERT_TRUE((*late)->Submit(Job("c", x)).ok());   // a new id, same job: the cache
  auto again = Collect(**late, 2, 10s, nullptr);
  ASSERT_EQ(again.size(), 2u);
  for (const char* id : {"a", "c"}) {
    EXPECT_EQ(again[id].record.status, JobStatus::kOk) << id;
    EXPECT_GT(first["a"].record.eval_seconds, 0) << id;  // the sleep job's own length
    EXPECT_EQ(again[id].record.eval_seconds, first["a"].record.eval_seconds) << id;
    EXPECT_EQ(again[id].record.module_hash, first["a"].record.module_hash) << id;
  }
  auto st = status();
  EXPECT_EQ(st["totals"]["store_reads"].get<int64_t>(), 2);
  EXPECT_EQ(st["workers"][0]["jobs_done"].get<int>(), 2);  // nothing ran twice
  std::filesystem::remove_all(dir);
}

TEST(ServiceE2E, TwinSubmittedAfterDispatchCoalesces) {
  // The first job runs (pinning its campaign to the worker's class) before its twin arrives;
  // the twin, now keyed under that class, must still find it in flight.
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "w1", {"--test-mode", "sleep-400"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  ASSERT_TRUE((*client)->Submit(Job("a", text)).ok());
  std::this_thread::sleep_for(150ms);  // "a" is dispatched and running
  ASSERT_TRUE((*client)->Submit(Job("b", text)).ok());
  auto r = Collect(**client, 2, 10s, nullptr);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_FALSE(r["a"].cached);
  EXPECT_TRUE(r["b"].cached);
  auto st = nlohmann::json::parse(*client::ControlRequest(proto::ControlAddressFor(addr), "status"));
  EXPECT_EQ(st["workers"][0]["jobs_done"].get<int>(), 1);
}

TEST(ServiceE2E, ControlCancelDrainShutdown) {
  int port = FreePortPair();
  std::string addr = TcpAddress(port);
  std::string ctl = proto::ControlAddressFor(addr);
  auto broker = StartBroker(addr);
  auto w1 = StartWorker(addr, "w1", {"--test-mode", "sleep-100", "--credit", "1"});
  ASSERT_TRUE(WaitForWorkers(ctl, 1, 10s));
  auto client = client::Client::Connect(addr);
  auto text = std::make_shared<const std::string>(AddModule());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE((*client)->Submit(Job(absl::StrCat("c", i), text, false)).ok());
  }
  std::this_thread::sleep_for(300ms);
  // Status answers (within the request's own deadline) although 50 jobs are queued behind a
  // slow worker: control never waits behind evaluations.
  ASSERT_TRUE(client::ControlRequest(ctl, "status").ok());
  ASSERT_TRUE(client::ControlRequest(ctl, "cancel", "e2e").ok());
  auto results = Collect(**client, 50, 10s, nullptr);
  ASSERT_EQ(results.size(), 50u);
  int cancelled = 0, ok = 0;
  for (auto& [id, r] : results) {
    cancelled += r.record.status == JobStatus::kCancelled;
    ok += r.record.status == JobStatus::kOk;
  }
  EXPECT_GT(cancelled, 35);
  EXPECT_EQ(cancelled + ok, 50);
  EXPECT_FALSE(client::ControlRequest(ctl, "bogus-op").ok());
  ASSERT_TRUE(client::ControlRequest(ctl, "drain", "w1").ok());
  EXPECT_NE(w1->Wait(5s), -1) << "a drained worker exits";
  ASSERT_TRUE(client::ControlRequest(ctl, "shutdown").ok());
  EXPECT_NE(broker->Wait(5s), -1);
}

// The fleet's workers register under its hardware_class ("local" plus the active ISA level), so
// jobs pinned to that class run (a class the workers do not carry would leave them queued).
TEST(ServiceE2E, EmbeddedFleet) {
  client::EmbeddedOptions o;
  o.hlox_binary = HloxBinary();
  auto fleet = client::StartEmbeddedFleet(2, o);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  const std::string isa(IsaName(ActiveIsa()));
  EXPECT_EQ(fleet->hardware_class, "local-" + isa);
  auto client = client::Client::Connect(fleet->address);
  ASSERT_TRUE(client.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  for (int i = 0; i < 6; ++i) {
    client::JobSpec j = Job("e" + std::to_string(i), text, false);
    j.hardware_class = fleet->hardware_class;
    ASSERT_TRUE((*client)->Submit(std::move(j)).ok());
  }
  auto results = Collect(**client, 6, 30s, nullptr);
  ASSERT_EQ(results.size(), 6u);
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << r.record.message;
    EXPECT_EQ(r.record.provenance.hardware_class, fleet->hardware_class);
    EXPECT_EQ(r.record.provenance.isa, isa);
  }
  EXPECT_EQ(fleet->handle->worker_pids().size(), 2u);
}

// A client in the fleet's process reaches the broker on its inproc endpoint; one that opts out
// uses the ipc address; both get every result, and the endpoint is gone with the fleet (a
// client that outlives it still shuts down).
TEST(ServiceE2E, EmbeddedFleetInprocAndIpcClients) {
  client::EmbeddedOptions o;
  o.hlox_binary = HloxBinary();
  o.worker_args = {"--test-mode", "echo"};
  auto fleet = client::StartEmbeddedFleet(1, o);
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  client::LocalEndpoint local = client::LocalEndpointFor(fleet->address);
  ASSERT_NE(local.context, nullptr);
  EXPECT_EQ(local.inproc.rfind("inproc://", 0), 0u) << local.inproc;
  EXPECT_EQ(client::LocalEndpointFor("ipc:///tmp/not-a-fleet").context, nullptr);
  local = {};
  auto inproc = client::Client::Connect(fleet->address);
  client::ClientOptions co;
  co.local_inproc = false;
  auto ipc = client::Client::Connect(fleet->address, co);
  ASSERT_TRUE(inproc.ok() && ipc.ok());
  auto text = std::make_shared<const std::string>(AddModule());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*inproc)->Submit(Job("in" + std::to_string(i), text, false)).ok());
    ASSERT_TRUE((*ipc)->Submit(Job("ipc" + std::to_string(i), text, false)).ok());
  }
  auto a = Collect(**inproc, 20, 30s, nullptr);
  auto b = Collect(**ipc, 20, 30s, nullptr);
  ASSERT_EQ(a.size(), 20u);
  ASSERT_EQ(b.size(), 20u);
  for (auto& [id, r] : a) EXPECT_EQ(id.rfind("in", 0), 0u) << id;
  for (auto& [id, r] : b) EXPECT_EQ(id.rfind("ipc", 0), 0u) << id;
  const std::string address = fleet->address;
  fleet->handle.reset();
  EXPECT_EQ(client::LocalEndpointFor(address).context, nullptr);
  inproc->reset();  // outlived the broker: closes without hanging on the shared context
}

}  // namespace
}  // namespace hlox::testing
