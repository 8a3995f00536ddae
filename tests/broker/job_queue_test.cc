// JobQueue without sockets or a clock: class queues and the order a worker's class takes them
// in, re-queues at the front, leases and their expiry, queue-wait expiry, crash bookkeeping up to
// POISON, campaign pins and cancellation.
#include "broker/job_queue.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

Job& AddJob(JobQueue& q, const std::string& id, const std::string& cls,
            const std::string& campaign = "", uint32_t queue_timeout_ms = 0) {
  auto job = std::make_unique<Job>();
  job->spec.job_id = id;
  job->spec.campaign = campaign;
  job->spec.queue_timeout_ms = queue_timeout_ms;
  job->job_class = q.ClassFor(campaign, cls);
  return q.Add(std::move(job));
}

std::string TakeId(JobQueue& q, const std::string& cls, const std::string& worker = "w",
                   size_t live = 1) {
  JobQueue::Taken t = q.Take(cls, worker, live, 0);
  return t.job ? t.job->spec.job_id : "";
}

TEST(JobQueue, FifoPerClassAndFrontRequeue) {
  JobQueue q;
  for (const char* id : {"a", "b", "c"}) q.Enqueue(AddJob(q, id, "cpu-avx2"), false, 0);
  EXPECT_EQ(q.pending(), 3u);
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "a");
  q.Enqueue(*q.Find("a"), /*front=*/true, 0);
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "a");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "b");
  EXPECT_EQ(TakeId(q, "cpu-generic"), "");  // another class's queue is not served
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_TRUE(q.HasQueued("cpu-avx2"));
  EXPECT_FALSE(q.HasQueued("cpu-generic"));
}

TEST(JobQueue, WorkerTakesItsClassThenBareThenAny) {
  JobQueue q;
  q.Enqueue(AddJob(q, "any", ""), false, 0);
  q.Enqueue(AddJob(q, "bare", "cpu"), false, 0);
  q.Enqueue(AddJob(q, "exact", "cpu-avx2"), false, 0);
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "exact");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "bare");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "any");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "");
}

TEST(JobQueue, RemovedJobsAreSkippedLazily) {
  JobQueue q;
  q.Enqueue(AddJob(q, "a", ""), false, 0);
  q.Enqueue(AddJob(q, "b", ""), false, 0);
  ASSERT_NE(q.Remove("a"), nullptr);
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_EQ(q.Remove("a"), nullptr);
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "b");
  EXPECT_EQ(q.pending(), 0u);
}

TEST(JobQueue, LeaseExpiresAfterRunTimeoutAndGrace) {
  JobQueue q;
  Job& j = AddJob(q, "a", "");
  q.Enqueue(j, false, 0);
  ASSERT_EQ(TakeId(q, ""), "a");
  q.Lease(j, "w1", /*now_ms=*/1000, /*run_ms=*/500);
  EXPECT_TRUE(j.running);
  EXPECT_EQ(j.attempts, 1u);
  EXPECT_EQ(q.running(), 1u);
  const int64_t deadline = 1000 + 500 + kLeaseGraceMs;
  EXPECT_TRUE(q.Expired(deadline).empty());
  q.ExtendLeases(100);  // the broker did not run for 100 ms
  EXPECT_TRUE(q.Expired(deadline + 1).empty());
  auto expired = q.Expired(deadline + 101);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, "a");
  EXPECT_TRUE(expired[0].second);
}

