// Every corpus module (CorpusFiles + PassPairFiles) parses, verifies and round-trips:
// parse(print(parse(x))) is structurally the same module and printing twice gives the same text.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

std::vector<std::string> AllCorpus() {
  std::vector<std::string> files = testing::CorpusFiles();
  for (const std::string& f : testing::PassPairFiles()) files.push_back(f);
  return files;
}

TEST(CorpusRoundTrip, EveryFileParsesAndRoundTrips) {
  HLOX_REQUIRE_CORPUS();
  std::vector<std::string> files = AllCorpus();
  ASSERT_GE(files.size(), 60u);
  int64_t total_instructions = 0;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    auto m = ParseModuleFile(f);
    ASSERT_TRUE(m.ok()) << m.status();
    total_instructions += (*m)->InstructionCount();
    ASSERT_NE((*m)->entry(), nullptr);
    std::string text = PrintModule(**m);
    auto again = ParseModule(text, "printed");
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_TRUE(CompareModules(**m, **again).ok()) << CompareModules(**m, **again);
    EXPECT_EQ(PrintModule(**again), text);
  }
  EXPECT_GT(total_instructions, 20000);
}

TEST(CorpusRoundTrip, EveryFileVerifies) {
  HLOX_REQUIRE_CORPUS();
  for (const std::string& f : AllCorpus()) {
    auto m = ParseModuleFile(f);
    ASSERT_TRUE(m.ok()) << m.status();
    absl::Status s = VerifyModule(**m);
    EXPECT_TRUE(s.ok()) << f << ": " << s;
  }
}

// The manifest's instruction and computation counts are an independent reference.
TEST(CorpusRoundTrip, CountsMatchManifest) {
  HLOX_REQUIRE_CORPUS();
  std::string manifest = testing::ReadFileOrDie(testing::CorpusDir() + "/manifest.tsv");
  int checked = 0;
  size_t pos = manifest.find('\n');
  while (pos != std::string::npos && pos + 1 < manifest.size()) {
    size_t end = manifest.find('\n', pos + 1);
    std::string line = manifest.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
    pos = end;
    std::vector<std::string> cols;
    size_t s = 0;
    while (true) {
      size_t t = line.find('\t', s);
      cols.push_back(line.substr(s, t == std::string::npos ? std::string::npos : t - s));
      if (t == std::string::npos) break;
      s = t + 1;
    }
    if (cols.size() < 8 || cols[0].empty()) continue;
    // Columns: file, repo, path, commit, license, description, instruction_count, computation_count.
    if (cols[6].empty() || !std::all_of(cols[6].begin(), cols[6].end(), ::isdigit)) continue;
    int64_t want_instrs = std::stoll(cols[6]);
    int64_t want_comps = std::stoll(cols[7]);
    if (want_instrs < 0) continue;
    auto m = ParseModuleFile(testing::CorpusDir() + "/" + cols[0]);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ((*m)->InstructionCount(), want_instrs) << cols[0];
    EXPECT_EQ(static_cast<int64_t>((*m)->computations().size()), want_comps) << cols[0];
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace hlox
