// Constants of every element type XLA has, read as XLA reads them: the f8 family and f4e2m1fn
// with their own infinities and NaNs (or none), sub-byte integers, and values that overflow
// their type rejected at the value's column, while values that underflow round to zero.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::ParseRoundTrip;

std::string ConstantModule(const std::string& shape, const std::string& value) {
  return "HloModule m\nENTRY e {\n  ROOT c = " + shape + " constant(" + value + ")\n}\n";
}

// The raw bytes of the constant `value` of `shape`, after checking it round-trips.
std::vector<uint8_t> ConstantBytes(const std::string& shape, const std::string& value) {
  auto m = ParseRoundTrip(ConstantModule(shape, value));
  if (!m) return {};
  const Literal& lit = m->entry()->root()->literal();
  return std::vector<uint8_t>(lit.data(), lit.data() + lit.shape().ByteSize());
}

// The constant's value starts at column 22 + the shape's length on line 3.
void ExpectConstantError(const std::string& shape, const std::string& value, const std::string& part,
                         int col_in_value = 0) {
  ExpectParseError(ConstantModule(shape, value), 3, 22 + static_cast<int>(shape.size()) + col_in_value, part);
}

using Bytes = std::vector<uint8_t>;

TEST(ParserConstants, F8VariantsEncodeAsXlaDoes) {
  EXPECT_EQ(ConstantBytes("f8e4m3fn[4]", "{1, -2.5, 448, nan}"), (Bytes{0x38, 0xc2, 0x7e, 0x7f}));
  EXPECT_EQ(ConstantBytes("f8e5m2[4]", "{inf, -inf, 57344, -0}"), (Bytes{0x7c, 0xfc, 0x7b, 0x80}));
  EXPECT_EQ(ConstantBytes("f8e4m3fnuz[3]", "{nan, 240, 0.5}"), (Bytes{0x80, 0x7f, 0x38}));
  EXPECT_EQ(ConstantBytes("f8e4m3b11fnuz[2]", "{30, -nan}"), (Bytes{0x7f, 0x80}));
  EXPECT_EQ(ConstantBytes("f8e5m2fnuz[2]", "{57344, 1}"), (Bytes{0x7f, 0x40}));
  EXPECT_EQ(ConstantBytes("f8e3m4[3]", "{15.5, inf, 1}"), (Bytes{0x6f, 0x70, 0x30}));
  EXPECT_EQ(ConstantBytes("f8e4m3[3]", "{240, -inf, nan}"), (Bytes{0x77, 0xf8, 0x7c}));
  EXPECT_EQ(ConstantBytes("f4e2m1fn[3]", "{6, -0.5, 1.5}"), (Bytes{0x7, 0x9, 0x3}));
  EXPECT_EQ(ConstantBytes("f8e8m0fnu[3]", "{1, 0.25, nan}"), (Bytes{0x7f, 0x7d, 0xff}));
  // Round half to even: 464 lies halfway between 448 (0x7e, even) and 480 (not finite).
  EXPECT_EQ(ConstantBytes("f8e4m3fn[]", "464"), (Bytes{0x7e}));
  // Underflow rounds to zero, keeping the sign.
  EXPECT_EQ(ConstantBytes("f8e4m3fn[2]", "{1e-9, -1e-9}"), (Bytes{0x00, 0x80}));
}

// A negative NaN keeps its sign through print and parse in the types whose NaN has one (XLA's
// round-trip case ConstantNonFiniteE4M3 writes {nan, 7, -nan}); the fnuz types have one NaN.
TEST(ParserConstants, F8NegativeNanRoundTrips) {
  EXPECT_EQ(ConstantBytes("f8e4m3fn[3]", "{nan, 7, -nan}"), (Bytes{0x7f, 0x4e, 0xff}));
  EXPECT_EQ(ConstantBytes("f8e5m2[2]", "{-nan, nan}"), (Bytes{0xfe, 0x7e}));
  EXPECT_EQ(ConstantBytes("f8e4m3[1]", "{-nan}"), (Bytes{0xfc}));
  EXPECT_EQ(ConstantBytes("f8e3m4[1]", "{-nan}"), (Bytes{0xf8}));
  EXPECT_EQ(ConstantBytes("f8e4m3b11fnuz[1]", "{-nan}"), (Bytes{0x80}));
  auto m = ParseRoundTrip(ConstantModule("f8e4m3fn[3]", "{nan, 7, -nan}"));
  ASSERT_TRUE(m);
  EXPECT_NE(PrintModule(*m).find("{nan, 7, -nan}"), std::string::npos) << PrintModule(*m);
}

