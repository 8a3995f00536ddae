// The HLO language beyond what dumps usually contain (issue 29): nested instructions in operand
// position, names spelled like opcodes or types, written operand shapes checked against their
// definitions, huge declared shapes. Each valid form round-trips; each invalid one is rejected
// with its line, column and message.
#include <string>

#include "gtest/gtest.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::FindInstr;
using testing_ir::ParseRoundTrip;

TEST(ParserLanguage, NestedInstructionsBecomeNamedInstructions) {
  auto m = ParseRoundTrip(R"(HloModule m
ENTRY e {
  ROOT r = f32[10] add(f32[10] parameter(0), f32[10] parameter(1))
})");
  ASSERT_TRUE(m);
  const Computation* e = m->entry();
  ASSERT_EQ(e->instructions().size(), 3u);
  const Instruction* r = e->root();
  EXPECT_EQ(r->name(), "r");
  ASSERT_EQ(r->operand_count(), 2);
  EXPECT_EQ(r->operand(0)->opcode(), Opcode::kParameter);
  EXPECT_EQ(r->operand(0)->parameter_number(), 0);
  EXPECT_EQ(r->operand(1)->parameter_number(), 1);
  EXPECT_EQ(r->operand(0)->name(), "parameter.1");
  EXPECT_EQ(r->operand(1)->name(), "parameter.2");
  EXPECT_EQ(e->parameter_count(), 2);
}

TEST(ParserLanguage, NestedInstructionsNestAndAvoidWrittenNames) {
  auto m = ParseRoundTrip(R"(HloModule m
ENTRY e {
  constant.1 = f32[] constant(2)
  ROOT s = f32[10,10] sqrt(f32[10,10] broadcast(f32[] constant(1)))
})");
  ASSERT_TRUE(m);
  const Instruction* s = m->entry()->root();
  const Instruction* b = s->operand(0);
  EXPECT_EQ(b->opcode(), Opcode::kBroadcast);
  EXPECT_TRUE(b->dimensions().empty());
  ASSERT_EQ(b->operand_count(), 1);
  EXPECT_EQ(b->operand(0)->opcode(), Opcode::kConstant);
  EXPECT_EQ(b->operand(0)->name(), "constant.2");  // constant.1 is taken by the text
  EXPECT_EQ(b->name(), "broadcast.1");
}

TEST(ParserLanguage, DeepNestingIsBoundedNotAStackOverflow) {
  std::string inner = "f32[] parameter(0)";
  for (int i = 0; i < 200; ++i) inner = "f32[] negate(" + inner + ")";
  auto ok = ParseModule("HloModule m\nENTRY e {\n  ROOT r = f32[] negate(" + inner + ")\n}\n", "t.hlo");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->entry()->instructions().size(), 202u);
  std::string deep = "f32[] parameter(0)";
  for (int i = 0; i < 1000; ++i) deep = "f32[] negate(" + deep + ")";
  auto bad = ParseModule("HloModule m\nENTRY e {\n  ROOT r = f32[] negate(" + deep + ")\n}\n", "t.hlo");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nested more than 256 deep"), std::string::npos) << bad.status();
}

TEST(ParserLanguage, NestedInstructionErrors) {
  // XLA gives nested instructions no attributes: the comma starts the next operand.
  ExpectParseError(
      "HloModule m\nENTRY e {\n  ROOT r = f32[2] negate(f32[2] broadcast(f32[] constant(1)), dimensions={0})\n}\n", 3,
      73, "expected ',' or ')' in the operand list");
  // A parameter's shape cannot be inferred (XLA agrees), nested or not.
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT r = f32[] negate(parameter(0))\n}\n", 3, 25,
                   "cannot infer the shape of parameter: write it before the opcode");
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT r = f32[] negate(f32[] frob(x))\n}\n", 3, 31,
                   "unknown opcode 'frob'");
}

// XLA's newest opcodes that hlox does not model yet (docs/HLO_COVERAGE.md, "Opcodes") are an
// error at the opcode, like any unknown one; the ones it added parse.
TEST(ParserLanguage, NewerOpcodesRoundTrip) {
  EXPECT_TRUE(ParseRoundTrip("HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] atan(a)\n}\n"));
  EXPECT_TRUE(ParseRoundTrip("HloModule m\nENTRY e {\n  a = s32[4] parameter(0)\n  ROOT r = s32[4] mulhi(a, a)\n}\n"));
  // scan, shuffle and collective-reduce: tests/ir/newer_ops_test.cc.
}

