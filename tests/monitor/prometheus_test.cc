// Prometheus exposition of the broker status: each worker's identity (class, ISA level, CPU
// model) as an info metric, label values escaped as the text format requires.
#include "gtest/gtest.h"
#include "monitor/http_monitor.h"
#include "nlohmann/json.hpp"

namespace hlox::monitor {
namespace {

TEST(PrometheusText, WorkerInfoNamesTheIsaLevelAndEscapesLabels) {
  nlohmann::json status = {
      {"workers",
       {{{"id", "w1"}, {"hardware_class", "cpu-avx2"}, {"isa", "avx2"},
         {"cpu", "Odd \"CPU\" \\ 2GHz\nv2"}, {"state", "idle"}},
        {{"id", "old"}, {"hardware_class", "cpu"}, {"state", "busy"}}}}};
  const std::string text = PrometheusText(status);
  EXPECT_NE(text.find("# TYPE hlox_worker_info gauge\n"), std::string::npos) << text;
  EXPECT_NE(text.find(R"(hlox_worker_info{worker="w1",class="cpu-avx2",isa="avx2",)"
                      R"(cpu="Odd \"CPU\" \\ 2GHz\nv2"} 1)" "\n"),
            std::string::npos)
      << text;
  // A worker that predates the fields (or an older broker's status) gets empty labels.
  EXPECT_NE(text.find(R"(hlox_worker_info{worker="old",class="cpu",isa="",cpu=""} 1)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace hlox::monitor
