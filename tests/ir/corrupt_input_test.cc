// Corrupted corpus files (truncated at many points, random bytes flipped, lines swapped;
// seeded) must give a parse error or a valid module, never a crash or hang. Modules that do
// parse must print, re-parse to the same module, and survive the verifier.
#include <random>

#include "gtest/gtest.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

// Small and medium corpus files keep this test fast while covering varied syntax.
std::vector<std::string> SampleFiles() {
  std::vector<std::string> out;
  for (const std::string& f : testing::CorpusFiles()) {
    std::string text = testing::ReadFileOrDie(f);
    if (text.size() < 60000) out.push_back(text);
  }
  return out;
}

struct Tally {
  int ok = 0, errors = 0;
};

void CheckVariant(const std::string& text, Tally* tally) {
  auto m = ParseModule(text, "corrupt.hlo");
  if (!m.ok()) {
    std::string msg(m.status().message());
    EXPECT_EQ(msg.rfind("corrupt.hlo:", 0), 0u) << msg;
    EXPECT_NE(msg.find(": error: "), std::string::npos) << msg;
    ++tally->errors;
    return;
  }
  ++tally->ok;
  (void)VerifyModule(**m);  // must not crash; may reject
  std::string printed = PrintModule(**m);
  auto again = ParseModule(printed, "printed.hlo");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(CompareModules(**m, **again).ok());
}

TEST(CorruptInput, TruncationsFlipsAndSwapsNeverCrash) {
  HLOX_REQUIRE_CORPUS();
  std::vector<std::string> files = SampleFiles();
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(12345);
  Tally tally;
  const int kVariantsPerKind = 120;
  for (int v = 0; v < kVariantsPerKind; ++v) {
    const std::string& base = files[rng() % files.size()];
    // Truncation at a random point.
    CheckVariant(base.substr(0, rng() % base.size()), &tally);
    // A few random bytes replaced by random (often syntax-relevant) characters.
    std::string flipped = base;
    static const char kChars[] = "{}()[],=:%\"\\-<>/*0123456789xT \n\x01\xff";
    for (int k = 0; k < 3; ++k) {
      flipped[rng() % flipped.size()] = (rng() % 2) ? kChars[rng() % (sizeof(kChars) - 1)]
                                                    : static_cast<char>(rng() & 0xff);
    }
    CheckVariant(flipped, &tally);
    // Two lines swapped.
    std::vector<std::string> lines;
    size_t s = 0;
    while (s <= base.size()) {
      size_t e = base.find('\n', s);
      if (e == std::string::npos) e = base.size();
      lines.push_back(base.substr(s, e - s));
      s = e + 1;
    }
    std::swap(lines[rng() % lines.size()], lines[rng() % lines.size()]);
    std::string swapped;
    for (const std::string& l : lines) swapped += l + "\n";
    CheckVariant(swapped, &tally);
  }
  EXPECT_EQ(tally.ok + tally.errors, 3 * kVariantsPerKind);
  EXPECT_GT(tally.errors, kVariantsPerKind);  // corruption is actually detected
  EXPECT_GT(tally.ok, 10);                    // and benign edits still parse
}

TEST(CorruptInput, HostileShapesAndNesting) {
  const std::string deep_literal = "HloModule m\nENTRY e {\n  ROOT c = f32[1]{0} constant(" +
                                   std::string(100000, '{') + ")\n}\n";
  EXPECT_FALSE(ParseModule(deep_literal).ok());
  const std::string deep_raw = "HloModule m\nENTRY e {\n  ROOT c = f32[] parameter(0), foo=" +
                               std::string(100000, '{') + "\n}\n";
  EXPECT_FALSE(ParseModule(deep_raw).ok());
  EXPECT_FALSE(ParseModule("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(4000000000000)\n}\n").ok());
  EXPECT_FALSE(ParseModule("HloModule m\nENTRY e {\n  ROOT c = (f32[1099511627776]{0}) constant(({1}))\n}\n").ok());
  EXPECT_FALSE(ParseModule(std::string("HloModule m\nENTRY e {\n  ROOT c = f32[] parameter(0)\n/* open")).ok());
  EXPECT_FALSE(ParseModule(std::string("\0\0\0", 3)).ok());
  EXPECT_FALSE(ParseModule("").ok());
}

}  // namespace
}  // namespace hlox