TEST(ParserLanguage, ShapesLeftOutAreInferred) {
  auto m = ParseRoundTrip(R"(HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = add(a, b)
}

ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  n = negate(p)
  c = compare(n, p), direction=LT
  r = reduce(n, z), dimensions={1}, to_apply=sum
  t = tuple(r, c)
  ROOT g = get-tuple-element(t), index=1
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(FindInstr(*m, "s")->shape().ToString(), "f32[]");
  EXPECT_EQ(FindInstr(*m, "n")->shape().ToString(), "f32[2,3]");
  EXPECT_EQ(FindInstr(*m, "c")->shape().ToString(), "pred[2,3]");
  EXPECT_EQ(FindInstr(*m, "r")->shape().ToString(), "f32[2]");
  EXPECT_EQ(FindInstr(*m, "t")->shape().ToString(), "(f32[2], pred[2,3])");
  EXPECT_EQ(m->entry()->root()->shape().ToString(), "pred[2,3]");
  // Nested and shape-less: sqrt(f32[10] parameter(0)) takes the parameter's shape.
  auto nested = ParseRoundTrip("HloModule m\nENTRY e {\n  ROOT r = sqrt(f32[10] parameter(0))\n}\n");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->entry()->root()->shape().ToString(), "f32[10]");
}

TEST(ParserLanguage, ShapesThatCannotBeInferred) {
  ExpectParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = convert(p)\n}\n", 4, 8,
                   "cannot infer the shape of convert: write it before the opcode");
  ExpectParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = broadcast(p), dimensions={0}\n}\n", 4,
                   8, "cannot infer the shape of broadcast");
  ExpectParseError(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  q = f32[3] parameter(1)\n  ROOT r = add(p, q)\n}\n", 5, 8,
      "cannot infer the shape of add: ");
  // A written operand shape is checked against an inferred definition too.
  ExpectParseError(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  n = negate(p)\n  ROOT r = f32[2] add(f32[3] n, p)\n}\n", 5,
      30, "operand 'n' is written with shape f32[3] but is defined with shape f32[2]");
}

TEST(ParserLanguage, NamesSpelledLikeOpcodesAndTypes) {
  auto m = ParseRoundTrip(R"(HloModule m
ENTRY e {
  f32 = f32[] constant(1)
  s32 = s32[] constant(2)
  token = f32[] parameter(0)
  add = f32[] add(f32, f32[] f32)
  parameter = f32[] add(%add, token)
  ROOT tuple = (f32[], s32[]) tuple(f32[] parameter, s32)
})");
  ASSERT_TRUE(m);
  const Instruction* add = FindInstr(*m, "add");
  EXPECT_EQ(add->opcode(), Opcode::kAdd);
  EXPECT_EQ(add->operand(0)->name(), "f32");
  EXPECT_EQ(add->operand(1)->name(), "f32");
  const Instruction* p = FindInstr(*m, "parameter");
  EXPECT_EQ(p->opcode(), Opcode::kAdd);
  EXPECT_EQ(p->operand(1)->name(), "token");
  const Instruction* t = m->entry()->root();
  EXPECT_EQ(t->operand(0), p);
  EXPECT_EQ(t->operand(1)->name(), "s32");
}

TEST(ParserLanguage, WrittenOperandShapeMustMatchDefinition) {
  // Layouts may differ (XLA compares shapes ignoring layout).
  ASSERT_TRUE(ParseRoundTrip(R"(HloModule m
ENTRY e {
  p = f32[2,3]{1,0} parameter(0)
  ROOT n = f32[2,3]{0,1} negate(f32[2,3]{0,1} p)
})"));
  ExpectParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = f32[2] negate(f32[3] p)\n}\n", 4, 33,
                   "operand 'p' is written with shape f32[3] but is defined with shape f32[2]");
  ExpectParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT n = s32[2] negate(s32[2] %p)\n}\n", 4, 33,
                   "written with shape s32[2]");
  // Use before definition is checked too.
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT n = f32[2] negate(f32[2,1] p)\n  p = f32[2] parameter(0)\n}\n", 3,
                   35, "written with shape f32[2,1]");
}

