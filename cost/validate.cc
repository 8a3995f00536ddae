// Dtype-aware output comparison for validation.
#include "cost/validate.h"

#include <algorithm>
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hlox {

Tolerance ToleranceFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
    case PrimitiveType::kC128: return {1e-9, 1e-12};
    case PrimitiveType::kF32:
    case PrimitiveType::kC64: return {1e-4, 1e-5};
    case PrimitiveType::kF16: return {1e-2, 1e-3};
    case PrimitiveType::kBF16: return {2e-2, 1e-2};
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: return {1.25e-1, 1e-1};
    default: return {0, 0};
  }
}

std::vector<const Literal*> LiteralLeaves(const Literal& literal) {
  std::vector<const Literal*> out;
  std::vector<const Literal*> stack{&literal};
  // Depth-first, left to right: push children in reverse.
  while (!stack.empty()) {
    const Literal* l = stack.back();
    stack.pop_back();
    if (l->shape().IsTuple()) {
      const auto& el = l->tuple_elements();
      for (auto it = el.rbegin(); it != el.rend(); ++it) stack.push_back(&*it);
    } else if (l->shape().IsArray()) {
      out.push_back(l);
    }
  }
  return out;
}

namespace {

// True when `a` is acceptably close to `e`.
bool Close(double e, double a, const Tolerance& t, double leaf_floor) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(a - e) <= t.atol + t.rtol * std::fabs(e) + leaf_floor;
}

// Largest finite magnitude of a float leaf (both parts of complex values).
double MaxFiniteMagnitude(const Literal& l, bool complex) {
  double m = 0;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    std::complex<double> v = complex ? l.GetAsComplex(i) : std::complex<double>(l.GetAsDouble(i), 0);
    for (double x : {v.real(), v.imag()}) {
      if (std::isfinite(x)) m = std::max(m, std::fabs(x));
    }
  }
  return m;
}

Mismatch Make(int64_t output, int64_t index, double e, double a, std::string detail) {
  Mismatch m;
  m.output = output;
  m.index = index;
  m.expected = e;
  m.actual = a;
  m.detail = std::move(detail);
  return m;
}

}  // namespace

std::optional<Mismatch> CompareLeaf(const Literal& expected, const Literal& actual, int64_t output,
                                    const ValidationOptions& options) {
  const Shape& es = expected.shape();
  const Shape& as = actual.shape();
  if (es.element_type() != as.element_type() || es.dims() != as.dims()) {
    return Make(output, -1, 0, 0,
                absl::StrCat("output ", output, ": shape ", as.ToString(false), " != expected ",
                             es.ToString(false)));
  }
  if (expected.elided() || actual.elided()) {
    return Make(output, -1, 0, 0, absl::StrCat("output ", output, ": value has no data"));
  }
  const PrimitiveType type = es.element_type();
  const int64_t n = expected.element_count();
  if (IsInteger(type) || IsPred(type)) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t e = expected.GetAsInt64(i), a = actual.GetAsInt64(i);
      if (e != a) {
        return Make(output, i, static_cast<double>(e), static_cast<double>(a),
                    absl::StrFormat("output %d index %d: %d != expected %d (exact %s)", output, i, a,
                                    e, std::string(PrimitiveTypeName(type))));
      }
    }
    return std::nullopt;
  }
  Tolerance t = ToleranceFor(type);
  t.rtol *= options.tolerance_scale;
  t.atol *= options.tolerance_scale;
  const bool complex = IsComplex(type);
  const double leaf_floor = 0.1 * t.rtol * MaxFiniteMagnitude(expected, complex);
  for (int64_t i = 0; i < n; ++i) {
    std::complex<double> e, a;
    if (complex) {
      e = expected.GetAsComplex(i);
      a = actual.GetAsComplex(i);
    } else {
      e = expected.GetAsDouble(i);
      a = actual.GetAsDouble(i);
    }
    for (int part = 0; part < (complex ? 2 : 1); ++part) {
      double ev = part == 0 ? e.real() : e.imag();
      double av = part == 0 ? a.real() : a.imag();
      if (!Close(ev, av, t, leaf_floor)) {
        return Make(output, i, ev, av,
                    absl::StrFormat("output %d index %d%s: %.9g != expected %.9g (%s rtol %g atol %g, "
                                    "leaf floor %.3g)",
                                    output, i, part ? " (imag)" : "", av, ev,
                                    std::string(PrimitiveTypeName(type)), t.rtol, t.atol, leaf_floor));
      }
    }
  }
  return std::nullopt;
}

std::optional<Mismatch> CompareOutputs(const std::vector<const Literal*>& expected,
                                       const std::vector<const Literal*>& actual,
                                       const ValidationOptions& options) {
  if (expected.size() != actual.size()) {
    return Make(-1, -1, static_cast<double>(expected.size()), static_cast<double>(actual.size()),
                absl::StrCat("output count ", actual.size(), " != expected ", expected.size()));
  }
  for (size_t k = 0; k < expected.size(); ++k) {
    auto m = CompareLeaf(*expected[k], *actual[k], static_cast<int64_t>(k), options);
    if (m) return m;
  }
  return std::nullopt;
}

}  // namespace hlox
