// Reliability with real processes on loopback: a worker killed mid-job, a broker killed and
// restarted on the same SQLite store, a job that crashes every worker (POISON), a hang
// (TIMEOUT), and a worker that rejoins holding a stale attempt of its job. Each checks exactly
// one result per job against the set of submitted ids.
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "client/client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"
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

// A worker that is lost while it runs a job, rejoins and gets the same job again, then reports
// the old attempt: that DONE must not end the new attempt's lease. Found by the chaos soak (a
// SIGSTOPped worker): the stale DONE released the lease, so when the worker then died its job
// was not re-queued and waited for its whole run timeout. Here a raw protocol worker plays the
// rejoining worker; once it goes silent, a real worker must get the job long before the
// 60 s run timeout.
TEST(Reliability, StaleDoneOfAnOlderAttemptKeepsTheNewLease) {
  std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr);
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 0, 10s)) << "the broker did not start";
  auto ctx = std::make_shared<zmq::context_t>(1);
  zmq::socket_t raw(*ctx, zmq::socket_type::dealer);
  raw.set(zmq::sockopt::routing_id, "stale-worker");
  raw.set(zmq::sockopt::linger, 0);
  raw.connect(addr);
  proto::ReadyMsg ready;
  ready.worker_id = "stale";
  ready.host = "test";
  ready.hardware_class = "";
  ready.credit = 1;
  auto send = [&](proto::Command c, const std::string& body) {
    raw.send(zmq::buffer(proto::MakeHeader(c)), zmq::send_flags::sndmore);
    raw.send(zmq::buffer(body), zmq::send_flags::none);
  };
  // The next JOB the raw worker receives (other commands skipped), within `timeout`.
  auto next_job = [&](std::chrono::milliseconds timeout) -> std::optional<proto::JobMsg> {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      zmq::pollitem_t item{static_cast<void*>(raw), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(100));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<zmq::message_t> parts;
      do {
        parts.emplace_back();
        (void)raw.recv(parts.back(), zmq::recv_flags::none);
      } while (parts.back().more());
      if (parts.size() != 2 || parts[0].size() < 4 ||
          parts[0].data<char>()[3] != static_cast<char>(proto::Command::kJob)) {
        continue;
      }
      auto j = proto::DecodeJob(std::string_view(parts[1].data<char>(), parts[1].size()));
      if (j.ok()) return *j;
    }
    return std::nullopt;
  };
  send(proto::Command::kReady, proto::Encode(ready));
  auto client = client::Client::Connect(addr);
  ASSERT_TRUE(client.ok()) << client.status();
  auto job = Job("stale", std::make_shared<const std::string>(AddModule("stale")));
  job.run_timeout_ms = 60000;
  ASSERT_TRUE((*client)->Submit(job).ok());
  std::optional<proto::JobMsg> first = next_job(10s);
  ASSERT_TRUE(first.has_value());
  // Rejoin: the broker loses the worker (the job goes back to the queue) and leases the job to
  // it again, as the next attempt.
  send(proto::Command::kReady, proto::Encode(ready));
  std::optional<proto::JobMsg> second = next_job(10s);
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->job_id, first->job_id);
  ASSERT_GT(second->attempt, first->attempt);
  // The old attempt's result arrives now, then the worker dies (goes silent).
  ResultRecord stale;
  stale.status = JobStatus::kOk;
  send(proto::Command::kDone, proto::Encode(proto::DoneMsg{first->job_id, first->attempt, false,
                                                            proto::EncodeRecord(stale)}));
  std::this_thread::sleep_for(300ms);
  raw.close();
  auto w = StartWorker(addr, "real");
  const auto start = std::chrono::steady_clock::now();
  auto results = Collect(**client, 1, 30s, nullptr);
  ASSERT_EQ(results.size(), 1u) << "the job waited for its run timeout";
  EXPECT_EQ(results["stale"].record.status, JobStatus::kOk);
  EXPECT_EQ(results["stale"].record.provenance.worker_id, "real");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
}

}  // namespace
}  // namespace hlox::testing
