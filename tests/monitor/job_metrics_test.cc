// The broker's cumulative job histograms and counts (broker/job_metrics.h): buckets are
// cumulative with inclusive upper bounds, nothing goes down as observations arrive, the store's
// counts seed the finished-job counters, and per-class histograms stay apart.
#include "broker/job_metrics.h"

#include <limits>

#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

size_t BucketOf(double bound) {
  for (size_t i = 0; i < kJobSecondsBounds.size(); ++i) {
    if (kJobSecondsBounds[i] == bound) return i;
  }
  ADD_FAILURE() << "no bucket " << bound;
  return 0;
}

TEST(SecondsHistogram, CumulativeBucketsWithInclusiveBounds) {
  SecondsHistogram h;
  h.Observe(0.001);   // exactly on a bound: counts in that bucket (le is "<=")
  h.Observe(0.0011);  // just above it: the next one
  h.Observe(5000);    // beyond every bound: +Inf only
  const nlohmann::json j = h.ToJson();
  ASSERT_EQ(j["counts"].size(), kJobSecondsBounds.size() + 1);
  EXPECT_EQ(j["le"].size(), kJobSecondsBounds.size());
  EXPECT_EQ(j["counts"][BucketOf(0.0005)].get<uint64_t>(), 0u);
  EXPECT_EQ(j["counts"][BucketOf(0.001)].get<uint64_t>(), 1u);
  EXPECT_EQ(j["counts"][BucketOf(0.0025)].get<uint64_t>(), 2u);
  EXPECT_EQ(j["counts"][BucketOf(600.0)].get<uint64_t>(), 2u);
  EXPECT_EQ(j["counts"].back().get<uint64_t>(), 3u);
  EXPECT_EQ(j["count"].get<uint64_t>(), 3u);
  EXPECT_DOUBLE_EQ(j["sum"].get<double>(), 0.001 + 0.0011 + 5000);
}

TEST(SecondsHistogram, NothingGoesDownAndBadValuesCountAsZero) {
  SecondsHistogram h;
  nlohmann::json before = h.ToJson();
  const double values[] = {0.3, std::numeric_limits<double>::quiet_NaN(), -2.0, 1e-9, 70.0, 0.3};
  for (double v : values) {
    h.Observe(v);
    const nlohmann::json after = h.ToJson();
    for (size_t i = 0; i < after["counts"].size(); ++i) {
      EXPECT_GE(after["counts"][i].get<uint64_t>(), before["counts"][i].get<uint64_t>()) << "bucket " << i;
      if (i > 0) {
        EXPECT_GE(after["counts"][i].get<uint64_t>(), after["counts"][i - 1].get<uint64_t>());
      }
    }
    EXPECT_GE(after["sum"].get<double>(), before["sum"].get<double>());
    EXPECT_EQ(after["count"].get<uint64_t>(), before["count"].get<uint64_t>() + 1);
    before = after;
  }
  // NaN and -2 were counted as 0 s, in the first bucket, with 1e-9.
  EXPECT_EQ(before["counts"][0].get<uint64_t>(), 3u);
}

TEST(JobMetrics, SeededStatusCountsContinueAndClassesStayApart) {
  JobMetrics m;
  m.SeedFinished({{"OK", 40}, {"TIMEOUT", 2}});
  m.OnFinished("OK", 0.02);
  m.OnFinished("POISON", 1.5);
  m.OnDispatched("cpu-avx2", 0.004);
  m.OnDispatched("cpu-avx512", 0.2);
  m.OnRunEnded("cpu-avx2", 0.5);
  const nlohmann::json j = m.ToJson();
  EXPECT_EQ(j["jobs_by_status"]["OK"].get<int64_t>(), 41);
  EXPECT_EQ(j["jobs_by_status"]["TIMEOUT"].get<int64_t>(), 2);
  EXPECT_EQ(j["jobs_by_status"]["POISON"].get<int64_t>(), 1);
  // The latency histogram holds only what this process saw: the store has no latencies.
  EXPECT_EQ(j["job_latency_seconds"]["count"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["job_queue_wait_seconds"]["cpu-avx2"]["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["job_queue_wait_seconds"]["cpu-avx512"]["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["job_run_seconds"]["cpu-avx2"]["count"].get<uint64_t>(), 1u);
  EXPECT_FALSE(j["job_run_seconds"].contains("cpu-avx512"));
}

}  // namespace
}  // namespace hlox::broker
