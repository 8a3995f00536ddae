// scan, shuffle and collective-reduce (XLA's newest opcodes) in the IR: the forms XLA's own tests
// write parse, verify and print back to the same module; each malformed form is rejected with a
// message naming what is wrong, and its valid twin passes.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::FindInstr;
using testing_ir::ParseRoundTrip;

const char kAddTuple[] =
    "add2 {\n  lhs = f32[] parameter(0)\n  rhs = f32[] parameter(1)\n  s = f32[] add(lhs, rhs)\n"
    "  ROOT t = (f32[], f32[]) tuple(s, s)\n}\n\n";
const char kAdd[] = "add {\n  lhs = f32[] parameter(0)\n  rhs = f32[] parameter(1)\n  ROOT s = f32[] add(lhs, rhs)\n}\n\n";

std::string Module(const std::string& extra, const std::string& body) {
  return "HloModule m\n\n" + extra + "ENTRY main {\n" + body + "}\n";
}

// Parses and verifies; the error message (empty when both succeed).
std::string Problem(const std::string& text) {
  auto m = ParseModule(text, "t.hlo");
  if (!m.ok()) return std::string(m.status().message());
  absl::Status v = VerifyModule(**m);
  return v.ok() ? "" : std::string(v.message());
}

TEST(NewerOps, XlaFormsParseVerifyAndRoundTrip) {
  // XLA's parser round-trip case for scan, and its expander's shuffle and collective-reduce cases.
  auto scan = ParseRoundTrip(Module(kAddTuple,
                                    "  input = f32[4]{0} parameter(0)\n  init = f32[] constant(0)\n"
                                    "  ROOT scan = (f32[4]{0}, f32[]) scan(input, init), dimensions={0}, num_carries=1, "
                                    "is_reverse=true, is_associative=true, to_apply=add2\n"));
  ASSERT_TRUE(scan);
  EXPECT_TRUE(VerifyModule(*scan).ok());
  const Instruction* s = FindInstr(*scan, "scan");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->attrs().num_carries, 1);
  EXPECT_TRUE(s->attrs().is_reverse);
  EXPECT_EQ(s->attrs().is_associative, std::optional<bool>(true));

  for (const std::string& shuffle :
       {std::string("f32[2,3]{1,0} shuffle(p0), dimensions={0,1}, mode=rotate, shifts={1,2}"),
        std::string("f32[2,3]{1,0} shuffle(p0), dimensions={0}, mode=permute, indices=s32[2,1]{1,0} { {1}, {0} }"),
        std::string("f32[2,3]{1,0} shuffle(p0), dimensions={1,0}, mode=permute, indices=s8[2,3,2]{2,1,0} "
                    "{ { {0,1}, {1,0}, {2,1} }, { {2,0}, {0,0}, {1,1} } }")}) {
    SCOPED_TRACE(shuffle);
    auto m = ParseRoundTrip(Module("", "  p0 = f32[2,3]{1,0} parameter(0)\n  ROOT shuffle = " + shuffle + "\n"));
    ASSERT_TRUE(m);
    EXPECT_TRUE(VerifyModule(*m).ok());
  }

  for (const std::string& cr :
       {std::string("  input = f32[8]{0} parameter(0)\n  ROOT cr = f32[8]{0} collective-reduce(input), "
                    "replica_groups={{0,1},{2,3}}, has_dynamic_root=false, to_apply=add\n"),
        std::string("  input = f32[8]{0} parameter(0)\n  ROOT cr = f32[8]{0} collective-reduce(input), channel_id=1, "
                    "replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add\n"),
        std::string("  input = f32[8]{0} parameter(0)\n  root = s32[1]{0} parameter(1)\n  ROOT cr = f32[8]{0} "
                    "collective-reduce(input, root), replica_groups={{0,1},{2,3}}, has_dynamic_root=true, to_apply=add\n"),
        std::string("  input = f32[8]{0} parameter(0)\n  root = f32[1]{0} parameter(1)\n  ROOT cb = f32[8]{0} "
                    "collective-broadcast(input, root), replica_groups={{1,0},{2,3}}, has_dynamic_root=true\n")}) {
    SCOPED_TRACE(cr);
    auto m = ParseRoundTrip(Module(kAdd, cr));
    ASSERT_TRUE(m);
    EXPECT_TRUE(VerifyModule(*m).ok());
  }
}

