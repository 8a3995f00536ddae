// Shapes and layouts: f32[2,3]{1,0}, tuples, token[], dynamic dims (<=N), layouts (their
// items after ':' are in parser_layout.cc). Rejects negative dims,
// byte sizes that overflow int64, deep tuple nesting and layouts that are not permutations.
#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {

absl::Status Parser::ParseShape(Shape* out, int depth) {
  if (depth > kMaxShapeDepth) return lex_.Error("shape nested too deeply");
  size_t tuple_pos = lex_.SkipSpace();
  if (lex_.TryConsume('(')) {
    std::vector<Shape> elements;
    if (!lex_.TryConsume(')')) {
      while (true) {
        elements.emplace_back();
        HLOX_RETURN_IF_ERROR(ParseShape(&elements.back(), depth + 1));
        if (lex_.TryConsume(')')) break;
        HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in a tuple shape"));
      }
    }
    int64_t bytes = 0;
    for (const Shape& e : elements) {
      if (e.ByteSize() > kMaxShapeBytes - bytes) {
        return lex_.ErrorAt(tuple_pos, "tuple shape's byte size overflows int64");
      }
      bytes += e.ByteSize();
    }
    *out = Shape::Tuple(std::move(elements));
    return absl::OkStatus();
  }
  size_t type_pos = lex_.SkipSpace();
  if (lex_.Peek() == '%') return lex_.Error("expected a shape");
  std::string_view tname = lex_.ConsumeName();
  if (tname.empty()) return lex_.Error("expected a shape");
  std::optional<PrimitiveType> type = ParsePrimitiveType(tname);
  if (!type || *type == PrimitiveType::kTuple) {
    return lex_.ErrorAt(type_pos, absl::StrCat("unknown element type '", std::string(tname), "'"));
  }
  if (!IsArrayType(*type)) {  // token, opaque: "token[]" or "token"
    if (lex_.TryConsume('[')) HLOX_RETURN_IF_ERROR(lex_.Expect(']', "after 'token['"));
    *out = *type == PrimitiveType::kToken ? Shape::Token() : Shape(*type, {});
    return absl::OkStatus();
  }
  HLOX_RETURN_IF_ERROR(lex_.Expect('[', "after the element type"));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  bool any_dynamic = false;
  int64_t count = 1;
  const int64_t elem_bytes = std::max<int64_t>(1, PrimitiveByteSize(*type));
  if (!lex_.TryConsume(']')) {
    while (true) {
      if (static_cast<int64_t>(dims.size()) >= kMaxRank) return lex_.Error("shape rank too large");
      bool dyn = lex_.TryConsume("<=");
      size_t dim_pos = lex_.SkipSpace();
      if (lex_.Peek() == '?') return lex_.Error("unbounded dynamic dimensions are not supported");
      int64_t d;
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d, "dimension size"));
      if (d < 0) return lex_.ErrorAt(dim_pos, "negative dimension size");
      // A declared shape may be huge (nothing is allocated here; the runtime refuses large
      // buffers); only a byte size that overflows int64, as XLA rejects it, is an error.
      if (d > 0 && count > kMaxShapeBytes / elem_bytes / d) {
        return lex_.ErrorAt(dim_pos, "shape's byte size overflows int64");
      }
      count *= d;
      dims.push_back(d);
      dynamic.push_back(dyn);
      any_dynamic = any_dynamic || dyn;
      if (lex_.TryConsume(']')) break;
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ']' in the dimensions"));
    }
  }
  *out = Shape(*type, std::move(dims));
  if (any_dynamic) out->set_dynamic_dims(std::move(dynamic));
  // A layout starts with a digit, '}' or ':' after '{'; anything else (e.g. the body of a
  // computation after its signature's result shape) is not ours.
  if (lex_.Peek() == '{') {
    std::string_view t = lex_.text();
    size_t q = lex_.pos() + 1;
    while (q < t.size() && (t[q] == ' ' || t[q] == '\t')) ++q;
    if (q < t.size() && (std::isdigit(static_cast<unsigned char>(t[q])) || t[q] == '}' || t[q] == ':')) {
      HLOX_RETURN_IF_ERROR(ParseLayout(out, depth));
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseLayout(Shape* shape, int depth) {
  size_t start = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open a layout"));
  Layout layout;
  if (lex_.Peek() != '}' && lex_.Peek() != ':') {
    while (true) {
      int64_t d;
      size_t d_pos = lex_.SkipSpace();
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d, "layout dimension"));
      if (d < 0 || d >= shape->rank()) {
        return lex_.ErrorAt(d_pos, absl::StrCat("layout dimension ", d, " out of range for rank ", shape->rank()));
      }
      for (int64_t prev : layout.minor_to_major) {
        if (prev == d) return lex_.ErrorAt(d_pos, absl::StrCat("layout dimension ", d, " repeated"));
      }
      layout.minor_to_major.push_back(d);
      if (lex_.Peek() != ',') break;
      lex_.TryConsume(',');
    }
  }
  size_t items_pos = lex_.SkipSpace();
  if (lex_.TryConsume(':')) HLOX_RETURN_IF_ERROR(ParseLayoutItems(&layout, depth));
  HLOX_RETURN_IF_ERROR(lex_.Expect('}', "to close the layout"));
  if (!layout.minor_to_major.empty() &&
      static_cast<int64_t>(layout.minor_to_major.size()) != shape->rank()) {
    return lex_.ErrorAt(start, absl::StrCat("layout has ", layout.minor_to_major.size(),
                                            " dimensions but the shape has rank ", shape->rank()));
  }
  if (layout.minor_to_major.empty() && shape->rank() > 0) {
    return lex_.ErrorAt(start, "empty layout for a shape of rank > 0");
  }
  // XLA's rules for sparse layouts: one level per dimension, no tiles, and a physical shape
  // only for a sparse array.
  if (!layout.dim_levels.empty() && static_cast<int64_t>(layout.dim_levels.size()) != shape->rank()) {
    return lex_.ErrorAt(items_pos, absl::StrCat("layout has ", layout.dim_levels.size(),
                                                " dimension level types but the shape has rank ", shape->rank()));
  }
  if (layout.IsSparse() && !layout.tiles.empty()) return lex_.ErrorAt(items_pos, "a sparse layout cannot have tiles");
  if (!layout.IsSparse() && !layout.physical_shape.empty()) {
    return lex_.ErrorAt(items_pos, "a physical shape P(...) is only for a sparse layout");
  }
  shape->set_layout(std::move(layout));
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
