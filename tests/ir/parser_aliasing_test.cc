// The module header's input_output_alias and buffer_donor: typed, checked against the entry
// computation as XLA checks them, and printed back as written.
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "tests/ir/parse_test_util.h"

namespace hlox {
namespace {

using testing_ir::ExpectParseError;
using testing_ir::ParseRoundTrip;

// A module whose entry takes (f32[4], (f32[4], s32[2])) and returns (f32[4], f32[4], s32[2]).
std::string WithHeader(const std::string& header) {
  return "HloModule m, " + header + R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = (f32[4], s32[2]) parameter(1)
  b0 = f32[4] get-tuple-element(b), index=0
  b1 = s32[2] get-tuple-element(b), index=1
  ROOT t = (f32[4], f32[4], s32[2]) tuple(a, b0, b1)
}
)";
}

TEST(ParserAliasing, AliasesAndDonorsAreTyped) {
  auto m = ParseRoundTrip(
      WithHeader("input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {0}, must-alias), {2}: (1, {1}) }"));
  ASSERT_TRUE(m);
  ASSERT_EQ(m->input_output_aliases().size(), 3u);
  const InputOutputAlias& a1 = m->input_output_aliases()[1];
  EXPECT_EQ(a1.output_index, (std::vector<int64_t>{1}));
  EXPECT_EQ(a1.parameter_number, 1);
  EXPECT_EQ(a1.parameter_index, (std::vector<int64_t>{0}));
  EXPECT_TRUE(a1.must_alias);
  EXPECT_FALSE(m->input_output_aliases()[0].must_alias);
  EXPECT_FALSE(m->input_output_aliases()[2].must_alias);
  auto donors = ParseRoundTrip(WithHeader("buffer_donor={ (1, {1}), (0, {}) }"));
  ASSERT_TRUE(donors);
  ASSERT_EQ(donors->buffer_donors().size(), 2u);
  EXPECT_EQ(donors->buffer_donors()[0].parameter_number, 1);
  EXPECT_EQ(donors->buffer_donors()[0].parameter_index, (std::vector<int64_t>{1}));
  ASSERT_TRUE(ParseRoundTrip(WithHeader("input_output_alias={}, buffer_donor={}")));
}

// Every error is on line 1; `col` is the column of the entry (or token) at fault.
void ExpectHeaderError(const std::string& header, int col, const std::string& part) {
  ExpectParseError(WithHeader(header), 1, col, part);
}

TEST(ParserAliasing, MalformedEntriesAreRejected) {
  // Columns count from 1; "HloModule m, " is 13 characters.
  ExpectHeaderError("input_output_alias={ {0}: (0, {}, maybe) }", 48, "unknown alias kind 'maybe'");
  ExpectHeaderError("input_output_alias={ {0}: (-1, {}) }", 41, "negative parameter number");
  ExpectHeaderError("input_output_alias={ {-1}: (0, {}) }", 36, "negative shape index element");
  ExpectHeaderError("input_output_alias={ {0} (0, {}) }", 39, "expected ':' after the output shape index");
  ExpectHeaderError("input_output_alias={ {0}: (0, {}) {1}: (1, {0}) }", 48, "expected ',' between aliases");
  ExpectHeaderError("buffer_donor={ (0) }", 31, "expected ',' after the parameter number");
  ExpectHeaderError("buffer_donor={}, buffer_donor={}", 31, "module attribute 'buffer_donor' given twice");
}

TEST(ParserAliasing, EntriesMustMatchTheEntryComputation) {
  ExpectHeaderError("input_output_alias={ {3}: (0, {}) }", 35, "the entry's result has no shape index {3}");
  ExpectHeaderError("input_output_alias={ {0,0}: (0, {}) }", 35, "has no shape index {0,0}");
  ExpectHeaderError("input_output_alias={ {0}: (2, {}) }", 35,
                    "parameter 2 does not exist: the entry has 2 parameters");
  ExpectHeaderError("input_output_alias={ {0}: (0, {0}) }", 35, "parameter 0 has no shape index {0}");
  ExpectHeaderError("input_output_alias={ {0}: (1, {}) }", 35, "parameter 1 at {} is not an array");
  ExpectHeaderError("input_output_alias={ {0}: (1, {1}) }", 35, "differ in size");
  ExpectHeaderError("input_output_alias={ {}: (0, {}) }", 35, "differ in size");  // the whole tuple
  ExpectHeaderError("input_output_alias={ {0}: (0, {}), {0}: (1, {0}) }", 49, "output {0} is aliased twice");
  ExpectHeaderError("input_output_alias={ {0}: (0, {}), {1}: (0, {}) }", 49,
                    "parameter 0 at {} is aliased to more than one output");
  ExpectHeaderError("buffer_donor={ (3, {}) }", 29, "parameter 3 does not exist");
  ExpectHeaderError("buffer_donor={ (1, {2}) }", 29, "parameter 1 has no shape index {2}");
  ExpectHeaderError("buffer_donor={ (0, {}), (0, {}) }", 38, "buffer donor listed twice");
  ExpectHeaderError("input_output_alias={ {0}: (0, {}) }, buffer_donor={ (0, {}) }", 66,
                    "is both a buffer donor and aliased to an output");
}

}  // namespace
}  // namespace hlox
