// statistics={...} and origin={...} / original_value={...}: parsed into StatisticsViz and
// OriginalValue (ir/attributes.h), checked as XLA's parser checks them (origin also against the
// instruction's shape), printed back in XLA's form. Each construct has valid and invalid twins.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::ParseRoundTrip;
using testing_ir::RootModule;

// Expects `root` to be rejected on line 5 at the first occurrence of `at` in it ("  ROOT r = "
// is 11 characters, so the root text starts at column 12).
void ExpectRootErrorAt(const std::string& root, const std::string& at, const std::string& part) {
  size_t offset = root.find(at);
  ASSERT_NE(offset, std::string::npos) << at;
  ExpectParseError(RootModule(root), 5, 12 + static_cast<int>(offset), part);
}

// The printed root line of `m`.
std::string PrintedRoot(const hlox::Module& m) {
  std::string text = PrintModule(m);
  size_t start = text.find("ROOT");
  return text.substr(start, text.find('\n', start) - start);
}

TEST(ParserValueAttributes, StatisticsAreTyped) {
  auto m = ParseRoundTrip(
      RootModule("f32[4] add(a, a), statistics={visualizing_index=1, stat-1=0.5,count_nan=100,big=1e+20, neg=-2.25}"));
  ASSERT_TRUE(m);
  const auto& s = m->entry()->root()->attrs().statistics;
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->visualizing_index, 1);
  ASSERT_EQ(s->statistics.size(), 4u);
  EXPECT_EQ(s->statistics[0].name, "stat-1");
  EXPECT_EQ(s->statistics[0].value, 0.5);
  EXPECT_EQ(s->statistics[1].value, 100);
  EXPECT_EQ(s->statistics[2].value, 1e20);
  EXPECT_EQ(s->statistics[3].value, -2.25);
  EXPECT_NE(PrintedRoot(*m).find("statistics={visualizing_index=1,stat-1=0.5,count_nan=100,big=1e+20,neg=-2.25}"),
            std::string::npos)
      << PrintedRoot(*m);
  // Empty, and names given twice (XLA keeps both).
  m = ParseRoundTrip(RootModule("f32[4] add(a, a), statistics={}"));
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->entry()->root()->attrs().statistics.has_value());
  EXPECT_TRUE(m->entry()->root()->attrs().statistics->statistics.empty());
  m = ParseRoundTrip(RootModule("f32[4] add(a, a), statistics={visualizing_index=0,x=1,x=2}"));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->entry()->root()->attrs().statistics->statistics.size(), 2u);
}

TEST(ParserValueAttributes, MalformedStatisticsAreRejected) {
  ExpectRootErrorAt("f32[4] add(a, a), statistics={index=1,x=1}", "index=1",
                    "statistics must start with visualizing_index=N, not 'index'");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=1.5,x=1}", "1.5",
                    "visualizing_index must be an integer");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x=inf}", "inf",
                    "statistic 'x' needs a finite number");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x=nan}", "nan", "needs a finite number");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x=\"1\"}", "\"1\"", "needs a finite number");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x=1e999}", "1e999",
                    "statistic 'x' is out of range");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,}", "}", "expected a statistic name");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x 1}", "1}", "expected '='");
  ExpectRootErrorAt("f32[4] add(a, a), statistics={visualizing_index=0,x=1 y=2}", "y=2",
                    "or ',' to close statistics");
  ExpectRootErrorAt("f32[4] add(a, a), statistics=visualizing_index", "visualizing_index", "to open statistics");
}

