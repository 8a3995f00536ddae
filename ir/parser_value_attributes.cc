// The attributes that describe an instruction's value rather than its computation, parsed into
// typed forms as XLA's parser reads them: statistics={visualizing_index=N, name=value, ...}
// (StatisticsViz) and origin={...} / original_value={...} (OriginalValue, a tree of
// {"instruction" {shape index}} leaves shaped like the result). Malformed values are errors
// at their column.
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

// XLA reads statistic names as attribute names: a letter or '_' first.
bool StartsLikeAttributeName(std::string_view text, size_t pos) {
  if (pos >= text.size()) return false;
  char c = text[pos];
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

std::string IndexText(const std::vector<int64_t>& index) { return absl::StrCat("{", absl::StrJoin(index, ","), "}"); }

// Empty when `v` has the structure of `shape`; otherwise what differs, at which tuple index.
std::string OriginalValueMismatch(const OriginalValue& v, const Shape& shape, std::vector<int64_t>* at) {
  if (v.is_tuple != shape.IsTuple()) {
    return absl::StrCat("origin has ", v.is_tuple ? "a tuple" : "an array leaf", " at index ", IndexText(*at),
                        " where the shape has ", shape.ToString());
  }
  if (!v.is_tuple) return "";
  if (static_cast<int64_t>(v.elements.size()) != shape.tuple_size()) {
    return absl::StrCat("origin has a tuple of ", v.elements.size(), " elements at index ", IndexText(*at),
                        " where the shape has ", shape.tuple_size(), ": ", shape.ToString());
  }
  for (size_t i = 0; i < v.elements.size(); ++i) {
    at->push_back(static_cast<int64_t>(i));
    std::string m = OriginalValueMismatch(v.elements[i], shape.tuple_shape(static_cast<int64_t>(i)), at);
    if (!m.empty()) return m;
    at->pop_back();
  }
  return "";
}

}  // namespace

// statistics ::= '{' '}' | '{' 'visualizing_index' '=' int (',' name '=' number)* '}'
// XLA takes any name before the index and prints visualizing_index; hlox requires that name
// (XLA's own grammar comment), so a misspelt key is not silently renamed.
absl::Status Parser::ParseStatistics(StatisticsViz* out) {
  *out = StatisticsViz{};
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open statistics"));
  if (lex_.TryConsume('}')) return absl::OkStatus();
  size_t key_pos = lex_.SkipSpace();
  std::string_view key = lex_.ConsumeName();
  if (key != "visualizing_index") {
    return lex_.ErrorAt(key_pos, absl::StrCat("statistics must start with visualizing_index=N, not '",
                                              std::string(key), "'"));
  }
  HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after visualizing_index"));
  size_t index_pos = lex_.SkipSpace();
  std::string_view index_text = lex_.PeekNumberText();
  if (index_text.empty() || index_text.find_first_not_of("-0123456789") != std::string_view::npos) {
    return lex_.ErrorAt(index_pos, "visualizing_index must be an integer");
  }
  HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&out->visualizing_index, "visualizing_index"));
  while (lex_.TryConsume(',')) {
    Statistic stat;
    size_t name_pos = lex_.SkipSpace();
    if (!StartsLikeAttributeName(lex_.text(), name_pos)) {
      return lex_.ErrorAt(name_pos, "expected a statistic name (a letter or '_' first) after ','");
    }
    stat.name = std::string(lex_.ConsumeName());
    HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after a statistic name"));
    size_t value_pos = lex_.SkipSpace();
    std::string_view t = lex_.PeekNumberText();
    // XLA takes an integer or decimal token here: no sign '+', no inf or nan.
    if (t.empty() || t[0] == '+' || t.find_first_of("ni") != std::string_view::npos) {
      return lex_.ErrorAt(value_pos, absl::StrCat("statistic '", stat.name, "' needs a finite number"));
    }
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), stat.value);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(stat.value)) {
      return lex_.ErrorAt(value_pos, absl::StrCat("statistic '", stat.name, "' is out of range for a double"));
    }
    lex_.set_pos(value_pos + t.size());
    out->statistics.push_back(std::move(stat));
  }
  return lex_.Expect('}', "or ',' to close statistics");
}

// origin ::= '{' ('[' 'synthetic_call' ']' | node) '}'
absl::Status Parser::ParseOriginalValue(OriginalValue* out) {
  *out = OriginalValue{};
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open origin"));
  if (lex_.TryConsume('[')) {
    size_t pos = lex_.SkipSpace();
    if (lex_.ConsumeName() != "synthetic_call") return lex_.ErrorAt(pos, "expected synthetic_call after '[' in origin");
    HLOX_RETURN_IF_ERROR(lex_.Expect(']', "after synthetic_call"));
    out->synthetic_call = true;
  } else {
    HLOX_RETURN_IF_ERROR(ParseOriginalValueNode(out, 0));
  }
  return lex_.Expect('}', "to close origin");
}

// node ::= '(' (node (',' node)*)? ')' | '{' (string shape_index?)? '}'
// An empty name reads as an empty leaf, as in XLA.
absl::Status Parser::ParseOriginalValueNode(OriginalValue* out, int depth) {
  if (depth > kMaxShapeDepth) return lex_.Error("origin is nested too deeply");
  if (lex_.TryConsume('(')) {
    out->is_tuple = true;
    if (lex_.TryConsume(')')) return absl::OkStatus();
    while (true) {
      out->elements.emplace_back();
      HLOX_RETURN_IF_ERROR(ParseOriginalValueNode(&out->elements.back(), depth + 1));
      if (lex_.TryConsume(')')) return absl::OkStatus();
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in an origin tuple"));
    }
  }
  if (!lex_.TryConsume('{')) {
    return lex_.Error("expected '(' for a tuple or '{' for an original array such as {\"name\" {0}} in origin");
  }
  if (lex_.TryConsume('}')) return absl::OkStatus();
  if (lex_.Peek() != '"') return lex_.Error("expected a quoted instruction name or '}' in an original array");
  OriginalArray array;
  HLOX_RETURN_IF_ERROR(lex_.ConsumeString(&array.instruction_name));
  if (lex_.Peek() == '{') HLOX_RETURN_IF_ERROR(ParseShapeIndex(&array.shape_index));
  HLOX_RETURN_IF_ERROR(lex_.Expect('}', "to close an original array"));
  if (!array.instruction_name.empty()) out->leaf = std::move(array);
  return absl::OkStatus();
}

// XLA builds the tree on the instruction's shape: a leaf at an index the shape lacks is fatal
// there (older parsers) or yields a value of another shape (newer ones). hlox requires the
// tree to have the shape's structure exactly: a tuple of as many elements per tuple, a leaf
// per array.
absl::Status Parser::CheckOriginalValue(const OriginalValue& v, const Shape& shape, size_t pos) {
  if (v.synthetic_call) return absl::OkStatus();
  std::vector<int64_t> at;
  std::string mismatch = OriginalValueMismatch(v, shape, &at);
  if (!mismatch.empty()) return lex_.ErrorAt(pos, mismatch);
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
