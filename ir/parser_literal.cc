// Constant literals: scalars, nested arrays ({ {1, 2}, {3, 4} }), tuples ((1, {2, 3})),
// complex values ((re, im)), pred true/false, nan/-nan/nan(0x..)/inf/-inf, and elided values
// ({...}). Values are range-checked for integer types; the element count must fit the text,
// so a huge declared shape cannot allocate memory the text does not account for.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"
#include "ir/small_float.h"

namespace hlox::parser_internal {
namespace {

bool SupportedConstantType(PrimitiveType t) { return IsArrayType(t); }

// Widest NaN payload each type keeps (its mantissa without the quiet bit's position counted).
uint64_t NanPayloadMask(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF64: return (uint64_t{1} << 52) - 1;
    case PrimitiveType::kF32: return 0x7fffff;
    case PrimitiveType::kF16: return 0x3ff;
    case PrimitiveType::kBF16: return 0x7f;
    default: return 0;  // hlox keeps no payloads for the small floats
  }
}

std::string OutOfRange(std::string_view text, PrimitiveType t, double max) {
  return absl::StrCat("value ", std::string(text), " is out of range for ", std::string(PrimitiveTypeName(t)),
                      " (largest finite value ", max, ")");
}

// Sum of element counts over the leaves of a shape (saturating).
int64_t LeafElements(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) n = std::min(kMaxElements, n + LeafElements(e));
    return n;
  }
  return s.ElementCount();
}

}  // namespace

absl::Status Parser::ParseLiteral(const Shape& shape, Literal* out) {
  // Older dumps write a shape before a literal (e.g. tuple elements "f32[2] {1, 2}"); skip it.
  std::string_view word = lex_.PeekName();
  if (lex_.Peek() != '%' && ParsePrimitiveType(word).has_value()) {
    size_t after = static_cast<size_t>(word.data() - lex_.text().data()) + word.size();
    if (after < lex_.text().size() && lex_.text()[after] == '[') {
      Shape ignored;
      HLOX_RETURN_IF_ERROR(ParseShape(&ignored));
    }
  }
  size_t start = lex_.SkipSpace();
  if (lex_.TryConsume('{')) {
    if (lex_.TryConsume("...") && lex_.TryConsume('}')) {  // elided: {...}
      *out = Literal::Elided(shape);
      return absl::OkStatus();
    }
    lex_.set_pos(start);
  }
  size_t remaining = lex_.text().size() - start;
  if (LeafElements(shape) > static_cast<int64_t>(remaining)) {
    return lex_.Error(absl::StrCat("constant of shape ", shape.ToString(),
                                   " has more elements than the text can hold"));
  }
  if (shape.IsToken() || (!shape.IsTuple() && !SupportedConstantType(shape.element_type()))) {
    return lex_.Error(absl::StrCat("constants of type ", shape.ToString(), " are not supported"));
  }
  if (shape.IsTuple()) {
    Literal lit(shape);
    HLOX_RETURN_IF_ERROR(lex_.Expect('(', "to open a tuple constant"));
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (i > 0) HLOX_RETURN_IF_ERROR(lex_.Expect(',', "between tuple constant elements"));
      HLOX_RETURN_IF_ERROR(ParseLiteral(shape.tuple_shape(i), &lit.tuple_elements()[i]));
    }
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close a tuple constant"));
    *out = std::move(lit);
    return absl::OkStatus();
  }
  Literal lit(shape);
  if (shape.rank() == 0) {
    HLOX_RETURN_IF_ERROR(ParseScalar(&lit, 0));
  } else {
    int64_t index = 0;
    HLOX_RETURN_IF_ERROR(ParseArrayLevel(&lit, 0, &index));
  }
  *out = std::move(lit);
  return absl::OkStatus();
}

absl::Status Parser::ParseArrayLevel(Literal* lit, int64_t dim, int64_t* index) {
  const Shape& shape = lit->shape();
  if (!lex_.TryConsume('{')) return lex_.Error(absl::StrCat("expected '{' to open dimension ", dim, " of the constant"));
  if (shape.ElementCount() == 0 && lex_.TryConsume('}')) return absl::OkStatus();
  int64_t n = shape.dim(dim);
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0 && !lex_.TryConsume(',')) {
      return lex_.Error(absl::StrCat("expected ',' in dimension ", dim, " of the constant (expected ", n, " elements)"));
    }
    if (dim + 1 == shape.rank()) {
      HLOX_RETURN_IF_ERROR(ParseScalar(lit, (*index)++));
    } else {
      HLOX_RETURN_IF_ERROR(ParseArrayLevel(lit, dim + 1, index));
    }
  }
  if (lex_.TryConsume('}')) return absl::OkStatus();
  return lex_.Error(absl::StrCat("expected '}' after ", n, " elements in dimension ", dim, " of the constant"));
}

