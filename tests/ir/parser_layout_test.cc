// Layout items after ':' (sparse dimension levels, tiles, memory space, element size, index
// and pointer types, split configs, physical shapes): each typed and printed back in XLA's
// order; unknown, misplaced or contradictory items are errors at their column.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;

Layout LayoutOf(const std::string& shape_text) {
  auto s = ParseShape(shape_text);
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok() || !s->has_layout()) return Layout{};
  EXPECT_EQ(s->ToString(), shape_text);  // printed back exactly
  auto again = ParseShape(s->ToString());
  EXPECT_TRUE(again.ok() && *again == *s);
  return *s->layout();
}

TEST(ParserLayout, SparseLevelsAndTheirAttributes) {
  Layout l = LayoutOf("f32[10,20]{1,0:D(D,C+~)#(u32)*(u16)E(32)P(s32[4]{0})}");
  ASSERT_EQ(l.dim_levels.size(), 2u);
  EXPECT_EQ(l.dim_levels[0], (DimLevel{'D', true, true}));
  EXPECT_EQ(l.dim_levels[1], (DimLevel{'C', false, false}));
  EXPECT_TRUE(l.IsSparse());
  EXPECT_EQ(l.index_type, PrimitiveType::kU32);
  EXPECT_EQ(l.pointer_type, PrimitiveType::kU16);
  EXPECT_EQ(l.element_size_in_bits, 32);
  EXPECT_EQ(l.physical_shape, "s32[4]{0}");
  Layout s = LayoutOf("f32[4,4]{1,0:D(S,H~)}");
  EXPECT_EQ(s.dim_levels[0].type, 'S');
  EXPECT_EQ(s.dim_levels[1], (DimLevel{'H', true, false}));
}

TEST(ParserLayout, DenseItems) {
  Layout l = LayoutOf("bf16[8,128]{1,0:T(8,128)(2,1)L(4)E(16)S(1)SC(0:2,4)(1:)M(8)}");
  EXPECT_FALSE(l.IsSparse());
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tail_padding_alignment, 4);
  EXPECT_EQ(l.element_size_in_bits, 16);
  EXPECT_EQ(l.memory_space, 1);
  ASSERT_EQ(l.split_configs.size(), 2u);
  EXPECT_EQ(l.split_configs[0], (SplitConfig{0, {2, 4}}));
  EXPECT_EQ(l.split_configs[1], (SplitConfig{1, {}}));
  EXPECT_EQ(l.dynamic_shape_metadata_prefix_bytes, 8);
  EXPECT_EQ(LayoutOf("f32[2]{0:S(2)}").memory_space, 2);
  EXPECT_EQ(LayoutOf("s4[64]{0:E(4)}").element_size_in_bits, 4);
  // A default-valued item is not printed: L(1) reads back as no L at all.
  auto s = ParseShape("f32[2]{0:L(1)}");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ToString(), "f32[2]{0}");
}

// The shape is written as the result of a parameter on line 3, starting at column 12.
void ExpectLayoutError(const std::string& shape, int col_in_shape, const std::string& part) {
  ExpectParseError("HloModule m\nENTRY e {\n  ROOT p = " + shape + " parameter(0)\n}\n", 3, 12 + col_in_shape, part);
}

TEST(ParserLayout, MalformedItemsAreErrors) {
  ExpectLayoutError("f32[2,2]{1,0:D(D,X)}", 17, "unknown dimension level type 'X'");
  ExpectLayoutError("f32[2,2]{1,0:D(D+,C)}", 15, "a dense dimension level is always unique and ordered");
  ExpectLayoutError("f32[2,2]{1,0:D(C)}", 12, "layout has 1 dimension level types but the shape has rank 2");
  ExpectLayoutError("f32[2,2]{1,0:D(D,C)T(2,2)}", 12, "a sparse layout cannot have tiles");
  ExpectLayoutError("f32[2,2]{1,0:D(D,D)P(s32[2]{0})}", 12, "a physical shape P(...) is only for a sparse layout");
  ExpectLayoutError("f32[2]{0:S(1)E(32)}", 13, "layout item 'E' repeated or out of order");
  ExpectLayoutError("f32[2]{0:S(1)S(2)}", 13, "repeated or out of order");
  ExpectLayoutError("f32[2]{0:Q(1)}", 9, "unknown layout item 'Q'");
  ExpectLayoutError("f32[2]{0:#(s32)}", 11, "expected an unsigned integer type, got 's32'");
  ExpectLayoutError("f32[2]{0:S(-1)}", 11, "negative value in S(...)");
  ExpectLayoutError("f32[2]{0:E(32}", 13, "expected ')' to close E(...)");
}

}  // namespace
}  // namespace hlox