TEST(NewerOps, ScanShapesOutputsAndCarries) {
  // Two inputs scanned along dimension 1, one output stacked there, two carries.
  const char body[] = "  x = f32[3,5,2] parameter(0)\n  y = s32[3,5] parameter(1)\n  c = f32[3,2] parameter(2)\n"
                      "  n = s32[3] parameter(3)\n"
                      "  ROOT s = (f32[3,5,2], f32[3,2], s32[3]) scan(x, y, c, n), dimensions={1}, num_carries=2, to_apply=f\n";
  const char f[] = "f {\n  xs = f32[3,2] parameter(0)\n  ys = s32[3] parameter(1)\n  cs = f32[3,2] parameter(2)\n"
                   "  ns = s32[3] parameter(3)\n  a = f32[3,2] add(xs, cs)\n  b = s32[3] add(ys, ns)\n"
                   "  ROOT t = (f32[3,2], f32[3,2], s32[3]) tuple(a, a, b)\n}\n\n";
  EXPECT_EQ(Problem(Module(f, body)), "");
  // Shape left out: inferred.
  auto m = ParseModule(Module(f, "  x = f32[3,5,2] parameter(0)\n  y = s32[3,5] parameter(1)\n  c = f32[3,2] parameter(2)\n"
                                 "  n = s32[3] parameter(3)\n  ROOT s = scan(x, y, c, n), dimensions={1}, num_carries=2, to_apply=f\n"),
                       "t.hlo");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(FindInstr(**m, "s")->shape().ToString(false), "(f32[3,5,2], f32[3,2], s32[3])");

  struct Bad {
    std::string body, fn, part;
  };
  const std::string sig = "f {\n  xs = f32[3,2] parameter(0)\n  ys = s32[3] parameter(1)\n  cs = f32[3,2] parameter(2)\n"
                          "  ns = s32[3] parameter(3)\n  a = f32[3,2] add(xs, cs)\n  b = s32[3] add(ys, ns)\n";
  const std::string ops = "  x = f32[3,5,2] parameter(0)\n  y = s32[3,5] parameter(1)\n  c = f32[3,2] parameter(2)\n"
                          "  n = s32[3] parameter(3)\n";
  const std::string good_root = "  ROOT t = (f32[3,2], f32[3,2], s32[3]) tuple(a, a, b)\n}\n\n";
  const std::string result = "(f32[3,5,2], f32[3,2], s32[3])";
  for (const Bad& b : std::vector<Bad>{
           {ops + "  ROOT s = " + result + " scan(x, y, c, n), dimensions={1,0}, num_carries=2, to_apply=f\n", sig + good_root,
            "exactly one dimension"},
           {ops + "  ROOT s = " + result + " scan(x, y, c, n), dimensions={1}, num_carries=5, to_apply=f\n", sig + good_root,
            "num_carries=5 but only 4 operands"},
           {ops + "  ROOT s = " + result + " scan(x, y, c, n), dimensions={0}, num_carries=2, to_apply=f\n", sig + good_root,
            "parameter 0 is f32[3,2], expected f32[5,2]"},
           {ops + "  ROOT s = " + result + " scan(x, y, c, n), dimensions={1}, num_carries=2, to_apply=f\n",
            sig + "  ROOT t = (f32[3,2], s32[3], s32[3]) tuple(a, b, b)\n}\n\n", "returns carry 0 as s32[3]"},
           {ops + "  ROOT s = (f32[3,2,5], f32[3,2], s32[3]) scan(x, y, c, n), dimensions={1}, num_carries=2, to_apply=f\n",
            sig + good_root, "declared shape"},
           {"  c = f32[3,2] parameter(0)\n  n = s32[3] parameter(1)\n  ROOT s = (f32[3,2], s32[3]) scan(c, n), "
            "dimensions={0}, num_carries=2, to_apply=g\n",
            "g {\n  cs = f32[3,2] parameter(0)\n  ns = s32[3] parameter(1)\n  ROOT t = (f32[3,2], s32[3]) tuple(cs, ns)\n}\n\n",
            "without inputs"},
       }) {
    SCOPED_TRACE(b.body);
    std::string p = Problem(Module(b.fn, b.body));
    EXPECT_NE(p.find(b.part), std::string::npos) << p;
  }
}

