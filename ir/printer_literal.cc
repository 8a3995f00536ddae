// Literal text: shortest round-trip numbers (std::to_chars; f16/bf16 through float), nan,
// -nan, nan(0x..) for non-canonical payloads, inf/-inf, pred true/false, complex (re, im),
// nested braces for arrays, parentheses for tuples and {...} for elided values.
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "ir/printer_internal.h"

namespace hlox {
namespace {

template <typename F>
std::string ShortestFloat(F v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  (void)ec;
  return std::string(buf, p);
}

// NaN spelling: "nan"/"-nan" for the canonical quiet NaN, else "nan(0xPAYLOAD)".
std::string NanText(bool neg, uint64_t payload, uint64_t canonical) {
  std::string s = neg ? "-nan" : "nan";
  if (payload != canonical) {
    char buf[32];
    auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), payload, 16);
    (void)ec;
    absl::StrAppend(&s, "(0x", std::string(buf, p), ")");
  }
  return s;
}

std::string FloatElement(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.shape().element_type();
  switch (t) {
    case PrimitiveType::kF32: {
      float f = lit.Get<float>(i);
      uint32_t b = std::bit_cast<uint32_t>(f);
      if (std::isnan(f)) return NanText(b >> 31, b & 0x7fffff, 0x400000);
      return ShortestFloat(f);
    }
    case PrimitiveType::kF64: {
      double d = lit.Get<double>(i);
      uint64_t b = std::bit_cast<uint64_t>(d);
      if (std::isnan(d)) return NanText(b >> 63, b & ((uint64_t{1} << 52) - 1), uint64_t{1} << 51);
      return ShortestFloat(d);
    }
    case PrimitiveType::kF16: {
      uint16_t h = lit.Get<uint16_t>(i);
      if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) return NanText(h >> 15, h & 0x3ff, 0x200);
      return ShortestFloat(HalfToFloat(h));
    }
    case PrimitiveType::kBF16: {
      uint16_t h = lit.Get<uint16_t>(i);
      if ((h & 0x7f80) == 0x7f80 && (h & 0x7f)) return NanText(h >> 15, h & 0x7f, 0x40);
      return ShortestFloat(Bf16ToFloat(h));
    }
    default: {  // the f8 family and f4e2m1fn (ir/small_float.h); every value fits a float
      double d = lit.GetAsDouble(i);
      if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
      return ShortestFloat(static_cast<float>(d));
    }
  }
}

std::string Element(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.shape().element_type();
  if (t == PrimitiveType::kPred) return lit.Get<uint8_t>(i) ? "true" : "false";
  if (IsUnsignedInt(t)) return std::to_string(lit.GetAsUint64(i));
  if (IsSignedInt(t)) return std::to_string(lit.GetAsInt64(i));
  if (IsComplex(t)) {
    std::complex<double> c = lit.GetAsComplex(i);
    if (t == PrimitiveType::kC64) {
      return absl::StrCat("(", ShortestFloat(static_cast<float>(c.real())), ", ",
                          ShortestFloat(static_cast<float>(c.imag())), ")");
    }
    return absl::StrCat("(", ShortestFloat(c.real()), ", ", ShortestFloat(c.imag()), ")");
  }
  return FloatElement(lit, i);
}

void AppendArray(const Literal& lit, int64_t dim, int64_t* index, std::string* out) {
  out->push_back('{');
  int64_t n = lit.shape().dim(dim);
  for (int64_t i = 0; i < n; ++i) {
    if (i) out->append(", ");
    if (dim + 1 == lit.shape().rank()) {
      out->append(Element(lit, (*index)++));
    } else {
      AppendArray(lit, dim + 1, index, out);
    }
  }
  out->push_back('}');
}

}  // namespace

std::string PrintLiteral(const Literal& literal) {
  if (literal.elided()) return "{...}";
  const Shape& s = literal.shape();
  if (s.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
      if (i) out += ", ";
      out += PrintLiteral(literal.tuple_elements()[i]);
    }
    return out + ")";
  }
  if (!s.IsArray()) return "{...}";
  if (literal.byte_size() < s.ByteSize()) return "{...}";  // no data to print
  if (s.rank() == 0) return Element(literal, 0);
  std::string out;
  int64_t index = 0;
  AppendArray(literal, 0, &index, &out);
  return out;
}

}  // namespace hlox
