// `hlox eval --candidate`: a module rewritten outside hlox's pipelines is validated against the
// original and measured, with the same record (and module hash) as a pipeline's candidate; a
// candidate that computes something else is WRONG_OUTPUT, one with another signature an error.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/test_util.h"

namespace hlox {
namespace {

using ::hlox::testing::CliRun;
CliRun Hlox(const std::string& args, bool with_stderr = false) { return ::hlox::testing::RunHlox(args, with_stderr); }

std::string Example() { return ::hlox::testing::SourceDir() + "/examples/mlp_train_small.hlo"; }

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

class EvalCandidateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest runs the tests of this file as parallel processes.
    dir_ = ::testing::TempDir() + "/eval_candidate_cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  std::string dir_;
};

TEST_F(EvalCandidateCli, RewrittenElsewhereIsValidatedLikeAPipelineCandidate) {
  CliRun opt = Hlox("opt " + Example() + " --pipeline default -o " + dir_ + "/opt.hlo");
  ASSERT_EQ(opt.code, 0) << opt.out;
  CliRun given = Hlox("eval " + Example() + " --candidate " + dir_ + "/opt.hlo --no-measure --json");
  ASSERT_EQ(given.code, 0) << given.out;
  nlohmann::json g = nlohmann::json::parse(given.out);
  EXPECT_EQ(g["status"], "OK");
  EXPECT_EQ(g["pipeline"], "candidate:" + dir_ + "/opt.hlo");
  CliRun piped = Hlox("eval " + Example() + " --pipeline default --in-process --no-measure --json");
  ASSERT_EQ(piped.code, 0) << piped.out;
  nlohmann::json p = nlohmann::json::parse(piped.out);
  // The record names the original module either way, and the rewrite does the same work.
  EXPECT_EQ(g["module_hash"], p["module_hash"]);
  EXPECT_EQ(g["analytical"]["flops"], p["analytical"]["flops"]);
}

TEST_F(EvalCandidateCli, ACandidateThatComputesSomethingElseIsWrongOutput) {
  std::string text = ::hlox::testing::ReadFileOrDie(Example());
  size_t at = text.find("add(broadcast.18, multiply.14)");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 3, "subtract");
  Write(dir_ + "/wrong.hlo", text);
  CliRun r = Hlox("eval " + Example() + " --candidate " + dir_ + "/wrong.hlo --no-measure --json");
  EXPECT_EQ(r.code, 4) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["status"], "WRONG_OUTPUT");
}

TEST_F(EvalCandidateCli, BadCandidatesAreClearErrors) {
  CliRun missing = Hlox("eval " + Example() + " --candidate " + dir_ + "/none.hlo", true);
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("cannot open"), std::string::npos) << missing.out;
  // Another program entirely: its entry takes other parameters.
  Write(dir_ + "/other.hlo", "HloModule other\nENTRY e {\n  ROOT p = f32[3] parameter(0)\n}\n");
  CliRun other = Hlox("eval " + Example() + " --candidate " + dir_ + "/other.hlo --no-measure --json");
  EXPECT_NE(other.code, 0) << other.out;
  EXPECT_NE(nlohmann::json::parse(other.out)["status"], "OK");
  // --candidate replaces the pipeline's rewrite, so decisions make no sense with it, and the
  // fleet cannot carry it.
  EXPECT_NE(Hlox("eval " + Example() + " --candidate " + dir_ + "/other.hlo --decisions x.json").code, 0);
  EXPECT_EQ(Hlox("eval " + Example() + " --candidate " + dir_ + "/other.hlo --broker tcp://127.0.0.1:1").code, 2);
}

}  // namespace
}  // namespace hlox
