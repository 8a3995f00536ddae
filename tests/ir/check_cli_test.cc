// Runs the built `hlox check` on the corpus (exit status 0, one OK line per file) and on a
// broken file (exit status 1, the file:line:col message and the caret in the output), and
// `hlox print` on a small module.
#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace hlox {
namespace {


bool HaveBinary() {
  std::ifstream f(testing::HloxBinary());
  return f.good();
}

TEST(CheckCli, CorpusPasses) {
  HLOX_REQUIRE_CORPUS();
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string cmd = "check";
  std::vector<std::string> files = testing::CorpusFiles();
  for (const std::string& f : testing::PassPairFiles()) files.push_back(f);
  for (const std::string& f : files) cmd += " '" + f + "'";
  testing::CliRun r = testing::RunHlox(cmd, true);
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 4000);
  size_t ok_lines = 0;
  for (size_t p = r.out.find("OK "); p != std::string::npos; p = r.out.find("\nOK ", p + 1)) ++ok_lines;
  EXPECT_EQ(ok_lines, files.size());
  EXPECT_NE(r.out.find("distinct opcodes"), std::string::npos);
}

TEST(CheckCli, BrokenFileFailsWithCaretAndJson) {
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string path = ::testing::TempDir() + "/hlox_broken.hlo";
  {
    std::ofstream out(path);
    out << "HloModule m\nENTRY e {\n  ROOT a = f32[] nosuchop()\n}\n";
  }
  testing::CliRun r = testing::RunHlox("check '" + path + "'", true);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(path + ":3:18: error: unknown opcode 'nosuchop'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  ROOT a = f32[] nosuchop()\n                 ^"), std::string::npos) << r.out;
  testing::CliRun j = testing::RunHlox("check --json '" + path + "'", true);
  EXPECT_EQ(j.code, 1);
  EXPECT_NE(j.out.find("\"ok\": false"), std::string::npos) << j.out;
  testing::CliRun p = testing::RunHlox("print '" + path + "'", true);
  EXPECT_EQ(p.code, 1);
}

TEST(CheckCli, PrintWritesCanonicalText) {
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string path = ::testing::TempDir() + "/hlox_small.hlo";
  {
    std::ofstream out(path);
    out << "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(f32[2]{0} p)\n}\n";
  }
  testing::CliRun r = testing::RunHlox("print '" + path + "'", true);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "HloModule m\n\nENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%p)\n}\n");
}

}  // namespace
}  // namespace hlox