TEST(ParserConstants, F8ValuesTheTypeCannotHoldAreErrors) {
  ExpectConstantError("f8e4m3fn[]", "inf", "f8e4m3fn has no infinity");
  ExpectConstantError("f8e4m3fnuz[]", "-inf", "f8e4m3fnuz has no infinity");
  ExpectConstantError("f4e2m1fn[]", "nan", "f4e2m1fn has no NaN");
  ExpectConstantError("f8e4m3fn[]", "465", "value 465 is out of range for f8e4m3fn");
  ExpectConstantError("f8e5m2[]", "61440", "out of range for f8e5m2");
  ExpectConstantError("f4e2m1fn[]", "7", "out of range for f4e2m1fn");
  ExpectConstantError("f8e8m0fnu[]", "-1", "out of range for f8e8m0fnu");
  ExpectConstantError("f8e5m2[]", "nan(0x1)", "NaN payload 0x1 does not fit f8e5m2");
  ExpectConstantError("f8e4m3fn[2]", "{1, inf}", "has no infinity", 4);
}

TEST(ParserConstants, SubByteIntegers) {
  EXPECT_EQ(ConstantBytes("s4[3]", "{-8, 7, 0}"), (Bytes{0xf8, 0x07, 0x00}));
  EXPECT_EQ(ConstantBytes("u4[2]", "{15, 0}"), (Bytes{0x0f, 0x00}));
  EXPECT_EQ(ConstantBytes("s2[2]", "{-2, 1}"), (Bytes{0xfe, 0x01}));
  EXPECT_EQ(ConstantBytes("u2[]", "3"), (Bytes{0x03}));
  ExpectConstantError("s4[]", "8", "out of range");
  ExpectConstantError("s4[]", "-9", "out of range");
  ExpectConstantError("u4[]", "16", "out of range");
  ExpectConstantError("s2[]", "2", "out of range");
  ExpectConstantError("u2[]", "4", "out of range");
}

uint16_t Half(const std::vector<uint8_t>& b) { return b.size() == 2 ? static_cast<uint16_t>(b[0] | b[1] << 8) : 0; }

TEST(ParserConstants, OverflowIsAnErrorUnderflowRoundsToZero) {
  EXPECT_EQ(Half(ConstantBytes("f16[]", "65504")), 0x7bff);
  EXPECT_EQ(Half(ConstantBytes("f16[]", "65519")), 0x7bff);  // rounds down to the largest
  EXPECT_EQ(Half(ConstantBytes("f16[]", "inf")), 0x7c00);    // written infinities stay
  EXPECT_EQ(Half(ConstantBytes("f16[]", "1e-9")), 0x0000);
  ExpectConstantError("f16[]", "65520", "value 65520 is out of range for f16 (largest finite value 65504)");
  ExpectConstantError("f16[]", "-1e5", "out of range for f16");
  ExpectConstantError("bf16[]", "3.4e38", "out of range for bf16");
  EXPECT_EQ(Half(ConstantBytes("bf16[]", "3.39e38")), 0x7f7f);  // rounds down to the largest
  ExpectConstantError("f32[]", "3.5e38", "out of range for f32");
  ExpectConstantError("f32[2]", "{1, -1e39}", "out of range for f32", 4);
  EXPECT_EQ(ConstantBytes("f32[]", "1e-50"), (Bytes{0, 0, 0, 0}));
  ExpectConstantError("f64[]", "1e309", "value 1e309 is out of range for f64");
  EXPECT_EQ(ConstantBytes("f64[]", "-1e-400"), (Bytes{0, 0, 0, 0, 0, 0, 0, 0x80}));
  ExpectConstantError("c64[]", "(1, 1e39)", "out of range for the f32 parts of c64", 4);
  ExpectConstantError("c128[]", "(1e999, 0)", "out of range for f64", 1);
}

TEST(ParserConstants, NanPayloadsMustFitTheMantissa) {
  EXPECT_EQ(ConstantBytes("f32[]", "nan(0x7fffff)"), (Bytes{0xff, 0xff, 0xff, 0x7f}));
  EXPECT_EQ(Half(ConstantBytes("f16[]", "-nan(0x3ff)")), 0xffff);
  ExpectConstantError("f32[]", "nan(0x800000)", "NaN payload 0x800000 does not fit f32");
  ExpectConstantError("f16[]", "nan(0x400)", "does not fit f16");
  ExpectConstantError("bf16[]", "nan(0x80)", "does not fit bf16");
  ExpectConstantError("f64[]", "nan(0x10000000000000)", "does not fit f64");
}

}  // namespace
}  // namespace hlox
