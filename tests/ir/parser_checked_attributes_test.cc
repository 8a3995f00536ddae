// Attributes that are checked and then kept as text: custom-call api_version,
// custom_call_schedule and operand_layout_constraints, dot sparsity, result_accuracy.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::ParseRoundTrip;

// A module whose root (line 5) is `root`, with parameters a = f32[4] and b = s32[2].
std::string Module(const std::string& root) {
  return "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = s32[2] parameter(1)\n  ROOT r = " + root + "\n}\n";
}

// Errors are on line 5; "  ROOT r = " is 11 characters, so the root text starts at column 12.
void ExpectRootError(const std::string& root, int col_in_root, const std::string& part) {
  ExpectParseError(Module(root), 5, 12 + col_in_root, part);
}

TEST(ParserCheckedAttributes, CustomCallApiVersionScheduleAndLayouts) {
  auto m =
      ParseRoundTrip(Module("f32[4] custom-call(a, b), custom_call_target=\"t\", api_version=API_VERSION_TYPED_FFI, "
                            "custom_call_schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[4]{0}, s32[2]{0}}"));
  ASSERT_TRUE(m);
  const Instruction* r = m->entry()->root();
  ASSERT_NE(r->FindRawAttribute("api_version"), nullptr);
  EXPECT_EQ(*r->FindRawAttribute("operand_layout_constraints"), "{f32[4]{0}, s32[2]{0}}");
  for (const char* v : {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                        "API_VERSION_STATUS_RETURNING_UNIFIED"}) {
    EXPECT_TRUE(
        ParseRoundTrip(Module(std::string("f32[4] custom-call(a), custom_call_target=\"t\", api_version=") + v)));
  }
  ExpectRootError("f32[4] custom-call(a), custom_call_target=\"t\", api_version=API_VERSION_NEW", 59,
                  "unknown api_version 'API_VERSION_NEW'");
  ExpectRootError("f32[4] custom-call(a), custom_call_target=\"t\", custom_call_schedule=LATEST", 68,
                  "unknown custom_call_schedule 'LATEST'");
  ExpectRootError("f32[4] custom-call(a, b), custom_call_target=\"t\", operand_layout_constraints={f32[4]{0}}", 50,
                  "expected 2 operand layout constraints, got 1");
  ExpectRootError(
      "f32[4] custom-call(a, b), custom_call_target=\"t\", operand_layout_constraints={f32[4]{0}, f32[2]{0}}", 50,
      "operand layout constraint f32[2]{0} for operand 1 is not compatible with its shape s32[2]");
}

TEST(ParserCheckedAttributes, DotSparsityDescriptors) {
  ASSERT_TRUE(ParseRoundTrip(
      "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,4] parameter(1)\n"
      "  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4\n}\n"));
  ASSERT_TRUE(
      ParseRoundTrip("HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,4] parameter(1)\n"
                     "  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                     "sparsity=L.1@2:4_R.0@1:2\n}\n"));
  const std::string head =
      "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,4] parameter(1)\n"
      "  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=";
  ExpectParseError(head + "L.1@4:2\n}\n", 5, 93, "invalid sparsity descriptor 'L.1@4:2'");
  ExpectParseError(head + "X.1@2:4\n}\n", 5, 93, "invalid sparsity descriptor");
  ExpectParseError(head + "L.1@0:4\n}\n", 5, 93, "invalid sparsity descriptor");
  ExpectParseError(head + "L.-1@2:4\n}\n", 5, 93, "invalid sparsity descriptor");
}

TEST(ParserCheckedAttributes, ResultAccuracy) {
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] exponential(a), result_accuracy={mode=highest}")));
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] sqrt(a), result_accuracy={tolerance={atol=0,rtol=0.5,ulps=2}}")));
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] tanh(a), result_accuracy={mode=default}")));
  ExpectRootError("f32[4] exponential(a), result_accuracy={mode=fastest}", 45,
                  "unknown result accuracy mode 'fastest'");
  ExpectRootError("f32[4] exponential(a), result_accuracy={precision=highest}", 40,
                  "unknown result_accuracy field 'precision'");
  ExpectRootError("f32[4] log(a), result_accuracy={tolerance={atol=1,eps=2}}", 50, "unknown tolerance field 'eps'");
  ExpectRootError("f32[4] negate(a), result_accuracy={mode=highest}", 18,
                  "result_accuracy is only for transcendental ops, not negate");
}

