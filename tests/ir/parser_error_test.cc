// Error paths of the parser: each bad input gives "FILE:LINE:COL: error: message", then the
// source line and a caret under the column, and never crashes.
#include "gtest/gtest.h"
#include "ir/parser.h"

namespace hlox {
namespace {

struct ErrorCase {
  const char* name;
  std::string text;
  int line, col;
  const char* message_part;
};

// The full message must be exactly: header line, source line, caret line.
void ExpectError(const ErrorCase& c) {
  SCOPED_TRACE(c.name);
  auto m = ParseModule(c.text, "bad.hlo");
  ASSERT_FALSE(m.ok());
  std::string msg(m.status().message());
  std::string header = "bad.hlo:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ";
  EXPECT_EQ(msg.substr(0, header.size()), header) << msg;
  EXPECT_NE(msg.find(c.message_part), std::string::npos) << msg;
  size_t nl1 = msg.find('\n');
  ASSERT_NE(nl1, std::string::npos) << msg;
  size_t nl2 = msg.find('\n', nl1 + 1);
  ASSERT_NE(nl2, std::string::npos) << msg;
  // Source line is the c.line-th line of the input.
  size_t start = 0;
  for (int i = 1; i < c.line; ++i) start = c.text.find('\n', start) + 1;
  std::string src = c.text.substr(start, c.text.find('\n', start) - start);
  EXPECT_EQ(msg.substr(nl1 + 1, nl2 - nl1 - 1), src);
  EXPECT_EQ(msg.substr(nl2 + 1), std::string(c.col - 1, ' ') + "^");
}

const char kHead[] = "HloModule m\nENTRY e {\n";

TEST(ParserErrors, LocatedMessagesWithCaret) {
  const ErrorCase cases[] = {
      {"missing header", "Module m\n", 1, 1, "expected 'HloModule'"},
      {"unknown opcode", std::string(kHead) + "  a = f32[] frobnicate()\n}\n", 3, 13, "unknown opcode 'frobnicate'"},
      {"unknown type", std::string(kHead) + "  a = f33[] parameter(0)\n}\n", 3, 7, "unknown element type 'f33'"},
      {"negative dim", std::string(kHead) + "  a = f32[2,-3] parameter(0)\n}\n", 3, 13, "negative dimension"},
      {"byte size overflow", std::string(kHead) + "  a = f32[1099511627776,1099511627776] parameter(0)\n}\n", 3, 25,
       "byte size overflows int64"},
      {"unknown operand", std::string(kHead) + "  ROOT a = f32[] negate(nope)\n}\n", 3, 25, "unknown operand 'nope'"},
      {"unknown computation", std::string(kHead) + "  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=gone\n}\n",
       4, 36, "unknown computation 'gone'"},
      {"duplicate name", std::string(kHead) + "  a = f32[] parameter(0)\n  a = f32[] parameter(1)\n}\n", 4, 3,
       "duplicate instruction name 'a'"},
      {"two roots", std::string(kHead) + "  ROOT a = f32[] parameter(0)\n  ROOT b = f32[] negate(a)\n}\n", 4, 8,
       "more than one ROOT"},
      {"unclosed computation", std::string(kHead) + "  ROOT a = f32[] parameter(0)\n", 2, 1, "not closed"},
      {"bad layout", std::string(kHead) + "  ROOT a = f32[2,3]{1,1} parameter(0)\n}\n", 3, 23, "repeated"},
      {"layout rank", std::string(kHead) + "  ROOT a = f32[2,3]{0} parameter(0)\n}\n", 3, 20, "rank 2"},
      {"constant count", std::string(kHead) + "  ROOT a = f32[3]{0} constant({1, 2})\n}\n", 3, 36, "expected 3 elements"},
      {"constant range", std::string(kHead) + "  ROOT a = s8[] constant(300)\n}\n", 3, 26, "out of range"},
      {"unterminated string", std::string(kHead) + "  ROOT a = f32[] parameter(0), metadata={op_name=\"x}\n}\n", 3, 50,
       "unterminated string"},
      {"parameter gap", std::string(kHead) + "  ROOT a = f32[] parameter(1)\n}\n", 3, 8, "out of range"},
      {"cycle", std::string(kHead) + "  a = f32[] negate(b)\n  ROOT b = f32[] negate(a)\n}\n", 3, 3, "cycle"},
      {"bad window", std::string(kHead) + "  ROOT a = f32[] parameter(0), window={size=3 bogus=2}\n}\n", 3, 47,
       "unknown window field"},
      {"bad dim_labels", std::string(kHead) + "  ROOT a = f32[] parameter(0), dim_labels=b01f_01io->bq1f\n}\n", 3, 43,
       "invalid dim_labels"},
      {"bad direction", std::string(kHead) + "  ROOT a = pred[] parameter(0), direction=XX\n}\n", 3, 43,
       "unknown comparison direction"},
      {"no computations", "HloModule m\n", 2, 1, "no computations"},
      {"huge constant", std::string(kHead) + "  ROOT a = f32[1099511627776]{0} constant({1})\n}\n", 3, 43,
       "more elements than the text"},
      {"unbalanced raw", std::string(kHead) + "  ROOT a = f32[] parameter(0), frontend_attributes={stat=[2)0,1}\n}\n", 3, 60,
       "mismatched ')'"},
      {"duplicate computation", "HloModule m\nc {\n ROOT a = f32[] parameter(0)\n}\nc {\n ROOT a = f32[] parameter(0)\n}\n",
       5, 1, "duplicate computation name 'c'"},
  };
  for (const ErrorCase& c : cases) ExpectError(c);
}

TEST(ParserErrors, CaretOnLaterLineAndTabs) {
  std::string text = "HloModule m\n\nENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] add(a, a, )\n}\n";
  auto m = ParseModule(text, "x.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(std::string(m.status().message()),
            "x.hlo:5:28: error: expected an operand name\n  ROOT b = f32[] add(a, a, )\n"
            "                           ^");
}

TEST(ParserErrors, ShapeErrorsAndDeepNesting) {
  EXPECT_FALSE(ParseShape("f32[2").ok());
  EXPECT_FALSE(ParseShape("f32[2]{0} junk").ok());
  EXPECT_FALSE(ParseShape(std::string(200, '(') + "f32[]" + std::string(200, ')')).ok());
  EXPECT_TRUE(ParseShape(std::string(20, '(') + "f32[]" + std::string(20, ')')).ok());
  EXPECT_FALSE(ParseShape("f32[99999999999999999999]").ok());
  auto s = ParseShape("s32[3,-1]");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("<shape>:1:7: error: negative dimension"), std::string::npos)
      << s.status();
}

TEST(ParserErrors, RecursiveCallGraphRejected) {
  auto m = ParseModule(R"(HloModule m
a { p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=b }
b { p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=a }
ENTRY e { p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=a })");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("recursively"), std::string::npos);
}

TEST(ParserErrors, MissingFile) {
  auto m = ParseModuleFile("/nonexistent/dir/x.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hlox
