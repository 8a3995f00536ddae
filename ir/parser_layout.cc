// Layout items after ':' in XLA's fixed order: D(dim level types) T(tiles) L(tail padding
// alignment) #(index type) *(pointer type) E(element size in bits) S(memory space)
// SC(split configs) P(physical shape) M(dynamic shape metadata prefix bytes). Each is typed;
// an unknown item, one out of order or repeated, or a malformed value is an error.
#include <array>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

constexpr std::array<std::string_view, 10> kItemOrder = {"D", "T", "L", "#", "*", "E", "S", "SC", "P", "M"};

}  // namespace

absl::Status Parser::ParseLayoutItems(Layout* l, int depth) {
  size_t next = 0;  // items before kItemOrder[next] may no longer appear
  while (lex_.Peek() != '}' && !lex_.AtEnd()) {
    size_t pos = lex_.SkipSpace();
    std::string_view item;
    if (lex_.Peek() == '#' || lex_.Peek() == '*') {
      item = lex_.text().substr(pos, 1);
      lex_.set_pos(pos + 1);
    } else {
      item = lex_.ConsumeName();
    }
    size_t k = 0;
    while (k < kItemOrder.size() && kItemOrder[k] != item) ++k;
    if (k == kItemOrder.size()) {
      return lex_.ErrorAt(
          pos, absl::StrCat("unknown layout item '", std::string(item), "' (XLA's are D T L # * E S SC P M)"));
    }
    if (k < next) {
      return lex_.ErrorAt(pos, absl::StrCat("layout item '", std::string(item),
                                            "' repeated or out of order (XLA's order is D T L # * E S SC P M)"));
    }
    next = k + 1;
    switch (k) {
      case 0:
        HLOX_RETURN_IF_ERROR(ParseDimLevels(l));
        break;
      case 1:
        HLOX_RETURN_IF_ERROR(ParseTiles(l));
        break;
      case 2:
        HLOX_RETURN_IF_ERROR(ParseLayoutInt(&l->tail_padding_alignment, "L"));
        break;
      case 3:
        HLOX_RETURN_IF_ERROR(ParseUnsignedType(&l->index_type));
        break;
      case 4:
        HLOX_RETURN_IF_ERROR(ParseUnsignedType(&l->pointer_type));
        break;
      case 5:
        HLOX_RETURN_IF_ERROR(ParseLayoutInt(&l->element_size_in_bits, "E"));
        break;
      case 6:
        HLOX_RETURN_IF_ERROR(ParseLayoutInt(&l->memory_space, "S"));
        break;
      case 7:
        HLOX_RETURN_IF_ERROR(ParseSplitConfigs(l));
        break;
      case 8: {
        HLOX_RETURN_IF_ERROR(lex_.Expect('(', "after P"));
        Shape physical;
        HLOX_RETURN_IF_ERROR(ParseShape(&physical, depth + 1));
        HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close the physical shape"));
        l->physical_shape = physical.ToString();
        break;
      }
      default:
        HLOX_RETURN_IF_ERROR(ParseLayoutInt(&l->dynamic_shape_metadata_prefix_bytes, "M"));
        break;
    }
  }
  return absl::OkStatus();
}

// D(level, ...) with level ::= (D|C|S|H) '+'? '~'?; a dense level is always unique and ordered.
absl::Status Parser::ParseDimLevels(Layout* l) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('(', "after D"));
  while (true) {
    size_t pos = lex_.SkipSpace();
    std::string_view w = lex_.ConsumeName();
    if (w != "D" && w != "C" && w != "S" && w != "H") {
      return lex_.ErrorAt(pos,
                          absl::StrCat("unknown dimension level type '", std::string(w), "': expected D, C, S or H"));
    }
    DimLevel d{w[0], !lex_.TryConsume('+'), true};
    d.ordered = !lex_.TryConsume('~');
    if (d.type == 'D' && (!d.unique || !d.ordered)) {
      return lex_.ErrorAt(pos, "a dense dimension level is always unique and ordered");
    }
    if (l->dim_levels.size() >= static_cast<size_t>(kMaxRank)) return lex_.ErrorAt(pos, "too many dimension levels");
    l->dim_levels.push_back(d);
    if (lex_.TryConsume(')')) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in dimension level types"));
  }
}

// T(a,b)(c,d)...: dimensions are sizes or '*' (combine), stored as -1.
absl::Status Parser::ParseTiles(Layout* l) {
  if (lex_.Peek() != '(') return lex_.Error("expected '(' after T");
  while (lex_.TryConsume('(')) {
    Tile tile;
    while (true) {
      if (tile.dims.size() >= static_cast<size_t>(kMaxRank)) return lex_.Error("tile rank too large");
      if (lex_.TryConsume('*')) {
        tile.dims.push_back(-1);
      } else {
        int64_t d;
        size_t d_pos = lex_.SkipSpace();
        HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d, "tile dimension"));
        if (d < 0) return lex_.ErrorAt(d_pos, "negative tile dimension");
        tile.dims.push_back(d);
      }
      if (lex_.TryConsume(')')) break;
      HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or ')' in a tile"));
    }
    l->tiles.push_back(std::move(tile));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseLayoutInt(int64_t* out, std::string_view what) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('(', absl::StrCat("after ", std::string(what))));
  size_t pos = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(out, "layout value"));
  if (*out < 0) return lex_.ErrorAt(pos, absl::StrCat("negative value in ", std::string(what), "(...)"));
  return lex_.Expect(')', absl::StrCat("to close ", std::string(what), "(...)"));
}

absl::Status Parser::ParseUnsignedType(std::optional<PrimitiveType>* out) {
  HLOX_RETURN_IF_ERROR(lex_.Expect('(', "after # or *"));
  size_t pos = lex_.SkipSpace();
  std::string_view w = lex_.ConsumeName();
  std::optional<PrimitiveType> t = ParsePrimitiveType(w);
  if (!t || !IsUnsignedInt(*t)) {
    return lex_.ErrorAt(pos, absl::StrCat("expected an unsigned integer type, got '", std::string(w), "'"));
  }
  *out = t;
  return lex_.Expect(')', "to close the type");
}

// SC(dim:i,j,...)(dim:...)...
absl::Status Parser::ParseSplitConfigs(Layout* l) {
  if (lex_.Peek() != '(') return lex_.Error("expected '(' after SC");
  while (lex_.TryConsume('(')) {
    SplitConfig c;
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&c.dimension, "split dimension"));
    HLOX_RETURN_IF_ERROR(lex_.Expect(':', "after the split dimension"));
    while (!lex_.TryConsume(')')) {
      if (!c.split_indices.empty()) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between split indices"));
      int64_t v;
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, "split index"));
      c.split_indices.push_back(v);
    }
    l->split_configs.push_back(std::move(c));
  }
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