absl::Status Parser::ParseFloatText(double* out, bool* is_nan_payload, uint64_t* payload) {
  size_t start = lex_.SkipSpace();
  std::string_view t = lex_.PeekNumberText();
  if (t.empty()) return lex_.Error("expected a number");
  *is_nan_payload = false;
  bool neg = t[0] == '-';
  std::string_view body = (t[0] == '-' || t[0] == '+') ? t.substr(1) : t;
  if (body.substr(0, 3) == "inf") {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  } else if (body.substr(0, 3) == "nan") {
    *out = neg ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
    if (body.size() > 3) {  // nan(0xHEX)
      std::string_view hex = body.substr(4, body.size() - 5);
      if (hex.substr(0, 2) != "0x") return lex_.ErrorAt(start, "expected nan(0x...)");
      auto [p, ec] = std::from_chars(hex.data() + 2, hex.data() + hex.size(), *payload, 16);
      if (ec != std::errc() || p != hex.data() + hex.size() || *payload == 0) {
        return lex_.ErrorAt(start, "invalid NaN payload");
      }
      *is_nan_payload = true;
    }
  } else {
    const char* b = t.data() + (t[0] == '+' ? 1 : 0);
    auto [p, ec] = std::from_chars(b, t.data() + t.size(), *out);
    if (ec == std::errc::result_out_of_range) {
      // Underflow rounds to zero or a subnormal (as XLA reads it); overflow is an error.
      *out = std::strtod(std::string(t).c_str(), nullptr);
      if (std::isinf(*out)) {
        return lex_.ErrorAt(start, absl::StrCat("value ", std::string(t), " is out of range for f64"));
      }
    } else if (ec != std::errc() || p != t.data() + t.size()) {
      return lex_.ErrorAt(start, "invalid number");
    }
  }
  lex_.set_pos(start + t.size());
  return absl::OkStatus();
}

absl::Status Parser::ParseScalar(Literal* lit, int64_t index) {
  PrimitiveType type = lit->shape().element_type();
  size_t start = lex_.SkipSpace();
  if (type == PrimitiveType::kPred) {
    if (lex_.TryConsumeWord("true")) {
      lit->SetFromInt64(index, 1);
    } else if (lex_.TryConsumeWord("false")) {
      lit->SetFromInt64(index, 0);
    } else {
      int64_t v;
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, "pred value"));
      if (v != 0 && v != 1) return lex_.ErrorAt(start, "pred value must be true, false, 0 or 1");
      lit->SetFromInt64(index, v);
    }
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    std::string_view t = lex_.PeekNumberText();
    bool neg = !t.empty() && t[0] == '-';
    int bits = PrimitiveBitWidth(type);
    if (IsUnsignedInt(type)) {
      if (neg) return lex_.Error(absl::StrCat("negative value for ", std::string(PrimitiveTypeName(type))));
      uint64_t v = 0;
      const char* b = t.data() + (!t.empty() && t[0] == '+' ? 1 : 0);
      auto [p, ec] = std::from_chars(b, t.data() + t.size(), v);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
        return lex_.Error(absl::StrCat("expected an integer of type ", std::string(PrimitiveTypeName(type))));
      }
      if (bits < 64 && v >> bits) return lex_.ErrorAt(start, "integer constant out of range");
      lit->SetFromUint64(index, v);
    } else {
      int64_t v = 0;
      auto [p, ec] = std::from_chars(t.data() + (!t.empty() && t[0] == '+' ? 1 : 0), t.data() + t.size(), v);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size()) {
        return lex_.Error(absl::StrCat("expected an integer of type ", std::string(PrimitiveTypeName(type))));
      }
      if (bits < 64) {
        int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
        if (v < lo || v > hi) return lex_.ErrorAt(start, "integer constant out of range");
      }
      lit->SetFromInt64(index, v);
    }
    lex_.set_pos(start + t.size());
    return absl::OkStatus();
  }
  if (IsComplex(type)) {
    double re, im;
    bool pl;
    uint64_t payload;
    HLOX_RETURN_IF_ERROR(lex_.Expect('(', "to open a complex value"));
    size_t re_pos = lex_.SkipSpace();
    HLOX_RETURN_IF_ERROR(ParseFloatText(&re, &pl, &payload));
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', "in a complex value"));
    size_t im_pos = lex_.SkipSpace();
    HLOX_RETURN_IF_ERROR(ParseFloatText(&im, &pl, &payload));
    HLOX_RETURN_IF_ERROR(lex_.Expect(')', "to close a complex value"));
    // c64 parts are floats: a finite part must stay finite (f64 overflow is caught above).
    for (auto [part, pos] : {std::pair{re, re_pos}, std::pair{im, im_pos}}) {
      if (type == PrimitiveType::kC64 && std::isfinite(part) && std::isinf(static_cast<float>(part))) {
        return lex_.ErrorAt(pos, absl::StrCat("value ", part, " is out of range for the f32 parts of c64"));
      }
    }
    lit->SetFromComplex(index, {re, im});
    return absl::OkStatus();
  }
  return ParseRealScalar(lit, index);
}

