// Runtime test helpers (see runtime_test_util.h).
#include "tests/runtime/runtime_test_util.h"

#include <cstring>

#include "gtest/gtest.h"
#include "ir/parser.h"

namespace hlox::rt::testing {

std::unique_ptr<Module> ParseOrFail(const std::string& text) {
  auto m = ParseModule(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

absl::StatusOr<Value> RunText(const std::string& text, const std::vector<Value>& args, int threads, uint64_t seed) {
  auto m = ParseModule(text, "<test>");
  if (!m.ok()) return m.status();
  ExecOptions o;
  o.threads = threads;
  o.seed = seed;
  auto ex = Executor::Create(**m, o);
  if (!ex.ok()) return ex.status();
  return (*ex)->Run(args);
}

Value MakeArray(const Shape& shape, const std::function<double(int64_t)>& gen) {
  Literal lit(shape);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsInteger(shape.element_type()) || IsPred(shape.element_type())) {
      lit.SetFromInt64(i, static_cast<int64_t>(gen(i)));
    } else {
      lit.SetFromDouble(i, gen(i));
    }
  }
  return ValueFromLiteral(lit);
}

Shape S(const std::string& text) {
  auto s = ParseShape(text);
  EXPECT_TRUE(s.ok()) << text;
  return s.ok() ? *s : Shape();
}

std::vector<double> ToDoubles(const Value& v) {
  std::vector<double> out;
  if (!v.is_array()) return out;
  Literal lit = LiteralFromValue(v, v.array->shape());
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    out.push_back(IsComplex(lit.shape().element_type()) ? lit.GetAsComplex(i).real() : lit.GetAsDouble(i));
  }
  return out;
}

std::vector<int64_t> ToInts(const Value& v) {
  std::vector<int64_t> out;
  if (!v.is_array()) return out;
  Literal lit = LiteralFromValue(v, v.array->shape());
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.GetAsInt64(i));
  return out;
}

std::function<double(int64_t)> Uniform(uint64_t seed, double lo, double hi) {
  return [=](int64_t i) {
    uint64_t z = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(i) * 0xbf58476d1ce4e5b9ull + 1;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * static_cast<double>(z >> 11) * 0x1p-53;
  };
}

double RoundTo(PrimitiveType t, double x) {
  Literal lit(Shape(t, {}));
  lit.SetFromDouble(0, x);
  return lit.GetAsDouble(0);
}

}  // namespace hlox::rt::testing
