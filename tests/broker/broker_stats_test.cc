// BrokerStats without a clock: completions, the throughput ring by second, the latency ring and
// its percentiles and histogram, and the spread median.
#include "broker/broker_stats.h"

#include "gtest/gtest.h"

namespace hlox::broker {
namespace {

TEST(BrokerStats, CompletionsAndThroughputOverTenFullSeconds) {
  BrokerStats s;
  for (int i = 0; i < 30; ++i) s.RecordFinished("OK", 0.001, 100'000 + i);  // second 100
  for (int i = 0; i < 10; ++i) s.RecordFinished("OK", 0.001, 105'000);      // second 105
  EXPECT_EQ(s.completed, 40);
  EXPECT_DOUBLE_EQ(s.Throughput(100'500), 0.0);   // second 100 is not over yet
  EXPECT_DOUBLE_EQ(s.Throughput(101'000), 3.0);   // 30 jobs / 10 s
  EXPECT_DOUBLE_EQ(s.Throughput(106'000), 4.0);
  EXPECT_DOUBLE_EQ(s.Throughput(111'000), 1.0);   // second 100 left the window
  EXPECT_EQ(s.metrics().ToJson()["jobs_by_status"]["OK"].get<int64_t>(), 40);
}

TEST(BrokerStats, LatencyPercentilesAndRecentHistogram) {
  BrokerStats s;
  for (int i = 1; i <= 100; ++i) s.RecordFinished("OK", i * 0.01, 0);  // 0.01 .. 1.0 s
  nlohmann::json j = s.LatencyJson();
  EXPECT_EQ(j["samples"].get<size_t>(), 100u);
  EXPECT_NEAR(j["p50"].get<double>(), 0.51, 1e-9);
  EXPECT_NEAR(j["p99"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(j["sum"].get<double>(), 50.5, 1e-9);
  const auto& b = j["buckets"];
  ASSERT_EQ(b.size(), 11u);
  EXPECT_EQ(b[4][1].get<int64_t>(), 5);     // <= 0.05 s
  EXPECT_EQ(b[7][1].get<int64_t>(), 100);   // <= 1 s
  EXPECT_TRUE(b[10][0].is_null());
  EXPECT_EQ(b[10][1].get<int64_t>(), 100);
}

TEST(BrokerStats, RingsKeepTheMostRecent) {
  BrokerStats s;
  for (size_t i = 0; i < BrokerStats::kRingSize; ++i) s.RecordFinished("OK", 100.0, 0);
  for (size_t i = 0; i < BrokerStats::kRingSize; ++i) s.RecordFinished("OK", 0.001, 0);
  nlohmann::json j = s.LatencyJson();
  EXPECT_EQ(j["samples"].get<size_t>(), BrokerStats::kRingSize);
  EXPECT_DOUBLE_EQ(j["p99"].get<double>(), 0.001);  // the old 100 s are gone
}

TEST(BrokerStats, SpreadMedianIgnoresUnmeasuredRecords) {
  BrokerStats s;
  EXPECT_DOUBLE_EQ(s.MedianSpread(), 0.0);
  s.RecordSpread({JobStatus::kOk, 0.0, 1.0, 5});   // no median: ignored
  s.RecordSpread({JobStatus::kOk, 10.0, 1.0, 0});  // no samples: ignored
  EXPECT_DOUBLE_EQ(s.MedianSpread(), 0.0);
  s.RecordSpread({JobStatus::kOk, 10.0, 1.0, 5});
  s.RecordSpread({JobStatus::kOk, 10.0, 2.0, 5});
  s.RecordSpread({JobStatus::kOk, 10.0, 3.0, 5});
  EXPECT_DOUBLE_EQ(s.MedianSpread(), 0.2);
}

}  // namespace
}  // namespace hlox::broker