TEST(ParserLanguage, HugeDeclaredShapesParseOverflowingOnesDoNot) {
  auto m = ParseRoundTrip(R"(HloModule m
ENTRY e {
  p = f32[1048576,1048576,1024] parameter(0)
  ROOT n = f32[1048576,1048576,1024] negate(p)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->shape().ElementCount(), int64_t{1} << 50);
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT p = f32[1099511627776,16777216] parameter(0)\n}\n", 3, 30,
                   "byte size overflows int64");
  ExpectParseError(
      "HloModule m\nENTRY e {\n  ROOT p = (f32[1152921504606846976], f32[1152921504606846976]) parameter(0)\n}\n", 3,
      12, "tuple shape's byte size overflows int64");
  // An elided constant of a huge shape is declared, not allocated.
  EXPECT_TRUE(ParseRoundTrip("HloModule m\nENTRY e {\n  ROOT c = f32[1048576,1048576,4] constant({...})\n}\n"));
}

TEST(ParserLanguage, OldHeaderWithColonAfterTheModuleName) {
  auto m = ParseRoundTrip("HloModule old_style:\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "old_style");
  EXPECT_EQ(PrintModule(*m).substr(0, 21), "HloModule old_style\n\n");
  auto attrs = ParseRoundTrip("HloModule m:, is_scheduled=true\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_TRUE(attrs);
  ASSERT_EQ(attrs->header_attributes().size(), 1u);
  EXPECT_EQ(attrs->header_attributes()[0].key, "is_scheduled");
  // XLA's lexer takes the colon only when it touches the name.
  ExpectParseError("HloModule m :\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", 1, 13,
                   "expected a computation name");
}

TEST(ParserLanguage, ComputationExecutionThread) {
  auto m = ParseRoundTrip(R"(HloModule m
%helper (x: f32[]) -> f32[] {
  ROOT x = f32[] parameter(0)
}, execution_thread="host"

ENTRY e {
  ROOT p = f32[] parameter(0)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->computations()[0]->execution_thread(), "host");
  EXPECT_EQ(m->entry()->execution_thread(), "");
  EXPECT_NE(PrintModule(*m).find("}, execution_thread=\"host\"\n"), std::string::npos);
  const std::string body = "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}";
  ExpectParseError(body + ", thread=\"x\"\n", 4, 4, "expected execution_thread");
  ExpectParseError(body + ", execution_thread=host\n", 4, 21, "expected a quoted thread name");
  ExpectParseError(body + ", execution_thread=\"a\", execution_thread=\"b\"\n", 4, 26, "execution_thread given twice");
}

// Cases of XLA's own parser round-trip tests that hlox rejected: a reduce-window and a
// select-and-scatter of scalars without window= (the empty window), a convolution-like custom call
// with window, dim_labels and feature_group_count, and dim labels with '?' (a dimension no label
// names), which only a custom call may have.
TEST(ParserLanguage, XlaCasesScalarWindowsAndConvolutionLikeCustomCalls) {
  const std::string add = "add {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT s = f32[] add(l, r)\n}\n";
  const std::string ge = "ge {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT c = pred[] compare(l, r), direction=GE\n}\n";
  EXPECT_TRUE(ParseRoundTrip("HloModule m\n" + add +
                             "ENTRY e {\n  a = f32[] constant(42)\n  b = f32[] constant(1)\n"
                             "  ROOT w = f32[] reduce-window(a, b), to_apply=add\n}\n"));
  EXPECT_TRUE(ParseRoundTrip("HloModule m\n" + add + ge +
                             "ENTRY e {\n  a = f32[] constant(42)\n  b = f32[] constant(1)\n  c = f32[] constant(2)\n"
                             "  ROOT s = f32[] select-and-scatter(a, b, c), select=ge, scatter=add\n}\n"));
  // Without a window, an operand of rank 1 has a window of the wrong rank.
  auto bad = ParseModule("HloModule m\n" + add +
                             "ENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[] constant(1)\n"
                             "  ROOT w = f32[3] reduce-window(a, b), to_apply=add\n}\n",
                         "bad.hlo");
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::Status v = VerifyModule(**bad);
  EXPECT_NE(v.message().find("window rank differs from operand rank"), std::string::npos) << v;

  auto m = ParseRoundTrip(
      "HloModule m\nENTRY e {\n  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, dim_labels=b01f_01io->b01f, "
      "feature_group_count=2, custom_call_target=\"target\"\n}\n");
  ASSERT_TRUE(m);
  m = ParseRoundTrip("HloModule m\nENTRY e {\n  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, "
                     "dim_labels=?b01f_0?1io->b01?f, custom_call_target=\"target\"\n}\n");
  ASSERT_TRUE(m);
  EXPECT_NE(PrintModule(*m).find("dim_labels=?b01f_0?1io->b01?f"), std::string::npos) << PrintModule(*m);
  // A convolution's dims are all labelled.
  ExpectParseError("HloModule m\nENTRY e {\n  a = f32[1,4,4,2] parameter(0)\n  k = f32[3,3,2,2] parameter(1)\n"
                   "  ROOT c = f32[1,2,2,2] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b0?f\n}\n",
                   5, 74, "invalid dim_labels 'b0?f'");
}

// More of XLA's round-trip cases: async syntax sugar on a named thread (the implied computation
// runs on that thread), and the stack-frame tables before the computations (newer dumps) as well
// as after them.
TEST(ParserLanguage, XlaCasesAsyncSugarOnAThreadAndLeadingStackFrameTables) {
  auto m = ParseRoundTrip(
      "HloModule m\nENTRY e {\n  p0 = f32[10]{0} parameter(0)\n"
      "  s = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(p0), async_execution_thread=\"parallel_thread\", "
      "custom_call_target=\"foo\"\n"
      "  u = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-update(s)\n  ROOT d = f32[20]{0} custom-call-done(u)\n"
      "}, execution_thread=\"main_thread\"\n");
  ASSERT_TRUE(m);
  const Instruction* start = FindInstr(*m, "s");
  ASSERT_TRUE(start);
  ASSERT_EQ(start->called_computations().size(), 1u);
  EXPECT_EQ(start->called_computations()[0]->execution_thread(), "parallel_thread");

  const std::string tables =
      "FileNames\n1 \"<embedded module>\"\n2 \"yet/another/test.py\"\n\nFunctionNames\n1 \"main\"\n\n"
      "FileLocations\n1 {file_name_id=1 function_name_id=1 line=153 end_line=153 column=2 end_column=31}\n\n"
      "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n";
  const std::string entry = "ENTRY e {\n  ROOT c = pred[] constant(true), metadata={op_type=\"const\" stack_frame_id=1}\n}\n";
  for (const std::string& text : {"HloModule m\n\n" + tables + "\n\n" + entry, "HloModule m\n\n" + entry + "\n" + tables}) {
    SCOPED_TRACE(text);
    auto t = ParseRoundTrip(text);
    ASSERT_TRUE(t);
    EXPECT_NE(t->trailer().find("StackFrames\n1 {file_location_id=1 parent_frame_id=1}"), std::string::npos);
    EXPECT_EQ(t->trailer().substr(0, 9), "FileNames");
  }
  ExpectParseError("HloModule m\n\nFileNames\n1 main\n\n" + entry, 4, 3, "expected a quoted name or {fields}");
}

// XLA's mesh-axes replica groups (a named device mesh and the axes a group varies along), kept as
// text like the iota form; and topk's is_stable.
TEST(ParserLanguage, XlaCasesMeshReplicaGroupsAndStableTopK) {
  const std::string add = "add {\n  l = f32[] parameter(0)\n  r = f32[] parameter(1)\n  ROOT s = f32[] add(l, r)\n}\n";
  auto ar = [&](const std::string& groups) {
    return "HloModule m\n" + add + "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT a = f32[8] all-reduce(x), replica_groups=" +
           groups + ", to_apply=add\n}\n";
  };
  auto m = ParseRoundTrip(ar("mesh['axis_0'=2,'axis_1'=2] {'axis_1'}"));
  ASSERT_TRUE(m);
  EXPECT_EQ(FindInstr(*m, "a")->attrs().replica_groups_text, "mesh['axis_0'=2,'axis_1'=2] {'axis_1'}");
  EXPECT_TRUE(ParseRoundTrip(ar("mesh['x'=4] {}")));
  ExpectParseError(ar("mesh['x'=2] {'y'}"), 9, 62, "axis 'y' is not in the mesh");
  ExpectParseError(ar("mesh['x'=0] {'x'}"), 9, 58, "mesh axis sizes must be positive");
  ExpectParseError(ar("mesh['x'=2,'x'=2] {'x'}"), 9, 63, "mesh axis 'x' given twice");
  auto t = ParseRoundTrip("HloModule m\nENTRY e {\n  x = f32[10,10] parameter(0)\n"
                          "  ROOT t = (f32[10,2], s32[10,2]) topk(x), k=2, largest=true, is_stable=true\n}\n");
  ASSERT_TRUE(t);
  EXPECT_TRUE(FindInstr(*t, "t")->attrs().is_stable);
}

}  // namespace
}  // namespace hlox
