// Result record JSON: required keys where the issue puts them, and a full round trip.
#include <cmath>

#include "cost/result_json.h"
#include "gtest/gtest.h"

namespace hlox {
namespace {

ResultRecord Sample() {
  ResultRecord r;
  r.status = JobStatus::kWrongOutput;
  r.message = "output 1 index 7 differs";
  r.module_hash = "00112233445566778899aabbccddeeff";
  r.pipeline = "fusion-only";
  r.cost.median = 1.5e-3;
  r.cost.mad = 2e-5;
  r.cost.ci_low = 1.4e-3;
  r.cost.ci_high = 1.6e-3;
  r.cost.mean = 1.51e-3;
  r.cost.min = 1.3e-3;
  r.cost.calls_per_sample = 4;
  r.cost.samples = {1.3e-3, 1.5e-3, 1.7e-3};
  r.cost.unstable = true;
  r.analytical.op_count = 42;
  r.analytical.flops = 1e9;
  r.analytical.bytes_moved = 3.5e6;
  r.analytical.roofline_seconds = 2e-4;
  r.analytical.scratchpad_bytes = 1 << 20;
  r.analytical.scratchpad_traffic_bytes = 1.25e6;
  r.analytical.peak_memory_bytes = 123456789;
  r.provenance.host = "box";
  r.provenance.cpu = "Some CPU @ 2GHz";
  r.provenance.isa = "avx2";
  r.provenance.cores = 2;
  r.provenance.threads = 1;
  r.provenance.hlox_version = "0.1.0";
  r.provenance.worker_id = "w1";
  r.provenance.hardware_class = "cpu-2c-avx2";
  r.provenance.protocol = "warmups=2";
  r.provenance.seed = 0xfffffffffffffff0ull;
  Mismatch m;
  m.output = 1;
  m.index = 7;
  m.expected = std::nan("");
  m.actual = -INFINITY;
  m.detail = "nan vs -inf";
  r.mismatch = m;
  r.instruction_count = 17;
  r.eval_seconds = 0.25;
  return r;
}

TEST(ResultJsonTest, RequiredKeys) {
  nlohmann::json j = ToJson(Sample());
  EXPECT_EQ(j["status"], "WRONG_OUTPUT");
  EXPECT_DOUBLE_EQ(j["cost"]["median"].get<double>(), 1.5e-3);
  EXPECT_EQ(j["cost"]["samples"].size(), 3u);
  EXPECT_EQ(j["provenance"]["host"], "box");
  EXPECT_EQ(j["provenance"]["cpu"], "Some CPU @ 2GHz");
  EXPECT_EQ(j["provenance"]["isa"], "avx2");
}

TEST(ResultJsonTest, RoundTrip) {
  ResultRecord a = Sample();
  auto b = ResultFromJsonString(ResultToJsonString(a));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(ToJson(*b).dump(), ToJson(a).dump());
  EXPECT_EQ(b->status, a.status);
  EXPECT_EQ(b->cost.samples, a.cost.samples);
  EXPECT_EQ(b->provenance.seed, a.provenance.seed);
  EXPECT_EQ(b->provenance.isa, "avx2");
  ASSERT_TRUE(b->mismatch.has_value());
  EXPECT_TRUE(std::isnan(b->mismatch->expected));
  EXPECT_EQ(b->mismatch->actual, -INFINITY);
  EXPECT_EQ(b->mismatch->index, 7);
}

TEST(ResultJsonTest, OkRecordHasNoMismatch) {
  ResultRecord a;
  a.status = JobStatus::kOk;
  auto b = ResultFromJsonString(ResultToJsonString(a, /*include_samples=*/false));
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->mismatch.has_value());
  EXPECT_EQ(b->status, JobStatus::kOk);
}

// Records written before the ISA level was recorded read with it empty ("unknown"), and a
// non-string level is refused.
TEST(ResultJsonTest, ProvenanceIsaIsOptionalButTyped) {
  auto old = ResultFromJsonString(R"({"status":"OK","provenance":{"cpu":"c","hardware_class":"cpu"}})");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->provenance.isa, "");
  EXPECT_EQ(old->provenance.cpu, "c");
  EXPECT_FALSE(ResultFromJsonString(R"({"status":"OK","provenance":{"isa":2}})").ok());
}

// A paired job's figures travel in the JSON form too (the CLI's --json, the Python bindings),
// with the wire's keys; records of other kinds have no "paired".
TEST(ResultJsonTest, PairedFiguresRoundTrip) {
  ResultRecord a;
  PairedFigures p;
  p.ratio = 0.93;
  p.ci_low = 0.9;
  p.ci_high = 0.97;
  p.unstable = true;
  p.instance_count = 4;
  p.calls_per_sample = 3;
  p.rounds = 2;
  p.ratios = {0.92, 0.94};
  p.baseline_median = 2e-3;
  p.candidate_median = 1.86e-3;
  a.paired = p;
  nlohmann::json j = ToJson(a);
  EXPECT_DOUBLE_EQ(j["paired"]["ratio"].get<double>(), 0.93);
  EXPECT_EQ(j["paired"]["ratios"].size(), 2u);
  auto b = ResultFromJsonString(ResultToJsonString(a, false));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(b->paired.has_value());
  EXPECT_EQ(ToJson(*b).dump(), j.dump());
  EXPECT_EQ(b->paired->ratios, p.ratios);
  EXPECT_TRUE(b->paired->unstable);
  EXPECT_FALSE(ToJson(ResultRecord{}).contains("paired"));
  EXPECT_FALSE(ResultFromJsonString(R"({"status":"OK","paired":{"ratio":"fast"}})").ok());
}

TEST(ResultJsonTest, BadInputIsAnError) {
  EXPECT_FALSE(ResultFromJsonString("{not json").ok());
  EXPECT_FALSE(ResultFromJsonString("[1,2]").ok());
  EXPECT_FALSE(ResultFromJsonString(R"({"status":"GREAT"})").ok());
  EXPECT_FALSE(ResultFromJsonString(R"({"cost":{"median":"fast"}})").ok());
  EXPECT_FALSE(ResultFromJsonString(R"({"cost":3})").ok());
}

TEST(JobStatusTest, NamesRoundTrip) {
  for (JobStatus s : {JobStatus::kOk, JobStatus::kWrongOutput, JobStatus::kInvalidDecisions,
                      JobStatus::kRunError, JobStatus::kTimeout, JobStatus::kPoison,
                      JobStatus::kCancelled, JobStatus::kResourceExhausted}) {
    auto p = ParseJobStatus(JobStatusName(s));
    ASSERT_TRUE(p.has_value()) << JobStatusName(s);
    EXPECT_EQ(*p, s);
  }
  EXPECT_EQ(JobStatusName(JobStatus::kInvalidDecisions), "INVALID_DECISIONS");
  EXPECT_EQ(JobStatusName(JobStatus::kResourceExhausted), "RESOURCE_EXHAUSTED");
  EXPECT_FALSE(ParseJobStatus("ok").has_value());
}

}  // namespace
}  // namespace hlox
