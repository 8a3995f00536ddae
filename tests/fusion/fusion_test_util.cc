// Seeded runs and tolerant comparison of runtime values for the fusion tests.
#include "tests/fusion/fusion_test_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "runtime/core/executor.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::testing {

absl::StatusOr<rt::Value> RunSeeded(const Module& module, uint64_t seed, int threads) {
  rt::ExecOptions opts;
  opts.threads = threads;
  opts.seed = seed;
  auto exec = rt::Executor::Create(module, opts);
  if (!exec.ok()) return exec.status();
  return (*exec)->Run(rt::MakeSeededInputs(module, seed));
}

std::string CompareValues(const rt::Value& expected, const rt::Value& actual, double scale) {
  std::vector<rt::BufferPtr> e, a;
  expected.Flatten(&e);
  actual.Flatten(&a);
  if (e.size() != a.size()) return absl::StrCat("leaf count ", e.size(), " vs ", a.size());
  for (size_t k = 0; k < e.size(); ++k) {
    const Shape& s = e[k]->shape();
    if (!s.Compatible(a[k]->shape())) {
      return absl::StrCat("leaf ", k, " shape ", s.ToString(), " vs ", a[k]->shape().ToString());
    }
    PrimitiveType t = s.element_type();
    double rtol = 0, atol = 0;
    if (t == PrimitiveType::kF32) { rtol = 1e-4; atol = 1e-5; }
    if (t == PrimitiveType::kF64) { rtol = 1e-9; atol = 1e-12; }
    if (t == PrimitiveType::kF16 || t == PrimitiveType::kBF16) { rtol = 2e-2; atol = 1e-2; }
    if (!rt::IsRealType(t)) continue;  // complex etc.: not produced by fusion tests
    for (int64_t i = 0; i < e[k]->element_count(); ++i) {
      double x = rt::LoadDouble(*e[k], i), y = rt::LoadDouble(*a[k], i);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;
      if (std::fabs(x - y) <= scale * (atol + rtol * std::fabs(x))) continue;
      return absl::StrCat("leaf ", k, " element ", i, ": expected ", x, " got ", y);
    }
  }
  return "";
}

}  // namespace hlox::testing
