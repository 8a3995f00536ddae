// client::Client's shared socket: the calling thread does the socket I/O while it is inside
// Submit/Next/Poll, a background thread while it is away. These tests drive every hand-over
// (submitting and collecting on different threads, back-pressure with a single thread, an idle
// caller) against a real broker and echo workers, and check exactly one result per job id.
#include <mutex>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "client/client.h"
#include "gtest/gtest.h"
#include "protocol/protocol.h"
#include "tests/service/service_test_util.h"

namespace hlox::testing {
namespace {

using namespace std::chrono_literals;

client::JobSpec Noop(const std::string& id, std::shared_ptr<const std::string> text) {
  client::JobSpec j;
  j.id = id;
  j.module_text = std::move(text);
  j.pipeline = "none";
  j.use_cache = false;
  return j;
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    addr_ = TcpAddress(FreePortPair());
    broker_ = StartBroker(addr_);
    w1_ = StartWorker(addr_, "c1", {"--test-mode", "echo"});
    w2_ = StartWorker(addr_, "c2", {"--test-mode", "echo"});
    ASSERT_TRUE(WaitForWorkers(proto::ControlAddressFor(addr_), 2, 10s));
  }
  std::string addr_;
  std::unique_ptr<Process> broker_, w1_, w2_;
  std::shared_ptr<const std::string> text_ = std::make_shared<const std::string>(AddModule());
};

TEST_F(ClientTest, SubmitOnOneThreadCollectOnTwoOthers) {
  client::ClientOptions o;
  o.max_in_flight = 64;  // Submit waits for room while a collecting thread owns the socket
  auto c = client::Client::Connect(addr_, o);
  ASSERT_TRUE(c.ok());
  const int n = 3000;
  std::thread sub([&] {
    for (int i = 0; i < n; ++i) ASSERT_TRUE((*c)->Submit(Noop(absl::StrCat("s", i), text_)).ok());
  });
  std::mutex mu;
  std::set<std::string> ids;
  int dups = 0, not_ok = 0;
  auto collect = [&] {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (ids.size() + dups >= size_t(n)) return;
      }
      auto r = (*c)->Next(100ms);
      if (!r) continue;
      std::lock_guard<std::mutex> lock(mu);
      not_ok += r->record.status != JobStatus::kOk;
      dups += !ids.insert(r->job_id).second;
    }
  };
  std::thread other(collect);
  collect();
  other.join();
  sub.join();
  EXPECT_EQ(dups, 0);
  EXPECT_EQ(not_ok, 0);
  EXPECT_EQ(ids.size(), size_t(n));
  EXPECT_EQ((*c)->unfinished(), 0u);
}

TEST_F(ClientTest, SingleThreadBackPressureCollectsByItself) {
  client::ClientOptions o;
  o.max_in_flight = 8;  // Submit must pump the socket itself to make room
  auto c = client::Client::Connect(addr_, o);
  ASSERT_TRUE(c.ok());
  const int n = 500;
  for (int i = 0; i < n; ++i) ASSERT_TRUE((*c)->Submit(Noop(absl::StrCat("b", i), text_)).ok());
  std::set<std::string> ids;
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (ids.size() < size_t(n) && std::chrono::steady_clock::now() < deadline) {
    for (auto& r : (*c)->Poll()) EXPECT_TRUE(ids.insert(r.job_id).second) << r.job_id;
  }
  EXPECT_EQ(ids.size(), size_t(n));
  EXPECT_TRUE((*c)->Poll().empty());
}

TEST_F(ClientTest, BackgroundThreadNoticesABrokerRestartWhileTheCallerIsAway) {
  auto c = client::Client::Connect(addr_);
  ASSERT_TRUE(c.ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE((*c)->Submit(Noop(absl::StrCat("i", i), text_)).ok());
  int dups = 0;
  ASSERT_EQ(Collect(**c, 10, 10s, &dups).size(), 10u);
  for (int i = 10; i < 20; ++i) ASSERT_TRUE((*c)->Submit(Noop(absl::StrCat("i", i), text_)).ok());
  broker_.reset();  // SIGKILL; a new broker (new instance, empty store) on the same address
  broker_ = StartBroker(addr_);
  // The caller stays away: only the background thread can learn of the new instance (from a
  // heartbeat reply) and resubmit the unfinished jobs.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while ((*c)->resubmissions() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE((*c)->resubmissions(), 1);
  auto rest = Collect(**c, 10, 20s, &dups);
  EXPECT_EQ(rest.size(), 10u);
  EXPECT_EQ(dups, 0);
  for (auto& [id, r] : rest) EXPECT_EQ(r.record.status, JobStatus::kOk) << id;
}

}  // namespace
}  // namespace hlox::testing
