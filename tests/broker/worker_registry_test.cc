// WorkerRegistry without sockets: credit slots, stale slots, leases and local-busy counting,
// draining, modules sent once, lost workers remembered, silence and forgiven stalls.
#include "broker/worker_registry.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

proto::ReadyMsg Caps(const std::string& id, const std::string& host, uint32_t credit) {
  proto::ReadyMsg m;
  m.worker_id = id;
  m.host = host;
  m.hardware_class = "cpu-avx2";
  m.credit = credit;
  return m;
}

TEST(WorkerRegistry, CreditGivesSlotsAndLeasesUseThem) {
  WorkerRegistry r("here");
  Worker& w = r.Register("id-a", Caps("a", "here", 2), 100);
  EXPECT_TRUE(w.local);
  EXPECT_EQ(w.registered_ms, 100);
  auto& slots = r.ready()["cpu-avx2"];
  EXPECT_EQ(slots.size(), 2u);
  EXPECT_EQ(r.NextReady(slots), &w);
  slots.pop_front();
  r.AddLease(w, "j1");
  EXPECT_EQ(r.local_busy(), 1);
  r.AddLease(w, "j2");
  EXPECT_EQ(r.local_busy(), 1);  // counts workers, not jobs
  slots.pop_front();
  EXPECT_EQ(r.NextReady(slots), nullptr);
  EXPECT_FALSE(r.EndLease(w, "j1"));
  EXPECT_EQ(slots.size(), 1u);  // its slot is back
  EXPECT_FALSE(r.EndLease(w, "j1"));  // a second end changes nothing
  EXPECT_EQ(slots.size(), 1u);
  EXPECT_FALSE(r.EndLease(w, "j2"));
  EXPECT_EQ(r.local_busy(), 0);
}

TEST(WorkerRegistry, StaleSlotsAreDropped) {
  WorkerRegistry r("here");
  r.Register("id-a", Caps("a", "far", 1), 0);
  Worker& b = r.Register("id-b", Caps("b", "far", 1), 0);
  EXPECT_FALSE(b.local);
  EXPECT_TRUE(r.Lose("id-a", 5).empty());
  auto& slots = r.ready()["cpu-avx2"];
  EXPECT_EQ(r.NextReady(slots), &b);
  EXPECT_EQ(slots.size(), 1u);
  b.draining = true;
  EXPECT_EQ(r.NextReady(slots), nullptr);
  EXPECT_TRUE(slots.empty());
}

TEST(WorkerRegistry, DrainingWorkerReportsWhenEmpty) {
  WorkerRegistry r("here");
  Worker& w = r.Register("id-a", Caps("a", "here", 1), 0);
  r.AddLease(w, "j1");
  w.draining = true;
  EXPECT_TRUE(r.EndLease(w, "j1"));
  EXPECT_TRUE(r.ready()["cpu-avx2"].size() == 1u);  // only the slot from registration
  r.Remove("id-a");
  EXPECT_EQ(r.Find("id-a"), nullptr);
  EXPECT_TRUE(r.lost_recent().empty());  // a drained worker is not lost
}

TEST(WorkerRegistry, ModulesAreSentOnceUntilForgotten) {
  WorkerRegistry r("here");
  Worker& w = r.Register("id-a", Caps("a", "here", 1), 0);
  EXPECT_TRUE(r.NeedsModule(w, "m1"));
  EXPECT_FALSE(r.NeedsModule(w, "m1"));
  r.ForgetModule(w, "m1");
  EXPECT_TRUE(r.NeedsModule(w, "m1"));
}

TEST(WorkerRegistry, LostWorkerReturnsItsJobsAndIsRemembered) {
  WorkerRegistry r("here");
  Worker& w = r.Register("id-a", Caps("a", "here", 2), 0);
  r.AddLease(w, "j1");
  r.AddLease(w, "j2");
  std::vector<std::string> jobs = r.Lose("id-a", 42);
  std::sort(jobs.begin(), jobs.end());
  EXPECT_EQ(jobs, (std::vector<std::string>{"j1", "j2"}));
  EXPECT_EQ(r.size(), 0u);
  EXPECT_EQ(r.local_busy(), 0);
  ASSERT_EQ(r.lost_recent().size(), 1u);
  EXPECT_EQ(r.lost_recent()[0].first, 42);
  EXPECT_EQ(r.lost_recent()[0].second.caps.worker_id, "a");
  for (size_t i = 0; i < WorkerRegistry::kLostKept + 5; ++i) {
    r.Register("x", Caps("x", "far", 1), 0);
    r.Lose("x", 100);
  }
  EXPECT_EQ(r.lost_recent().size(), WorkerRegistry::kLostKept);
  EXPECT_EQ(r.lost_recent().front().second.caps.worker_id, "x");
}

TEST(WorkerRegistry, SilenceAndForgivenStalls) {
  WorkerRegistry r("here");
  r.Register("id-a", Caps("a", "far", 1), 0);
  r.Register("id-b", Caps("b", "far", 1), 900);
  EXPECT_EQ(r.Silent(1000, 500), (std::vector<std::string>{"id-a"}));
  r.Forgive(600, 1000);  // a's last_seen 600, b's capped at now
  EXPECT_TRUE(r.Silent(1000, 500).empty());
  EXPECT_EQ(r.Find("id-b")->last_seen_ms, 1000);
  EXPECT_EQ(r.FindByName("a"), r.Find("id-a"));
  EXPECT_EQ(r.FindByName("id-b"), r.Find("id-b"));
  EXPECT_EQ(r.FindByName("nobody"), nullptr);
}

}  // namespace
}  // namespace hlox::broker