TEST(JobQueue, QueueWaitExpires) {
  JobQueue q;
  q.Enqueue(AddJob(q, "a", "", "", /*queue_timeout_ms=*/50), false, /*now_us=*/10'000);
  q.Enqueue(AddJob(q, "b", ""), false, 10'000);  // no queue timeout
  EXPECT_TRUE(q.Expired(60).empty());
  auto expired = q.Expired(61);
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, "a");
  EXPECT_FALSE(expired[0].second);
}

TEST(JobQueue, EndLeaseRequeuesAtFrontThenPoisons) {
  JobQueue q(/*poison_crashes=*/2);
  Job& j = AddJob(q, "a", "");
  q.Enqueue(AddJob(q, "b", ""), false, 0);
  q.Enqueue(j, false, 0);
  ASSERT_EQ(TakeId(q, ""), "b");
  ASSERT_EQ(TakeId(q, ""), "a");
  q.Lease(j, "w1", 0, 1000);
  EXPECT_EQ(q.EndLease("a", "w2", true, 0), JobQueue::Release::kNotLeased);  // not its lease
  EXPECT_EQ(q.EndLease("a", "w1", true, 0), JobQueue::Release::kRequeued);
  EXPECT_EQ(q.running(), 0u);
  EXPECT_EQ(q.pending(), 1u);
  EXPECT_EQ(j.crashed_on.count("w1"), 1u);
  q.Enqueue(AddJob(q, "c", ""), false, 0);
  // Two live workers: the one it crashed skips it; the other takes it before "c" (front).
  JobQueue::Taken t = q.Take("", "w1", 2, 0);
  ASSERT_NE(t.job, nullptr);
  EXPECT_EQ(t.job->spec.job_id, "c");
  EXPECT_TRUE(t.skipped);
  EXPECT_EQ(TakeId(q, "", "w2", 2), "a");
  q.Lease(j, "w2", 0, 1000);
  EXPECT_EQ(q.EndLease("a", "w2", true, 0), JobQueue::Release::kPoison);  // 2 crashed workers
}

TEST(JobQueue, OnlyWorkerLeftRetriesTheJobItCrashed) {
  JobQueue q;
  Job& j = AddJob(q, "a", "");
  q.Enqueue(j, false, 0);
  ASSERT_EQ(TakeId(q, "", "w1"), "a");
  q.Lease(j, "w1", 0, 1000);
  ASSERT_EQ(q.EndLease("a", "w1", true, 0), JobQueue::Release::kRequeued);
  EXPECT_EQ(TakeId(q, "", "w1", /*live=*/1), "a");
}

TEST(JobQueue, GivesUpAfterMaxAttempts) {
  JobQueue q;
  Job& j = AddJob(q, "a", "");
  q.Enqueue(j, false, 0);
  JobQueue::Release r = JobQueue::Release::kRequeued;
  for (uint32_t i = 0; i < kMaxAttempts && r == JobQueue::Release::kRequeued; ++i) {
    ASSERT_EQ(TakeId(q, ""), "a");
    q.Lease(j, "w", 0, 1000);
    r = q.EndLease("a", "w", /*crashed=*/false, 0);
  }
  EXPECT_EQ(r, JobQueue::Release::kPoison);
  EXPECT_EQ(j.attempts, kMaxAttempts);
}

TEST(JobQueue, CampaignPinnedByFirstDispatchOrLevelClass) {
  JobQueue q;
  q.Enqueue(AddJob(q, "a", "", "camp"), false, 0);
  q.Enqueue(AddJob(q, "b", "", "camp"), false, 0);
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "a");  // pins "camp" to cpu-avx2
  EXPECT_EQ(TakeId(q, "cpu-generic"), "");   // "b" moves to the pinned class's queue
  EXPECT_EQ(q.Find("b")->job_class, "cpu-avx2");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "b");
  // A class naming a level pins at SUBMIT; later jobs of the campaign follow it.
  EXPECT_EQ(q.ClassFor("other", "cpu-generic"), "cpu-generic");
  EXPECT_EQ(q.ClassFor("other", ""), "cpu-generic");
  EXPECT_EQ(q.ClassFor("", "cpu"), "cpu");
  EXPECT_EQ(q.ClassFor("open", "cpu"), "cpu");  // bare: pinned at its first dispatch
  EXPECT_EQ(q.ClassFor("open", "cpu-avx2"), "cpu-avx2");
}

// A worker announcing an open class ("" here) does not pin a campaign: pinned to "", the next job
// would be moved into the any-class queue that every worker serves and Take would return nothing
// to a worker of another class while that queue stays non-empty (the broker's Dispatch spun on
// it forever).
TEST(JobQueue, AnOpenWorkerClassPinsNoCampaign) {
  JobQueue q;
  q.Enqueue(AddJob(q, "a", "", "camp"), false, 0);
  q.Enqueue(AddJob(q, "b", "", "camp"), false, 0);
  EXPECT_EQ(TakeId(q, ""), "a");
  EXPECT_EQ(q.ClassFor("camp", ""), "");
  EXPECT_EQ(TakeId(q, "cpu-avx2"), "b");  // pins "camp" now
  EXPECT_EQ(q.ClassFor("camp", ""), "cpu-avx2");
  EXPECT_FALSE(q.HasQueued("cpu-avx2"));
}

TEST(JobQueue, CancelNamesTheCampaignsJobs) {
  JobQueue q;
  AddJob(q, "a", "", "c1");
  AddJob(q, "b", "", "c2");
  AddJob(q, "c", "", "c1");
  std::vector<std::string> ids = q.Cancel("c1");
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "c"}));
  EXPECT_TRUE(q.Cancelled("c1"));
  EXPECT_FALSE(q.Cancelled("c2"));
}

}  // namespace
}  // namespace hlox::broker
