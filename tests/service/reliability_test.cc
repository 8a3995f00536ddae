// Reliability with real processes on loopback: a worker killed mid-job, a broker killed and
// restarted on the same SQLite store, a job that crashes every worker (POISON), and a hang
// (TIMEOUT). Each checks exactly one result per job against the set of submitted ids.
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "client/client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

client::JobSpec Job(const std::string& id, std::shared_ptr<const std::string> text) {
  client::JobSpec j;
  j.id = id;
  j.campaign = "rel";
  j.module_text = std::move(text);
  j.pipeline = "default";
  j.use_cache = false;
  return j;
}

TEST(Reliability, KilledWorkerJobCompletesElsewhere) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto victim = StartWorker(addr, "victim", {"--test-mode", "sleep-400", "--credit", "2"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 6;
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*client)->Submit(Job("k" + std::to_string(i), text)).ok());
  std::this_thread::sleep_for(150ms);  // the victim now holds two leases mid-job
  victim->Kill(9);
  auto survivor = StartWorker(addr, "survivor", {"--test-mode", "sleep-20"});
  int dups = 0;
  auto results = Collect(**client, n, 20s, &dups);
  ASSERT_EQ(results.size(), size_t(n));
  EXPECT_EQ(dups, 0);
  int retried = 0;
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id;
    EXPECT_EQ(r.record.provenance.worker_id, "survivor") << id;
    retried += r.attempts >= 2;
  }
  EXPECT_EQ(retried, 2) << "the two leased jobs were re-dispatched";
  std::this_thread::sleep_for(300ms);
  EXPECT_FALSE(client->get()->Next(100ms).has_value()) << "no extra results";
}

// The whole machine pausing (a VM descheduled by its host, a laptop suspended) stops the broker
// and its workers together for longer than the heartbeat liveness (4 x 250 ms). When they run
// again nobody was silent while the others listened: no worker is lost and no job re-run.
TEST(Reliability, PausedFleetLosesNoWorkerAndRunsEachJobOnce) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto worker = StartWorker(addr, "paused", {"--test-mode", "sleep-300", "--credit", "1"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 3;
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*client)->Submit(Job("p" + std::to_string(i), text)).ok());
  std::this_thread::sleep_for(150ms);  // the worker is mid-job
  broker->Kill(SIGSTOP);
  worker->Kill(SIGSTOP);
  std::this_thread::sleep_for(1800ms);
  worker->Kill(SIGCONT);
  broker->Kill(SIGCONT);
  int dups = 0;
  auto results = Collect(**client, n, 20s, &dups);
  ASSERT_EQ(results.size(), size_t(n));
  EXPECT_EQ(dups, 0);
  for (auto& [id, r] : results) {
    EXPECT_EQ(r.record.status, JobStatus::kOk) << id;
    EXPECT_EQ(r.attempts, 1u) << id << ": the pause made the broker re-dispatch it";
  }
}

std::set<std::string> StoredIds(const std::string& db) {
  std::set<std::string> ids;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return ids;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT job_id FROM results", -1, &st, nullptr);
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    ids.insert(std::string(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                           sqlite3_column_bytes(st, 0)));
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return ids;
}

TEST(Reliability, KilledBrokerRestartsOnSameStore) {
  std::string dir = std::filesystem::temp_directory_path() / ("hlox-rel-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string db = dir + "/broker.db";
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr, db);
  auto w1 = StartWorker(addr, "w1", {"--test-mode", "sleep-10"});
  auto w2 = StartWorker(addr, "w2", {"--test-mode", "sleep-10"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 2, 10s));
  auto client = client::Client::Connect(addr);
  auto text = std::make_shared<const std::string>(AddModule());
  const int n = 200;
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*client)->Submit(Job("r" + std::to_string(i), text)).ok());
  // Take some results, then kill the broker in the middle of the campaign.
  int dups = 0;
  auto before = Collect(**client, 40, 20s, &dups);
  ASSERT_GE(before.size(), 40u);
  broker->Kill(9);
  broker->Wait(5s);
  std::set<std::string> acked;
  for (auto& [id, r] : before) acked.insert(id);
  std::set<std::string> stored = StoredIds(db);
  for (const std::string& id : acked) EXPECT_TRUE(stored.count(id)) << id << " acknowledged, not stored";
  std::this_thread::sleep_for(300ms);
  broker = StartBroker(addr, db);
  auto rest = Collect(**client, n - before.size(), 30s, &dups);
  for (auto& [id, r] : rest) {
    EXPECT_FALSE(before.count(id)) << id << " delivered twice";
    before[id] = r;
  }
  EXPECT_EQ(before.size(), size_t(n));
  EXPECT_EQ(dups, 0);
  for (int i = 0; i < n; ++i) EXPECT_TRUE(before.count("r" + std::to_string(i)));
  EXPECT_GE((*client)->resubmissions(), 1);
  // Every result is in the store, once.
  std::set<std::string> all = StoredIds(db);
  EXPECT_EQ(all.size(), size_t(n));
  // Resubmitting a finished job id is answered from the store, not re-run.
  auto late = client::Client::Connect(addr);
  ASSERT_TRUE((*late)->Submit(Job("r0", text)).ok());
  auto again = Collect(**late, 1, 10s, nullptr);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again["r0"].record.status, JobStatus::kOk);
  std::filesystem::remove_all(dir);
}

TEST(Reliability, CrashingJobEndsPoisonOthersComplete) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(StartWorker(addr, "p" + std::to_string(i), {}, {"HLOX_TEST_TARGETS=1"}));
  }
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 3, 10s));
  auto client = client::Client::Connect(addr);
  auto good = std::make_shared<const std::string>(AddModule());
  auto bad = std::make_shared<const std::string>(CustomCallModule("__hlox$abort"));
  ASSERT_TRUE((*client)->Submit(Job("poison", bad)).ok());
  for (int i = 0; i < 8; ++i) ASSERT_TRUE((*client)->Submit(Job("g" + std::to_string(i), good)).ok());
  auto results = Collect(**client, 9, 30s, nullptr);
  ASSERT_EQ(results.size(), 9u);
  EXPECT_EQ(results["poison"].record.status, JobStatus::kPoison) << results["poison"].record.message;
  EXPECT_EQ(results["poison"].attempts, 3u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(results["g" + std::to_string(i)].record.status, JobStatus::kOk);
  }
  for (auto& w : workers) EXPECT_TRUE(w->Running()) << "forked evaluation protects the worker";
}

TEST(Reliability, HangingJobTimesOut) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  auto w = StartWorker(addr, "h0", {}, {"HLOX_TEST_TARGETS=1"});
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto client = client::Client::Connect(addr);
  auto hang = Job("hang", std::make_shared<const std::string>(CustomCallModule("__hlox$hang")));
  hang.run_timeout_ms = 500;
  ASSERT_TRUE((*client)->Submit(hang).ok());
  ASSERT_TRUE((*client)->Submit(Job("after", std::make_shared<const std::string>(AddModule()))).ok());
  auto results = Collect(**client, 2, 20s, nullptr);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results["hang"].record.status, JobStatus::kTimeout);
  EXPECT_EQ(results["after"].record.status, JobStatus::kOk);
}

}  // namespace
}  // namespace hlox::testing
