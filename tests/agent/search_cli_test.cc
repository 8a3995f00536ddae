// The search commands end to end on a shipped example: Gibbs sampling writes a log, the
// advantage model trains on it, guided search loads it, the best decisions feed `hlox opt`,
// pass ordering shrinks the op count, and the embedded fleet (the default a new user meets)
// runs a measured search with real worker processes.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace hlox {
namespace {

using ::hlox::testing::CliRun;
CliRun Hlox(const std::string& args) { return ::hlox::testing::RunHlox(args); }

std::string Example() { return ::hlox::testing::SourceDir() + "/examples/mlp_train_small.hlo"; }

TEST(SearchCli, GibbsTrainGuidedAndOpt) {
  std::string dir = ::testing::TempDir() + "/search_cli";
  std::filesystem::remove_all(dir);
  CliRun g = Hlox("search " + Example() + " --algo gibbs --budget 30 --in-process --objective roofline --json --out " + dir + "/gibbs");
  ASSERT_EQ(g.code, 0) << g.out;
  nlohmann::json s = nlohmann::json::parse(g.out);
  EXPECT_EQ(s["evaluations"].get<int>(), 30);
  EXPECT_EQ(s["invalid"].get<int>(), 0);
  EXPECT_GE(s["best_speedup"].get<double>(), 1.0);
  for (const char* f : {"best_decisions.json", "log.jsonl", "summary.json", "progress.png", "report.html"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/gibbs/" + f)) << f;
  }
  CliRun t = Hlox("train-advantage --logs " + dir + "/gibbs -o " + dir + "/adv.model --epochs 10");
  ASSERT_EQ(t.code, 0) << t.out;
  // The rank report on the training log itself: the fitted model orders its own labels.
  CliRun ev = Hlox("train-advantage --evaluate --logs " + dir + "/gibbs -o " + dir + "/adv.model");
  ASSERT_EQ(ev.code, 0) << ev.out;
  size_t at = ev.out.find("spearman ");
  ASSERT_NE(at, std::string::npos) << ev.out;
  EXPECT_GT(std::stod(ev.out.substr(at + 9)), 0.0) << ev.out;
  CliRun gd = Hlox("search " + Example() + " --algo guided --model " + dir + "/adv.model --budget 12 --in-process --objective roofline --json");
  ASSERT_EQ(gd.code, 0) << gd.out;
  EXPECT_EQ(nlohmann::json::parse(gd.out)["evaluations"].get<int>(), 12);
  CliRun opt = Hlox("opt " + Example() + " --pipeline default --decisions " + dir + "/gibbs/best_decisions.json -o " + dir + "/best.hlo");
  ASSERT_EQ(opt.code, 0) << opt.out;
  EXPECT_EQ(Hlox("check " + dir + "/best.hlo").code, 0);
}

// The scratchpad objective end to end: the command's model agrees with its simulator on a
// shipped transformer block, a search over fusion and the tiling decisions minimises the traffic
// (a deterministic count: no paired verdict), and a bad target file is a clear error.
TEST(SearchCli, ScratchpadObjective) {
  const std::string block = ::hlox::testing::SourceDir() + "/examples/gpt2_block_small.hlo";
  const std::string target = ::hlox::testing::SourceDir() + "/targets/scratchpad/micro-256kib.json";
  CliRun sp = Hlox("scratchpad " + block + " --target " + target + " --simulate --json");
  ASSERT_EQ(sp.code, 0) << sp.out;
  nlohmann::json j = nlohmann::json::parse(sp.out);
  EXPECT_GT(j["model"]["traffic_bytes"].get<double>(), 0);
  EXPECT_LT(std::abs(j["model_vs_simulated"].get<double>()), 0.10) << sp.out;
  EXPECT_EQ(Hlox("scratchpad " + block + " --target /nonexistent.json").code, 2);
  setenv("HLOX_SCRATCHPAD_TARGET", target.c_str(), 1);
  CliRun s = Hlox("search " + block + " --pipeline scratchpad --point fusion+scratchpad-tiling --objective scratchpad "
                  "--algo random --budget 12 --in-process --json");
  unsetenv("HLOX_SCRATCHPAD_TARGET");
  ASSERT_EQ(s.code, 0) << s.out;
  nlohmann::json r = nlohmann::json::parse(s.out);
  EXPECT_EQ(r["objective"], "scratchpad");
  EXPECT_EQ(r["verdict"], "search");
  EXPECT_EQ(r["evaluations"].get<int>(), 12);
  EXPECT_LE(r["best_cost"].get<double>(), r["default_cost"].get<double>());
  EXPECT_NE(r["scratchpad_target"].get<std::string>().find("micro-256kib"), std::string::npos);
}

TEST(SearchCli, BadArgumentsAreClearErrors) {
  EXPECT_EQ(Hlox("search " + Example() + " --algo nonsense --budget 3 --in-process").code, 1);
  EXPECT_EQ(Hlox("search /nonexistent.hlo --algo random --budget 3 --in-process").code, 1);
  EXPECT_EQ(Hlox("search " + Example() + " --algo guided --budget 3 --in-process").code, 1);  // no model
  EXPECT_EQ(Hlox("train-advantage --logs /nonexistent -o /tmp/x.model").code, 1);
  EXPECT_EQ(Hlox("train-advantage --evaluate --logs /nonexistent -o /nonexistent.model").code, 1);
}

TEST(SearchCli, PassOrderDoesNotGrowTheModule) {
  CliRun r = Hlox("search " + Example() + " --algo pass-order --budget 8 --no-verdict --json");
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json s = nlohmann::json::parse(r.out);
  EXPECT_LT(s["best_cost"].get<double>(), s["initial_ops"].get<double>());
  EXPECT_FALSE(s["pass_sequence"].empty());
}

TEST(SearchCli, EmbeddedFleetMeasuredSearch) {
  CliRun r = Hlox("search " + Example() + " --algo random --budget 6 --workers 2 --json");
  ASSERT_EQ(r.code, 0) << r.out;
  nlohmann::json s = nlohmann::json::parse(r.out);
  EXPECT_EQ(s["evaluations"].get<int>(), 6);
  EXPECT_TRUE(s["best_speedup"].is_number());
}

}  // namespace
}  // namespace hlox