absl::Status Parser::ParseRealScalar(Literal* lit, int64_t index) {
  PrimitiveType type = lit->shape().element_type();
  size_t start = lex_.SkipSpace();
  double v;
  bool has_payload;
  uint64_t payload = 0;
  HLOX_RETURN_IF_ERROR(ParseFloatText(&v, &has_payload, &payload));
  std::string_view t = lex_.text().substr(start, lex_.pos() - start);
  bool neg = !t.empty() && t[0] == '-';
  if (has_payload && payload > NanPayloadMask(type)) {
    return lex_.ErrorAt(start, absl::StrCat("NaN payload 0x", absl::Hex(payload), " does not fit ",
                                            std::string(PrimitiveTypeName(type))));
  }
  uint8_t* d = lit->data();
  if (std::optional<SmallFloatFormat> f = SmallFloatFormatOf(type)) {
    absl::StatusOr<uint8_t> code = SmallFloatEncode(*f, v, std::string(PrimitiveTypeName(type)));
    if (!code.ok()) return lex_.ErrorAt(start, std::string(code.status().message()));
    d[index] = *code;
    return absl::OkStatus();
  }
  // A finite value must round to a finite value of the type (XLA's rule); text for a float
  // is converted from the text itself, not from the double, to round only once.
  float f = static_cast<float>(v);
  if (std::isfinite(v) && type != PrimitiveType::kF64) {
    auto [p, ec] = std::from_chars(t.data() + (t[0] == '+' ? 1 : 0), t.data() + t.size(), f);
    (void)p;
    if (ec == std::errc::result_out_of_range && std::fabs(v) > 1) {
      return lex_.ErrorAt(start, OutOfRange(t, type, std::numeric_limits<float>::max()));
    }
    if (ec == std::errc::result_out_of_range) f = static_cast<float>(v);
  }
  switch (type) {
    case PrimitiveType::kF32:
      if (has_payload) {
        f = std::bit_cast<float>((neg ? 0x80000000u : 0u) | 0x7f800000u | static_cast<uint32_t>(payload));
      }
      std::memcpy(d + index * 4, &f, 4);
      return absl::OkStatus();
    case PrimitiveType::kF64:
      if (has_payload) v = std::bit_cast<double>((neg ? uint64_t{1} << 63 : 0) | (uint64_t{0x7ff} << 52) | payload);
      std::memcpy(d + index * 8, &v, 8);
      return absl::OkStatus();
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16: {
      bool half = type == PrimitiveType::kF16;
      uint16_t h = half ? FloatToHalf(f) : FloatToBf16(f);
      if (has_payload) {
        h = static_cast<uint16_t>((neg ? 0x8000 : 0) | (half ? 0x7c00 : 0x7f80) | payload);
      } else if (std::isfinite(v) && (h & 0x7fff) == (half ? 0x7c00 : 0x7f80)) {
        return lex_.ErrorAt(start, OutOfRange(t, type, half ? 65504.0 : 3.3895313892515355e38));
      }
      std::memcpy(d + index * 2, &h, 2);
      return absl::OkStatus();
    }
    default:
      lit->SetFromDouble(index, v);
      return absl::OkStatus();
  }
}

}  // namespace hlox::parser_internal