TEST(NewerOps, MalformedShufflesAreRejected) {
  const std::string p0 = "  p0 = f32[2,3] parameter(0)\n";
  struct Bad {
    std::string root, part;
  };
  for (const Bad& b : std::vector<Bad>{
           {"f32[2,3] shuffle(p0), dimensions={0,1}, mode=rotate, shifts={1}", "1 shifts for 2 dimensions"},
           {"f32[2,3] shuffle(p0), dimensions={0,0}, mode=rotate, shifts={1,1}", "listed twice"},
           {"f32[2,3] shuffle(p0), dimensions={2}, mode=rotate, shifts={1}", "outside rank"},
           {"f32[2,3] shuffle(p0), dimensions={0}", "mode=rotate or mode=permute"},
           {"f32[2,3] shuffle(p0), dimensions={0}, mode=permute", "needs indices"},
           {"f32[2,3] shuffle(p0), dimensions={0}, mode=permute, indices=s32[2,1]{1,0} { {1}, {2} }",
            "index 2 (entry 1) is outside dimension 0 of size 2"},
           {"f32[2,3] shuffle(p0), dimensions={0}, mode=permute, indices=s32[3,1]{1,0} { {1}, {0}, {1} }",
            "dimension 0 is 3, expected 2 or 1"},
           {"f32[2,3] shuffle(p0), dimensions={0,1}, mode=permute, indices=s32[2,3]{1,0} { {0,0,0}, {1,1,1} }", "need rank 3"},
           {"f32[2,3] shuffle(p0), dimensions={0}, mode=permute, shifts={1}, indices=s32[2,1]{1,0} { {1}, {0} }",
            "takes indices, not shifts"},
           {"f32[3,2] shuffle(p0), dimensions={0}, mode=rotate, shifts={1}", "declared shape"},
       }) {
    SCOPED_TRACE(b.root);
    std::string p = Problem(Module("", p0 + "  ROOT r = " + b.root + "\n"));
    EXPECT_NE(p.find(b.part), std::string::npos) << p;
  }
  // Errors the parser reports at the attribute (line 4 holds the root; "  ROOT r = " is 11 columns).
  const std::string head = "HloModule m\nENTRY e {\n  p0 = f32[2,3] parameter(0)\n  ROOT r = ";
  ExpectParseError(head + "f32[2,3] shuffle(p0), dimensions={0}, mode=butterfly\n}\n", 4, 55, "unknown shuffle mode 'butterfly'");
  ExpectParseError(head + "f32[2,3] shuffle(p0), dimensions={0}, mode=permute, indices=f32[2]{0} {1, 0}\n}\n", 4, 72,
                   "shuffle indices must be an integer array");
  ExpectParseError(head + "f32[2,3] negate(p0), shifts={1}\n}\n", 4, 33, "attribute 'shifts' does not apply to negate");
  ExpectParseError(head + "f32[2,3] negate(p0), num_carries=1\n}\n", 4, 33, "does not apply to negate");
  ExpectParseError(head + "f32[2,3] all-reduce(p0), has_dynamic_root=true\n}\n", 4, 37, "does not apply to all-reduce");
}

TEST(NewerOps, CollectiveReduceNeedsAScalarReducer) {
  const std::string body = "  input = f32[8] parameter(0)\n  ROOT cr = f32[8] collective-reduce(input), replica_groups={{0,1}}";
  EXPECT_EQ(Problem(Module(kAdd, body + ", to_apply=add\n")), "");
  EXPECT_NE(Problem(Module(kAdd, body + "\n")).find("expects 1 called computations"), std::string::npos);
  EXPECT_NE(Problem(Module(kAddTuple, body + ", to_apply=add2\n")).find("reducer"), std::string::npos);
  // has_dynamic_root=true without the root operand.
  EXPECT_NE(Problem(Module(kAdd, body + ", has_dynamic_root=true, to_apply=add\n")).find("root operand"), std::string::npos);
  // A root operand of more than one element.
  EXPECT_NE(Problem(Module(kAdd, "  input = f32[8] parameter(0)\n  r = s32[2] parameter(1)\n  ROOT cr = f32[8] "
                                 "collective-reduce(input, r), has_dynamic_root=true, to_apply=add\n"))
                .find("one-element array"),
            std::string::npos);
}

}  // namespace
}  // namespace hlox
