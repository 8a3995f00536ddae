// Attributes that are checked and then kept as text: custom-call api_version,
// custom_call_schedule and operand_layout_constraints, dot sparsity, result_accuracy, sharding.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::ParseRoundTrip;
using testing_ir::RootModule;

// Errors are on line 5; "  ROOT r = " is 11 characters, so the root text starts at column 12.
void ExpectRootError(const std::string& root, int col_in_root, const std::string& part) {
  ExpectParseError(RootModule(root), 5, 12 + col_in_root, part);
}

TEST(ParserCheckedAttributes, CustomCallApiVersionScheduleAndLayouts) {
  auto m =
      ParseRoundTrip(RootModule("f32[4] custom-call(a, b), custom_call_target=\"t\", api_version=API_VERSION_TYPED_FFI, "
                            "custom_call_schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[4]{0}, s32[2]{0}}"));
  ASSERT_TRUE(m);
  const Instruction* r = m->entry()->root();
  ASSERT_NE(r->FindRawAttribute("api_version"), nullptr);
  EXPECT_EQ(*r->FindRawAttribute("operand_layout_constraints"), "{f32[4]{0}, s32[2]{0}}");
  for (const char* v : {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                        "API_VERSION_STATUS_RETURNING_UNIFIED"}) {
    EXPECT_TRUE(
        ParseRoundTrip(RootModule(std::string("f32[4] custom-call(a), custom_call_target=\"t\", api_version=") + v)));
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

// ragged-dot and scaled-dot take dot dimension numbers; ragged-dot also its ragged and group
// dims (exactly one ragged dim, checked at the attribute), and both print back as written.
TEST(ParserCheckedAttributes, RaggedDotAndScaledDotAttributes) {
  auto m = ParseRoundTrip(
      "HloModule m\nENTRY e {\n  l = f32[19,11,5] parameter(0)\n  r = f32[3,5,7] parameter(1)\n"
      "  g = s64[19,3] parameter(2)\n  ROOT d = f32[19,11,7] ragged-dot(l, r, g), lhs_contracting_dims={2}, "
      "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}, operand_precision={default,highest}\n}\n");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->attrs().lhs_ragged_dims, std::vector<int64_t>{1});
  EXPECT_EQ(m->entry()->root()->attrs().rhs_group_dims, std::vector<int64_t>{0});
  EXPECT_TRUE(ParseRoundTrip(
      "HloModule m\nENTRY e {\n  l = f32[11,19,5] parameter(0)\n  r = f32[19,5,7] parameter(1)\n"
      "  g = s64[19,3] parameter(2)\n  ROOT d = f32[3,11,7] ragged-dot(l, r, g), lhs_contracting_dims={1,2}, "
      "rhs_contracting_dims={0,1}, lhs_ragged_dims={2}\n}\n"));
  EXPECT_TRUE(ParseRoundTrip(
      "HloModule m\nENTRY e {\n  l = f8e4m3fn[4,64] parameter(0)\n  r = f8e4m3fn[64,8] parameter(1)\n"
      "  ls = f8e8m0fnu[4,2] parameter(2)\n  rs = f8e8m0fnu[2,8] parameter(3)\n"
      "  ROOT d = bf16[4,8] scaled-dot(l, r, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"));
  const std::string head = "HloModule m\nENTRY e {\n  l = f32[4,2] parameter(0)\n  r = f32[2,2,3] parameter(1)\n"
                           "  g = s32[2] parameter(2)\n  ROOT d = f32[4,3] ragged-dot(l, r, g), ";
  // "  ROOT d = f32[4,3] ragged-dot(l, r, g), " is 41 characters: keys start at column 42.
  ExpectParseError(head + "lhs_ragged_dims={0,1}\n}\n", 6, 42, "lhs_ragged_dims must name exactly one dimension, names 2");
  ExpectParseError(head + "lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={}\n}\n", 6, 94,
                   "names 0");
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

TEST(ParserCheckedAttributes, DotAlgorithm) {
  const std::string head =
      "HloModule m\nENTRY e {\n  a = f32[4,8] parameter(0)\n  b = f32[8,4] parameter(1)\n"
      "  ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=";
  for (const char* alg : {"dot_bf16_bf16_f32", "dot_f32_f32_f32", "dot_tf32_tf32_f32_x3", "unset"}) {
    EXPECT_TRUE(ParseRoundTrip(head + alg + "\n}\n")) << alg;
  }
  ExpectParseError(head + "dot_f32_f32_f16\n}\n", 5, 94, "unknown dot algorithm 'dot_f32_f32_f16'");
  ExpectParseError(head + "ALG_DOT_F32_F32_F32\n}\n", 5, 94, "unknown dot algorithm");
}

TEST(ParserCheckedAttributes, ResultAccuracy) {
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] exponential(a), result_accuracy={mode=highest}")));
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] sqrt(a), result_accuracy={tolerance={atol=0,rtol=0.5,ulps=2}}")));
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] tanh(a), result_accuracy={mode=default}")));
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
      RootModule("f32[4] negate(a), metadata={op_type=\"neg\" op_name=\"jit(f)/neg\" source_file=\"f.py\" source_line=3 "
             "profile_type={1} deduplicated_name=\"d\" preserve_layout=true}"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->FindRawAttribute("metadata")->substr(0, 15), "{op_type=\"neg\" ");
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] negate(a), metadata={op_name=\"x\", source_line=1}")));
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] negate(a), metadata={}")));
  ASSERT_TRUE(ParseRoundTrip(RootModule("f32[4] negate(a), metadata={{op_name=\"x\"}, {op_name=\"y\"}}")));
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
      ParseRoundTrip(RootModule("(f32[4], s32[2]) custom-call(a, b), custom_call_target=\"t\", "
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
  ExpectRootError("f32[4] negate(a), lhs_ragged_dims={0}", 18, "does not apply to negate");
  ExpectRootError("f32[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}, rhs_group_dims={0}", 69,
                  "attribute 'rhs_group_dims' does not apply to dot");
  // The same keys where they belong.
  EXPECT_TRUE(ParseRoundTrip(RootModule("f32[2] slice(a), slice={[0:2]}")));
  EXPECT_TRUE(ParseRoundTrip(RootModule("pred[4] compare(a, a), direction=LT")));
}

// Every sharding form XLA prints parses and prints back; each malformed one is an error at the
// item that is wrong (the column of `at` in the root text).
TEST(ParserCheckedAttributes, Sharding) {
  const std::string x = "f32[8,4] parameter(0), sharding=";
  for (const std::string s : {"{replicated}", "{manual}", "{unknown}", "{maximal device=3}",
                              "{devices=[4,1]0,1,2,3}", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}",
                              "{devices=[2,1]<=[2]}", "{devices=[2,2]<=[2,2]T(1,0)}",
                              "{devices=[1,1,2,2]<=[4] last_tile_dims={manual, replicated}}",
                              "{replicated metadata={op_name=\"x\"}}", "{devices=[2,2]<=[4] shard_as 1}",
                              "{unknown shard_like 0}"}) {
    SCOPED_TRACE(s);
    auto m = ParseRoundTrip("HloModule m\nENTRY e {\n  ROOT p = " + x + s + "\n}\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(*m->entry()->root()->FindRawAttribute("sharding"), s);
  }
  EXPECT_TRUE(ParseRoundTrip("HloModule m\nENTRY e {\n  ROOT p = (f32[2], (s32[], f32[3])) parameter(0), "
                             "sharding={{replicated}, {maximal device=0}, {devices=[2]0,1}}\n}\n"));
  auto bad = [&](const std::string& s, const std::string& at, const std::string& part) {
    const std::string root = x + s;
    ExpectParseError("HloModule m\nENTRY e {\n  ROOT p = " + root + "\n}\n", 3,
                     12 + static_cast<int>(root.find(at)), part);
  };
  bad("{devices=[4,1]0,1,2}", "0,1,2", "lists 3 devices for 4 tiles");
  bad("{devices=[4,1]0,1,2,2}", "2}", "device 2 used twice");
  bad("{devices=[4,1]0,1,2,-3}", "-3", "negative device id");
  bad("{devices=[4,1]<=[8]}", "<=", "8 devices where 4 are needed");
  bad("{devices=[2,2]<=[2,2]T(0,0)}", "(0,0)", "permutation");
  bad("{devices=[4]0,1,2,3}", "devices", "1 dimensions for a rank-2 shape");
  bad("{devices=[2,1,2]0,1,2,3}", "devices", "3 dimensions for a rank-2 shape");
  bad("{replicated devices=[4,1]0,1,2,3}", "devices", "either replicated or devices");
  bad("{maximal}", "maximal", "needs device=N");
  bad("{replicated device=0}", "replicated", "belongs to a maximal sharding");
  bad("{replicated last_tile_dim_replicate}", "replicated", "need devices");
  bad("{devices=[1,1,2,2]<=[4] last_tile_dims={manual, spare}}", "spare", "unknown subgroup type 'spare'");
  bad("{devices=[4,1]0,1,2,3 replicate}", "replicate}", "unknown sharding item 'replicate'");
  bad("{replicated replicated}", "replicated}", "given twice");
  bad("{}", "{}", "tuple sharding needs a tuple shape");
  bad("{ }", "{ }", "tuple sharding needs a tuple shape");
  bad("{shard_as 1}", "{", "needs replicated, manual");
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT p = (f32[2], s32[]) parameter(0), sharding={{replicated}}\n}\n",
                   3, 51, "1 elements for a shape of 2 leaves");
}

