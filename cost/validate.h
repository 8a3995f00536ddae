// Output validation: a candidate's outputs against the unoptimized module's reference outputs
// on the same seeded inputs, with dtype-aware tolerances. Integers and pred compare exactly;
// floats pass when |actual - expected| <= atol + rtol * |expected| + rtol / 10 * max|leaf|
// (tolerances per type below, times ValidationOptions::tolerance_scale; max|leaf| is the largest
// finite magnitude of that expected output). The last term admits summation-order noise: a
// reassociated sum (fused or reordered reductions) errs in proportion to its terms, not to its
// result, so an entry that nearly cancels (a logit, a gradient) can miss rtol of itself while a
// wrong rewrite misses by far more. NaN positions and Inf positions (with sign) must match
// exactly. Complex values compare real and imaginary parts with their component type's
// tolerance.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cost/result.h"
#include "ir/literal.h"
#include "ir/primitive_type.h"

namespace hlox {

struct Tolerance {
  double rtol = 0, atol = 0;  // both 0: exact
};

// f64 1e-9/1e-12, f32 1e-4/1e-5, f16 1e-2/1e-3, bf16 2e-2/1e-2, f8 types 1.25e-1/1e-1, c64 as
// f32, c128 as f64, integers and pred exact.
Tolerance ToleranceFor(PrimitiveType type);

struct ValidationOptions {
  double tolerance_scale = 1.0;  // multiplies rtol and atol (e.g. for rewrites that reorder sums)
};

// Array leaves of `literal` in depth-first order (a non-tuple literal is its own single leaf).
std::vector<const Literal*> LiteralLeaves(const Literal& literal);

// First element where `actual` differs from `expected` (same leaf `output` index in the
// mismatch), or nullopt when they agree. Differing element types or dimensions are a mismatch
// at index -1 with the reason in `detail`.
std::optional<Mismatch> CompareLeaf(const Literal& expected, const Literal& actual, int64_t output,
                                    const ValidationOptions& options = {});
// Compares leaf lists; a different leaf count is a mismatch at output -1.
std::optional<Mismatch> CompareOutputs(const std::vector<const Literal*>& expected,
                                       const std::vector<const Literal*>& actual,
                                       const ValidationOptions& options = {});

}  // namespace hlox
