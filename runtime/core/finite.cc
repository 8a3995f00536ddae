// Finiteness scan implementation (see core/finite.h).
#include "runtime/core/finite.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ir/literal.h"
#include "runtime/core/kernel_util.h"

namespace hlox::rt {

namespace {

template <typename T>
void Scan(const T* p, int64_t n, NonFinite* c) {
  for (int64_t i = 0; i < n; ++i) {
    c->nan += std::isnan(p[i]);
    c->inf += std::isinf(p[i]);
    if (std::isfinite(p[i])) c->max_abs = std::max(c->max_abs, static_cast<double>(std::fabs(p[i])));
  }
}

}  // namespace

NonFinite CountNonFinite(const Buffer& b) {
  NonFinite c;
  PrimitiveType t = b.shape().element_type();
  if (!IsFloatingPoint(t) && !IsComplex(t)) return c;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kC64) {
    Scan(b.as<float>(), b.byte_size() / 4, &c);
  } else if (t == PrimitiveType::kF64 || t == PrimitiveType::kC128) {
    Scan(b.as<double>(), b.byte_size() / 8, &c);
  } else if (t == PrimitiveType::kF16 || t == PrimitiveType::kBF16) {  // all-ones exponent
    const uint16_t exp = t == PrimitiveType::kF16 ? 0x7c00 : 0x7f80, man = t == PrimitiveType::kF16 ? 0x03ff : 0x007f;
    const uint16_t* p = b.as<uint16_t>();
    uint16_t top = 0;  // finite magnitudes order like their bits
    for (int64_t i = 0; i < b.element_count(); ++i) {
      if ((p[i] & exp) != exp) {
        top = std::max<uint16_t>(top, p[i] & 0x7fff);
      } else if (p[i] & man) {
        ++c.nan;
      } else {
        ++c.inf;
      }
    }
    c.max_abs = t == PrimitiveType::kF16 ? LoadHalf(top) : LoadBf16(top);
  } else {  // f8 types: decode through a literal
    Literal lit(b.shape());
    if (lit.byte_size() != b.byte_size()) return c;
    if (b.byte_size() > 0) std::memcpy(lit.data(), b.data(), b.byte_size());
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      double v = lit.GetAsDouble(i);
      c.nan += std::isnan(v);
      c.inf += std::isinf(v);
      if (std::isfinite(v)) c.max_abs = std::max(c.max_abs, std::fabs(v));
    }
  }
  return c;
}

NonFinite CountNonFinite(const Value& v) {
  std::vector<BufferPtr> leaves;
  v.Flatten(&leaves);
  NonFinite c;
  for (const BufferPtr& b : leaves) {
    NonFinite l = CountNonFinite(*b);
    c.nan += l.nan;
    c.inf += l.inf;
    c.max_abs = std::max(c.max_abs, l.max_abs);
  }
  return c;
}

}  // namespace hlox::rt
