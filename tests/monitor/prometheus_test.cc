// Prometheus exposition of the broker status: each worker's identity (class, ISA level, CPU
// model) as an info metric, label values escaped as the text format requires, every family
// present with one type whatever the status holds, counters named *_total, integers printed
// exactly and floats in full precision, and the broker's cumulative histograms written as
// Prometheus histograms (tests/monitor/promtool_check.sh lints a live broker's output).
#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include "gtest/gtest.h"
#include "monitor/exposition.h"
#include "monitor/http_monitor.h"
#include "nlohmann/json.hpp"

namespace hlox::monitor {
namespace {

// Family name -> type, from the # TYPE lines.
std::map<std::string, std::string> Types(const std::string& text) {
  std::map<std::string, std::string> types;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) != 0) continue;
    std::istringstream f(line.substr(7));
    std::string name, type;
    f >> name >> type;
    EXPECT_TRUE(types.emplace(name, type).second) << "family written twice: " << name;
  }
  return types;
}

// The value of the sample line that starts with `series` + " ", or "" when absent.
std::string ValueOf(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  size_t at = ("\n" + text).find(key);
  if (at == std::string::npos) return "";
  size_t start = at + key.size() - 1;
  return text.substr(start, text.find('\n', start) - start);
}

nlohmann::json Histogram(std::initializer_list<uint64_t> counts, double sum) {
  const std::vector<uint64_t> cumulative(counts);
  return {{"le", {0.5, 1.0}}, {"counts", cumulative}, {"sum", sum}, {"count", cumulative.back()}};
}

nlohmann::json BusyStatus() {
  return {
      {"broker", {{"version", "0.9.0"}, {"protocol", 1}, {"isa", "avx2"}, {"start_time_s", 1764200000.123456},
                  {"build", "0.9.0+abc"}, {"store_full", true}, {"uncommitted_results", 17},
                  {"store_failed_commits", 4}, {"store_full_refusals", 2}}},
      {"worker_builds", {{"0.9.0+abc", 1}, {"other", 1}}},
      {"workers",
       {{{"id", "w1"}, {"hardware_class", "cpu-avx2"}, {"isa", "avx2"}, {"cpu", "Odd \"CPU\" \\ 2GHz\nv2"},
         {"build", "other"}, {"state", "busy"}, {"jobs_done", 9007199254740993ULL}, {"jobs_failed", 1}, {"last_heartbeat_age_s", 0.1}},
        {{"id", "w1"}, {"hardware_class", "cpu-avx2"}, {"state", "lost"}},
        {{"id", "old"}, {"hardware_class", "cpu"}, {"state", "idle"}}}},
      {"queues", {{"pending", 3}, {"in_flight", 1}, {"campaigns", {{"c1", {{"pending", 3}, {"in_flight", 1}, {"done", 7}}}}}}},
      {"totals", {{"completed", 12345678901234LL}, {"cache_hits", 2}, {"stored_results", 7}, {"modules", 2},
                  {"resident_result_bytes", 4096}}},
      {"throughput_jobs_per_s", 0.1},
      {"cost_spread", 0.012345678901234567},
      {"metrics",
       {{"jobs_by_status", {{"OK", 5}, {"TIMEOUT", 2}}},
        {"job_latency_seconds", Histogram({1, 3, 4}, 2.25)},
        {"job_queue_wait_seconds", {{"cpu-avx2", Histogram({2, 2, 2}, 0.5)}}},
        {"job_run_seconds", {{"cpu-avx2", Histogram({0, 1, 2}, 3.0)}}}}}};
}

TEST(PrometheusText, WorkerInfoNamesTheIsaLevelAndEscapesLabels) {
  const std::string text = PrometheusText(BusyStatus());
  EXPECT_NE(text.find("# TYPE hlox_worker_info gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(hlox_worker_info{worker="w1",class="cpu-avx2",isa="avx2",)"
                      R"(cpu="Odd \"CPU\" \\ 2GHz\nv2",build="other"} 1)" "\n"),
            std::string::npos)
      << text;
  // A worker that predates the fields (or an older broker's status) gets empty labels.
  EXPECT_NE(text.find(R"(hlox_worker_info{worker="old",class="cpu",isa="",cpu="",build=""} 1)"), std::string::npos) << text;
  // The second "w1" (a lost entry beside a live one) would repeat the series: it is left out.
  EXPECT_EQ(text.find(R"(hlox_worker_info{worker="w1")"), text.rfind(R"(hlox_worker_info{worker="w1")")) << text;
}

