// Async ops: explicit async-start/-update/-done chains, XLA's `op-start` sugar (the wrapped
// computation is built by the parser), and chains whose shapes, operands, computations or
// threads do not line up.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::FindInstr;
using testing_ir::ParseRoundTrip;

const char kWrapped[] = R"(HloModule m
%wrapped (x: f32[10]) -> f32[20] {
  %x = f32[10] parameter(0)
  ROOT %cc = f32[20] custom-call(%x), custom_call_target="foo"
}, execution_thread="side"
)";

// An entry whose line 9 is `start`, then `rest` from line 10; a second computation `other`
// like `wrapped` follows the entry.
std::string Chain(const std::string& start, const std::string& rest) {
  return std::string(kWrapped) + "\nENTRY e {\n  p = f32[10] parameter(0)\n  " + start + "\n" + rest + "}\n" +
         "%other (y: f32[10]) -> f32[20] {\n  %y = f32[10] parameter(0)\n"
         "  ROOT %c = f32[20] custom-call(%y), custom_call_target=\"bar\"\n}, execution_thread=\"side\"\n";
}

TEST(ParserAsync, ExplicitChainWithThread) {
  auto m = ParseRoundTrip(
      Chain("s = ((f32[10]), f32[20], s32[]) async-start(p), calls=wrapped, async_execution_thread=\"side\"",
            "  u = ((f32[10]), f32[20], s32[]) async-update(s), calls=wrapped\n  ROOT d = f32[20] async-done(u)\n"));
  ASSERT_TRUE(m);
  const Instruction* s = FindInstr(*m, "s");
  ASSERT_EQ(s->called_computations().size(), 1u);
  EXPECT_EQ(s->called_computations()[0]->name(), "wrapped");
  EXPECT_EQ(m->entry()->root()->operand(0)->opcode(), Opcode::kAsyncUpdate);
}

TEST(ParserAsync, StartSugarImpliesTheWrappedComputation) {
  auto m = ParseRoundTrip(R"(HloModule m
ENTRY e {
  p = f32[10] parameter(0)
  q = s32[] parameter(1)
  s = ((f32[10], s32[]), f32[20], u32[]) custom-call-start(p, q), custom_call_target="foo", async_execution_thread="main"
  u = ((f32[10], s32[]), f32[20], u32[]) custom-call-update(s)
  ROOT d = f32[20] custom-call-done(u)
})");
  ASSERT_TRUE(m);
  const Instruction* s = FindInstr(*m, "s");
  EXPECT_EQ(s->opcode(), Opcode::kAsyncStart);
  ASSERT_EQ(s->called_computations().size(), 1u);
  const Computation* w = s->called_computations()[0];
  EXPECT_EQ(w->parameter_count(), 2);
  EXPECT_EQ(w->parameter(1)->shape().ToString(), "s32[]");
  EXPECT_EQ(w->root()->opcode(), Opcode::kCustomCall);
  EXPECT_EQ(w->root()->attrs().custom_call_target, "foo");
  EXPECT_EQ(w->root()->shape().ToString(), "f32[20]");
  EXPECT_NE(s->FindRawAttribute("async_execution_thread"), nullptr);
  EXPECT_EQ(w->root()->FindRawAttribute("async_execution_thread"), nullptr);
  EXPECT_EQ(FindInstr(*m, "u")->opcode(), Opcode::kAsyncUpdate);
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kAsyncDone);
  // Other ops wrap the same way.
  EXPECT_TRUE(
      ParseRoundTrip("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  s = ((f32[4]), f32[4]) negate-start(p)\n"
                     "  ROOT d = f32[4] negate-done(s)\n}\n"));
}

TEST(ParserAsync, BadSugar) {
  const std::string head = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n";
  ExpectParseError(head + "  s = ((f32[4]), f32[4]) frob-start(p)\n}\n", 4, 26, "'frob' is not an opcode");
  ExpectParseError(head + "  s = f32[4] negate-start(p)\n}\n", 4, 14, "must be a tuple ((operand shapes), result");
  ExpectParseError(head + "  s = ((f32[4], f32[4]), f32[4]) negate-start(p)\n}\n", 4, 34,
                   "must begin with the tuple of its 1 operand shapes");
  ExpectParseError(head + "  s = ((f32[4]), f32[4]) negate-start(p)\n  ROOT d = f32[4] sqrt-done(s)\n}\n", 5, 8,
                   "this chain's async-start wraps negate, not sqrt");
}

TEST(ParserAsync, BadChains) {
  const std::string start =
      "s = ((f32[10]), f32[20], s32[]) async-start(p), calls=wrapped, async_execution_thread=\"side\"";
  // Lines: the entry's start is line 9, what follows from line 10.
  ExpectParseError(Chain(start, "  ROOT d = f32[10] async-done(s)\n"), 10, 8,
                   "async-done's shape f32[10] differs from its async-start's result f32[20]");
  ExpectParseError(
      Chain(start, "  u = ((f32[10]), f32[21], s32[]) async-update(s)\n  ROOT d = f32[20] async-done(s)\n"), 10, 3,
      "an async-update's shape must equal its operand's");
  ExpectParseError(Chain(start, "  ROOT d = f32[20] async-done(p)\n"), 10, 8,
                   "the operand of async-done must be an async-start or async-update, not parameter");
  ExpectParseError(Chain(start, "  ROOT d = f32[20] async-done(s), calls=other\n"), 10, 8,
                   "async-done calls a different computation than its async-start ('wrapped')");
  ExpectParseError(
      Chain("s = ((f32[10]), f32[20], s32[]) async-start(p), calls=wrapped", "  ROOT d = f32[20] async-done(s)\n"), 9,
      3, "async_execution_thread \"main\" differs from the thread of 'wrapped' (\"side\")");
  ExpectParseError(
      Chain("s = ((f32[10]), f32[21], s32[]) async-start(p), calls=wrapped, async_execution_thread=\"side\"",
            "  ROOT d = f32[21] async-done(s)\n"),
      9, 3, "async-start's result element f32[21] differs from the result of 'wrapped'");
  ExpectParseError(
      Chain("s = ((f32[11]), f32[20], s32[]) async-start(p), calls=wrapped, async_execution_thread=\"side\"",
            "  ROOT d = f32[20] async-done(s)\n"),
      9, 3, "async-start operand 0 (f32[10]) does not match");
  ExpectParseError(Chain("s = ((f32[10]), f32[20], s32[]) async-start(p), async_execution_thread=\"side\"",
                         "  ROOT d = f32[20] async-done(s)\n"),
                   9, 3, "an async-start calls exactly one computation");
}

}  // namespace
}  // namespace hlox
