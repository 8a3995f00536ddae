// Helpers shared by the convolution, window, gather/scatter, sort, rng, batch-norm, linalg and
// custom-call kernel families: whole-buffer conversion to and from double/float (with the
// element type's rounding on the way back), a ParallelFor that tolerates a missing pool,
// recognition of simple scalar reducer computations for fast paths, and calling a scalar
// computation through the executor for the general case.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "ir/computation.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"

namespace hlox::rt {

// Element i of an array buffer of any real/int/pred type or small float (f8, f4) as double (0
// for unsupported types).
double LoadDouble(const Buffer& b, int64_t i);
// Stores v into element i with the type's conversion (f16/bf16 and the small floats round to
// nearest even, ints truncate toward zero and wrap, pred is v != 0).
void StoreDouble(Buffer& b, int64_t i, double v);
// Whole buffer as doubles / floats.
std::vector<double> ToDoubles(const Buffer& b);
std::vector<float> ToFloats(const Buffer& b);
// Fills a buffer from doubles / floats (sizes must match).
void FromDoubles(const std::vector<double>& v, Buffer& b);
void FromFloats(const std::vector<float>& v, Buffer& b);
// True for the element types with native arithmetic that LoadDouble/StoreDouble handle (pred,
// ints up to 64 bits, f16, bf16, f32, f64): the fast paths' types. The small floats load and
// store too but compute only through scalar programs or widening (core/small_float_widen.h).
bool IsRealType(PrimitiveType t);
// True for the element types LoadDouble/StoreDouble handle: IsRealType's and the small floats
// (a value stored back is rounded to its type, so a loop of load, op, store rounds per op).
bool LoadsAsDouble(PrimitiveType t);

// Runs fn over chunks of [0, n) on ctx.pool, or inline when there is no pool.
void KernelParallelFor(KernelContext& ctx, int64_t n, int64_t grain,
                       const std::function<void(int64_t, int64_t)>& fn);

// What a two-parameter scalar computation does, when it is one of the simple forms.
enum class ScalarOp { kOther, kAdd, kMul, kMax, kMin, kAnd, kOr, kAssignSecond, kAssignFirst };
// Classifies `comp` (root add/multiply/maximum/minimum/and/or of its parameters 0 and 1 in either
// order, or the root being parameter 1 / parameter 0). kOther for anything else.
ScalarOp ClassifyBinary(const Computation* comp);
// Applies a classified op (not kOther) to doubles.
double ApplyScalarOp(ScalarOp op, double a, double b);

// A rank-0 array value of type t holding v.
Value ScalarValue(PrimitiveType t, double v);
// A rank-0 array value holding element i of b (bytes copied exactly).
Value ElementValue(const Buffer& b, int64_t i);
// Runs `comp` on `args` through ctx.executor (error if there is none) and returns its leaves.
absl::StatusOr<std::vector<BufferPtr>> CallComputation(KernelContext& ctx, const Computation& comp,
                                                       const std::vector<Value>& args);

// Transposes a dense row-major array: result dim j is src dim perm[j].
template <typename T>
std::vector<T> Permute(const std::vector<T>& src, const std::vector<int64_t>& src_dims,
                       const std::vector<int64_t>& perm) {
  std::vector<T> out(src.size());
  if (src.empty()) return out;
  std::vector<int64_t> sstr = RowMajorStrides(src_dims);
  std::vector<int64_t> dims(perm.size()), str(perm.size());
  for (size_t j = 0; j < perm.size(); ++j) {
    dims[j] = src_dims[perm[j]];
    str[j] = sstr[perm[j]];
  }
  std::vector<int64_t> idx(perm.size(), 0);
  int64_t off = 0;
  for (size_t n = 0; n < out.size(); ++n) {
    out[n] = src[off];
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      off += str[d];
      if (++idx[d] < dims[d]) break;
      off -= str[d] * dims[d];
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace hlox::rt