TEST(ParserCheckedAttributes, MetadataFieldsAndRepeatedAttributes) {
  auto m = ParseRoundTrip(
      Module("f32[4] negate(a), metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" source_file=\"f.py\" source_line=3 "
             "profile_type={1} deduplicated_name=\"d\" preserve_layout=true}"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->FindRawAttribute("metadata")->substr(0, 15), "{op_type=\"neg\" ");
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] negate(a), metadata={op_name=\"x\", source_line=1}")));
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] negate(a), metadata={}")));
  ASSERT_TRUE(ParseRoundTrip(Module("f32[4] negate(a), metadata={{op_name=\"x\"}, {op_name=\"y\"}}")));
  // A list is one level deep, so hostile nesting ends at once instead of recursing.
  ExpectRootError("f32[4] negate(a), metadata={" + std::string(100000, '{'), 29,
                  "expected a metadata field, not a nested list");
  ExpectRootError("f32[4] negate(a), metadata={op_typo=\"x\"}", 28, "unknown metadata field 'op_typo'");
  ExpectRootError("f32[4] negate(a), metadata={source_line=\"3\"}", 40, "expected an integer (source_line)");
  ExpectRootError("f32[4] negate(a), metadata={op_name=\"a\" op_name=\"b\"}", 40,
                  "metadata field 'op_name' given twice");
  ExpectRootError("f32[4] negate(a), metadata={op_name=x}", 36, "expected a quoted string for op_name");
  ExpectRootError("f32[4] negate(a), metadata={}, metadata={}", 31, "attribute 'metadata' given twice");
  ExpectRootError("f32[4] negate(a), sharding={replicated}, sharding={maximal device=0}", 41,
                  "attribute 'sharding' given twice");
  ExpectRootError("f32[4] custom-call(a), custom_call_target=\"t\", constrain_layout=yes", 64,
                  "expected true or false");
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT a = f32[4] parameter(0), parameter_replication={true,maybe}\n}\n", 3,
                   61, "expected true or false");
}

TEST(ParserCheckedAttributes, OperandPrecisionAndOutputOperandAliasing) {
  const std::string dot =
      "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,4] parameter(1)\n"
      "  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
      "operand_precision=";
  ASSERT_TRUE(ParseRoundTrip(dot + "{highest,default}\n}\n"));
  ExpectParseError(dot + "{highest,fast}\n}\n", 5, 111, "unknown precision 'fast'");
  ExpectParseError(dot + "{highest}\n}\n", 5, 102, "dot takes 2 operand precisions, got 1");
  ASSERT_TRUE(
      ParseRoundTrip(Module("(f32[4], s32[2]) custom-call(a, b), custom_call_target=\"t\", "
                            "output_to_operand_aliasing={ {0}: (0, {}), {1}: (1, {}) }")));
  const std::string cc = "(f32[4], s32[2]) custom-call(a, b), custom_call_target=\"t\", output_to_operand_aliasing={";
  ExpectRootError(cc + "{2}: (0, {})}", 88, "names an output index the result lacks");
  ExpectRootError(cc + "{0}: (2, {})}", 88, "names operand 2 of 2");
  ExpectRootError(cc + "{0}: (0, {0})}", 88, "operand 0 lacks the aliased shape index");
  ExpectRootError(cc + "{1}: (0, {})}", 88, "aliased output s32[2] and operand buffer f32[4] differ");
  ExpectRootError(cc + "{0}: (0, {}), {0}: (0, {})}", 102, "lists an output twice");
}

TEST(ParserCheckedAttributes, OpcodeSpecificKeysOnOtherOpcodes) {
  ExpectRootError("f32[4] negate(a), direction=LT", 18, "attribute 'direction' does not apply to negate");
  ExpectRootError("f32[4] negate(a), dimensions={0}, iota_dimension=0", 34,
                  "attribute 'iota_dimension' does not apply");
  ExpectRootError("f32[4] negate(a), slice={[0:4]}", 18, "attribute 'slice' does not apply to negate");
  ExpectRootError("f32[4] negate(a), custom_call_target=\"x\"", 18, "attribute 'custom_call_target' does not apply");
  ExpectRootError("f32[4] negate(a), window={size=1}", 18, "attribute 'window' does not apply to negate");
  ExpectRootError("f32[4] negate(a), lhs_contracting_dims={0}", 18, "does not apply to negate");
  ExpectRootError("f32[4] negate(a), feature_group_count=1", 18, "does not apply to negate");
  // The same keys where they belong.
  EXPECT_TRUE(ParseRoundTrip(Module("f32[2] slice(a), slice={[0:2]}")));
  EXPECT_TRUE(ParseRoundTrip(Module("pred[4] compare(a, a), direction=LT")));
}

}  // namespace
}  // namespace hlox