TEST(ParserValueAttributes, OriginIsATreeShapedLikeTheResult) {
  auto m = ParseRoundTrip(RootModule("f32[4] add(a, a), origin={{\"x.1\" {0}}}"));
  ASSERT_TRUE(m);
  const auto& v = m->entry()->root()->attrs().original_value;
  ASSERT_TRUE(v.has_value());
  ASSERT_FALSE(v->is_tuple);
  ASSERT_TRUE(v->leaf.has_value());
  EXPECT_EQ(v->leaf->instruction_name, "x.1");
  EXPECT_EQ(v->leaf->shape_index, std::vector<int64_t>{0});
  // Tuples nest; {} is an empty leaf; names are C strings.
  m = ParseRoundTrip(RootModule("((f32[4]), s32[2]) tuple(tuple(a), b), origin={(({\"p\\\"q\" {1, 2}}), {})}"));
  ASSERT_TRUE(m);
  const auto& t = *m->entry()->root()->attrs().original_value;
  ASSERT_TRUE(t.is_tuple);
  ASSERT_EQ(t.elements.size(), 2u);
  ASSERT_TRUE(t.elements[0].is_tuple);
  EXPECT_EQ(t.elements[0].elements[0].leaf->instruction_name, "p\"q");
  EXPECT_EQ(t.elements[0].elements[0].leaf->shape_index, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(t.elements[1].leaf.has_value());
  EXPECT_NE(PrintedRoot(*m).find("origin={(({\"p\\\"q\" {1,2}}), {})}"), std::string::npos) << PrintedRoot(*m);
  // The older spelling reads the same and prints as origin=; so does an inferred shape.
  m = ParseRoundTrip(RootModule("(f32[4], s32[2]) tuple(a, b), original_value={({\"a\"}, {\"b\" {1}})}"));
  ASSERT_TRUE(m);
  EXPECT_NE(PrintedRoot(*m).find("origin={({\"a\"}, {\"b\" {1}})}"), std::string::npos) << PrintedRoot(*m);
  EXPECT_TRUE(ParseRoundTrip(RootModule("tuple(a, b), origin={({\"a\"}, {\"b\"})}")));
  m = ParseRoundTrip(RootModule("f32[4] add(a, a), origin={[synthetic_call]}"));
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->entry()->root()->attrs().original_value->synthetic_call);
}

// A clone keeps the origin only when its shape is compatible (the tree follows the shape).
TEST(ParserValueAttributes, ClonesOfAnotherShapeDropTheOrigin) {
  auto m = ParseRoundTrip(RootModule("f32[4] add(a, a), origin={{\"x\"}}, statistics={visualizing_index=0,s=1}"));
  ASSERT_TRUE(m);
  const Instruction* r = m->entry()->root();
  auto same = r->CloneWithOperands(r->shape(), {});
  EXPECT_EQ(same->attrs().original_value, r->attrs().original_value);
  auto tuple = r->CloneWithOperands(Shape::Tuple({r->shape()}), {});
  EXPECT_FALSE(tuple->attrs().original_value.has_value());
  EXPECT_EQ(tuple->attrs().statistics, r->attrs().statistics);
}

TEST(ParserValueAttributes, MalformedOriginsAreRejected) {
  ExpectRootErrorAt("f32[4] add(a, a), origin={({\"x\"})}", "{({",
                    "origin has a tuple at index {} where the shape has f32[4]");
  ExpectRootErrorAt("(f32[4], s32[2]) tuple(a, b), origin={({\"a\"})}", "{({",
                    "origin has a tuple of 1 elements at index {} where the shape has 2");
  ExpectRootErrorAt("((f32[4]), s32[2]) tuple(tuple(a), b), origin={({\"a\"}, {\"b\"})}", "{({",
                    "origin has an array leaf at index {0} where the shape has (f32[4]");
  // A shape left out is inferred first; the check then reports at the value.
  ExpectRootErrorAt("add(a, a), origin={({\"x\"}, {\"y\"})}", "{({", "origin has a tuple at index {}");
  ExpectRootErrorAt("f32[4] add(a, a), origin={{x}}", "x}", "expected a quoted instruction name");
  ExpectRootErrorAt("f32[4] add(a, a), origin={{\"x\" {-1}}}", "-1", "negative shape index element");
  ExpectRootErrorAt("f32[4] add(a, a), origin={{\"x\" {0} y}}", "y}", "to close an original array");
  ExpectRootErrorAt("f32[4] add(a, a), origin={\"x\"}", "\"x\"", "expected '(' for a tuple or '{'");
  ExpectRootErrorAt("(f32[4], s32[2]) tuple(a, b), origin={({\"a\"} {\"b\"})}", "{\"b\"", "or ')' in an origin tuple");
  ExpectRootErrorAt("f32[4] add(a, a), origin={[synthetic]}", "synthetic]", "expected synthetic_call");
  ExpectRootErrorAt("f32[4] add(a, a), origin={{\"x\"}}, original_value={{\"y\"}}", "original_value",
                    "origin given twice");
}

}  // namespace
}  // namespace hlox