// Iota replica groups: [groups, size] <= [reshape] T(perm), as many devices as places.
TEST(ParserCheckedAttributes, IotaReplicaGroups) {
  const std::string head =
      "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(a), to_apply=add, replica_groups=";
  for (const char* g : {"[2,2]<=[4]", "[2,2]<=[2,2]T(1,0)", "[1,8]<=[2,2,2]T(2,0,1)"}) {
    auto m = ParseRoundTrip(head + g + "\n}\n");
    ASSERT_TRUE(m) << g;
    EXPECT_EQ(m->entry()->root()->attrs().replica_groups_text, g);
  }
  // "  ROOT r = f32[4] all-reduce(a), to_apply=add, replica_groups=" ends at column 62.
  ExpectParseError(head + "[2,2]<=[8]\n}\n", 9, 68, "lists 8 devices where 4 are needed");
  ExpectParseError(head + "[4]<=[4]\n}\n", 9, 63, "[number of groups, group size]");
  ExpectParseError(head + "[2,2]<=[2,2]T(0,0)\n}\n", 9, 76, "permutation");
  ExpectParseError(head + "[2,2]0,1,2,3\n}\n", 9, 68, "expected '<='");
}

// A key XLA defines but hlox does not model is kept as text; any other key is an error at the key
// (XLA rejects unknown attributes; a typo must not change the program silently).
TEST(ParserCheckedAttributes, UnknownAttributesAreErrors) {
  auto m = ParseRoundTrip(RootModule("f32[4] add(a, a), statistics={visualizing_index=1,stat-1=0.5}"));
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->entry()->root()->attrs().statistics.has_value());
  ExpectRootError("f32[4] add(a, a), frobnicate=3", 18, "unknown attribute 'frobnicate'");
  ExpectRootError("f32[4] add(a, a), metdata={op_name=\"x\"}", 18, "unknown attribute 'metdata'");
  // A key XLA types for one opcode family is an error on another.
  ExpectRootError("f32[4] add(a, a), epsilon=0.001", 18, "attribute 'epsilon' does not apply to add");
  ExpectRootError("f32[4] negate(a), k=2", 18, "attribute 'k' does not apply to negate");
  // custom-call's schedule under either spelling XLA has used.
  EXPECT_TRUE(ParseRoundTrip(RootModule("f32[4] custom-call(a), custom_call_target=\"t\", schedule=SCHEDULE_LATEST")));
  ExpectRootError("f32[4] custom-call(a), custom_call_target=\"t\", schedule=LATEST", 56, "unknown schedule 'LATEST'");
}

}  // namespace
}  // namespace hlox
