// The cost's optional record fields (interference totals, host-speed normalization) end to end:
// a worker that sends them (the test plays it, speaking the protocol on a DEALER) through a real
// `hlox broker` process with a result store to client::Client, live and again from the store;
// and a record without them still arrives with them zero (backward compatible).
#include <filesystem>
#include <thread>

#include "client/client.h"
#include "gtest/gtest.h"
#include "protocol/frames.h"
#include "protocol/protocol.h"
#include "protocol/zmq_util.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;
using proto::Command;

// The record the fake worker returns for `job_id`: normalized fields for ids "norm-*".
ResultRecord RecordFor(const std::string& job_id) {
  ResultRecord r;
  r.status = JobStatus::kOk;
  r.cost.median = 3e-3;
  r.cost.samples = {3e-3, 3.1e-3, 2.9e-3};
  if (job_id.rfind("norm-", 0) == 0) {
    r.cost.steal_seconds = 2e-4;
    r.cost.run_wait_seconds = 1e-4;
    r.cost.sampled_seconds = 0.2;
    r.cost.reference = "compute";
    r.cost.reference_quiet_compute = 8e-5;
    r.cost.reference_slowdown = 1.5;
    r.cost.normalized_median = 2e-3;
    r.cost.normalized_mad = 4e-5;
    r.cost.normalized_ci_low = 1.9e-3;
    r.cost.normalized_ci_high = 2.2e-3;
    r.cost.reference_compute = {1.2e-4, 1.2e-4, 1.1e-4};
  }
  return r;
}

// Registers as worker "fw" at `addr` and answers every JOB with RecordFor(id) until `stop`.
void FakeWorker(const std::string& addr, std::atomic<bool>* stop) {
  zmq::context_t ctx(1);
  auto d = proto::ConnectDealer(ctx, addr, "fw");
  if (!d.ok()) return;
  proto::ReadyMsg ready{"fw", "h", "cpu", HLOX_VERSION, 2, 1, 1};
  proto::SendMsg(*d, "", Command::kReady, proto::Encode(ready));
  proto::Received in;
  while (!stop->load()) {
    zmq::pollitem_t it{static_cast<void*>(*d), 0, ZMQ_POLLIN, 0};
    zmq::poll(&it, 1, std::chrono::milliseconds(20));
    while (proto::RecvMsg(*d, false, &in)) {
      auto f = proto::SplitFrames(in);
      if (!f.ok()) continue;
      const Command cmd = f->command;
      const std::string_view body = f->body;
      if (cmd == Command::kHeartbeat) {
        proto::SendMsg(*d, "", Command::kHeartbeat, proto::Encode(proto::HeartbeatMsg{}));
      } else if (cmd == Command::kJob) {
        auto j = proto::DecodeJob(body);
        if (!j.ok()) continue;
        proto::DoneMsg done{j->job_id, j->attempt, false,
                            proto::EncodeRecord(RecordFor(j->job_id))};
        proto::SendMsg(*d, "", Command::kDone, proto::Encode(done));
      }
    }
  }
}

void ExpectNormalized(const CostDistribution& c) {
  const CostDistribution want = RecordFor("norm-x").cost;
  EXPECT_EQ(c.steal_seconds, want.steal_seconds);
  EXPECT_EQ(c.run_wait_seconds, want.run_wait_seconds);
  EXPECT_EQ(c.sampled_seconds, want.sampled_seconds);
  EXPECT_EQ(c.reference, "compute");
  EXPECT_EQ(c.reference_quiet_compute, want.reference_quiet_compute);
  EXPECT_EQ(c.reference_quiet_memory, 0);
  EXPECT_EQ(c.reference_slowdown, want.reference_slowdown);
  EXPECT_EQ(c.normalized_median, want.normalized_median);
  EXPECT_EQ(c.normalized_mad, want.normalized_mad);
  EXPECT_EQ(c.normalized_ci_low, want.normalized_ci_low);
  EXPECT_EQ(c.normalized_ci_high, want.normalized_ci_high);
  EXPECT_EQ(c.reference_compute, want.reference_compute);
  EXPECT_TRUE(c.reference_memory.empty());
  EXPECT_EQ(c.median, 3e-3);
}

TEST(RecordFields, NormalizedCostReachesTheAgentLiveAndFromTheStore) {
  const std::string dir =
      ::testing::TempDir() + "/hlox-record-fields-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string addr = TcpAddress(FreePortPair());
  auto broker = StartBroker(addr, dir + "/results.db");
  std::atomic<bool> stop{false};
  std::thread worker(FakeWorker, addr, &stop);
  ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr), 1, 10s));
  auto text = std::make_shared<const std::string>(AddModule());
  auto job = [&](const std::string& id) {
    client::JobSpec j;
    j.id = id;
    j.module_text = text;
    j.pipeline = "none";
    j.use_cache = false;
    return j;
  };
  {
    auto c = client::Client::Connect(addr);
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->Submit(job("norm-1")).ok());
    ASSERT_TRUE((*c)->Submit(job("plain-1")).ok());
    int dups = 0;
    auto got = Collect(**c, 2, 20s, &dups);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_GE(got["norm-1"].attempts, 1u);
    ExpectNormalized(got["norm-1"].record.cost);
    const CostDistribution& p = got["plain-1"].record.cost;
    EXPECT_TRUE(p.reference.empty());
    EXPECT_EQ(p.normalized_median, 0);
    EXPECT_EQ(p.sampled_seconds, 0);
    EXPECT_EQ(p.median, 3e-3);
  }
  stop = true;
  worker.join();
  // Another agent resubmits the finished id: the broker answers from its store, no worker.
  auto c2 = client::Client::Connect(addr);
  ASSERT_TRUE(c2.ok());
  ASSERT_TRUE((*c2)->Submit(job("norm-1")).ok());
  auto again = (*c2)->Next(10s);
  ASSERT_TRUE(again.has_value());  // no worker is left to run it again
  ExpectNormalized(again->record.cost);
  broker.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hlox::testing