TEST(PrometheusText, StoreHealthAndBuilds) {
  const std::string text = PrometheusText(BusyStatus());
  EXPECT_EQ(ValueOf(text, "hlox_store_full"), "1") << text;
  EXPECT_EQ(ValueOf(text, "hlox_uncommitted_results"), "17") << text;
  EXPECT_EQ(ValueOf(text, "hlox_store_failed_commits_total"), "4") << text;
  EXPECT_EQ(ValueOf(text, "hlox_store_full_refusals_total"), "2") << text;
  EXPECT_EQ(ValueOf(text, R"(hlox_worker_builds{build="other"})"), "1") << text;
  EXPECT_NE(text.find(R"(isa="avx2",build="0.9.0+abc"} 1)"), std::string::npos) << text;
  EXPECT_EQ(ValueOf(PrometheusText(nlohmann::json::object()), "hlox_store_full"), "0");
}

TEST(PrometheusText, EveryFamilyHasOneTypeWhateverTheStatusHolds) {
  const std::map<std::string, std::string> empty = Types(PrometheusText(nlohmann::json::object()));
  const std::map<std::string, std::string> busy = Types(PrometheusText(BusyStatus()));
  EXPECT_EQ(empty, busy);
  for (const auto& [name, type] : busy) {
    const bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
    EXPECT_EQ(type == "counter", total) << name << " is a " << type;
    EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << name << " " << type;
  }
  for (const char* name : {"hlox_build_info", "hlox_process_start_time_seconds", "hlox_job_latency_seconds",
                           "hlox_job_queue_wait_seconds", "hlox_job_run_seconds", "hlox_jobs_total",
                           "hlox_stored_results", "hlox_stored_modules", "hlox_worker_jobs_done_total"}) {
    EXPECT_TRUE(busy.count(name)) << name;
  }
  EXPECT_EQ(busy.at("hlox_job_latency_seconds"), "histogram");
}

TEST(PrometheusText, IntegersExactAndFloatsInFullPrecision) {
  const std::string text = PrometheusText(BusyStatus());
  EXPECT_EQ(ValueOf(text, "hlox_completed_total"), "12345678901234") << text;
  EXPECT_EQ(ValueOf(text, R"(hlox_worker_jobs_done_total{worker="w1",class="cpu-avx2"})"), "9007199254740993");
  EXPECT_EQ(ValueOf(text, "hlox_cost_relative_spread"), "0.012345678901234567");
  EXPECT_EQ(ValueOf(text, "hlox_process_start_time_seconds"), "1764200000.123456");
  EXPECT_EQ(ValueOf(text, "hlox_throughput_jobs_per_second"), "0.1");
  EXPECT_EQ(ValueOf(text, R"(hlox_build_info{version="0.9.0",protocol="1",isa="avx2",build="0.9.0+abc"})"), "1");
  EXPECT_EQ(ValueOf(text, "hlox_stored_modules"), "2");
  EXPECT_EQ(ValueOf(text, R"(hlox_jobs_total{status="TIMEOUT"})"), "2");
  EXPECT_EQ(FormatDouble(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatDouble(0.0005), "0.0005");
  EXPECT_EQ(FormatDouble(600), "600");
  EXPECT_EQ(FormatDouble(1e300), "1e+300");
  EXPECT_EQ(FormatDouble(-2.5e-7), "-2.5e-07");
}

TEST(PrometheusText, CumulativeHistogramsPerClass) {
  const std::string text = PrometheusText(BusyStatus());
  EXPECT_EQ(ValueOf(text, R"(hlox_job_latency_seconds_bucket{le="0.5"})"), "1") << text;
  EXPECT_EQ(ValueOf(text, R"(hlox_job_latency_seconds_bucket{le="1"})"), "3");
  EXPECT_EQ(ValueOf(text, R"(hlox_job_latency_seconds_bucket{le="+Inf"})"), "4");
  EXPECT_EQ(ValueOf(text, "hlox_job_latency_seconds_sum"), "2.25");
  EXPECT_EQ(ValueOf(text, "hlox_job_latency_seconds_count"), "4");
  EXPECT_EQ(ValueOf(text, R"(hlox_job_run_seconds_bucket{class="cpu-avx2",le="1"})"), "1");
  EXPECT_EQ(ValueOf(text, R"(hlox_job_queue_wait_seconds_count{class="cpu-avx2"})"), "2");
  // Without the broker's "metrics" (an empty status) the latency histogram is still a histogram,
  // over the broker's bounds, all zero.
  const std::string idle = PrometheusText(nlohmann::json::object());
  EXPECT_EQ(ValueOf(idle, R"(hlox_job_latency_seconds_bucket{le="0.0005"})"), "0") << idle;
  EXPECT_EQ(ValueOf(idle, R"(hlox_job_latency_seconds_bucket{le="+Inf"})"), "0");
  EXPECT_EQ(ValueOf(idle, "hlox_job_latency_seconds_count"), "0");
  EXPECT_EQ(idle.find("summary"), std::string::npos);
}

}  // namespace
}  // namespace hlox::monitor
