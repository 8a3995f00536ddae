// Runs the built `hlox check` on the corpus (exit status 0, one OK line per file) and on a
// broken file (exit status 1, the file:line:col message and the caret in the output), and
// `hlox print` on a small module.
#include <cstdio>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

struct RunResult {
  int status = -1;
  std::string output;
};

RunResult RunCommand(const std::string& cmd) {
  RunResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool HaveBinary() {
  std::ifstream f(testing::HloxBinary());
  return f.good();
}

TEST(CheckCli, CorpusPasses) {
  HLOX_REQUIRE_CORPUS();
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string cmd = testing::HloxBinary() + " check";
  std::vector<std::string> files = testing::CorpusFiles();
  for (const std::string& f : testing::PassPairFiles()) files.push_back(f);
  for (const std::string& f : files) cmd += " '" + f + "'";
  RunResult r = RunCommand(cmd);
  EXPECT_EQ(r.status, 0) << r.output.substr(0, 4000);
  size_t ok_lines = 0;
  for (size_t p = r.output.find("OK "); p != std::string::npos; p = r.output.find("\nOK ", p + 1)) ++ok_lines;
  EXPECT_EQ(ok_lines, files.size());
  EXPECT_NE(r.output.find("distinct opcodes"), std::string::npos);
}

TEST(CheckCli, BrokenFileFailsWithCaretAndJson) {
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string path = ::testing::TempDir() + "/hlox_broken.hlo";
  {
    std::ofstream out(path);
    out << "HloModule m\nENTRY e {\n  ROOT a = f32[] nosuchop()\n}\n";
  }
  RunResult r = RunCommand(testing::HloxBinary() + " check '" + path + "'");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find(path + ":3:18: error: unknown opcode 'nosuchop'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  ROOT a = f32[] nosuchop()\n                 ^"), std::string::npos) << r.output;
  RunResult j = RunCommand(testing::HloxBinary() + " check --json '" + path + "'");
  EXPECT_EQ(j.status, 1);
  EXPECT_NE(j.output.find("\"ok\": false"), std::string::npos) << j.output;
  RunResult p = RunCommand(testing::HloxBinary() + " print '" + path + "'");
  EXPECT_EQ(p.status, 1);
}

TEST(CheckCli, PrintWritesCanonicalText) {
  if (!HaveBinary()) GTEST_SKIP() << "hlox binary not built: " << testing::HloxBinary();
  std::string path = ::testing::TempDir() + "/hlox_small.hlo";
  {
    std::ofstream out(path);
    out << "HloModule m\nENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT n = f32[2]{0} negate(f32[2]{0} p)\n}\n";
  }
  RunResult r = RunCommand(testing::HloxBinary() + " print '" + path + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output,
            "HloModule m\n\nENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  ROOT %n = f32[2]{0} negate(%p)\n}\n");
}

}  // namespace
}  // namespace hlox
