// Shared by the ragged-dot and scaled-dot kernels (kernels/ragged_dot.cc, kernels/scaled_dot.cc):
// the index plan of a general dot over dense row-major operands, and whole-buffer loads and
// stores in the accumulator type. These variants run as plain loops, one output element at a
// time (the gemm paths in gemm/ serve dot itself): reals accumulate in double, complex types in
// complex<double>, integers in wrapping 64-bit arithmetic (the same low bits as XLA's integer
// dot in the result type).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "runtime/core/value.h"

namespace hlox::rt {

// Where each output dimension and each contraction step read their operands.
struct DotIndexPlan {
  std::vector<int64_t> out_dims;                        // batch, lhs free, rhs free (XLA's order)
  std::vector<int64_t> out_lhs_dim;                     // the lhs dimension of each output one, or -1
  std::vector<int64_t> out_lhs_stride, out_rhs_stride;  // 0 where that operand lacks the dimension
  std::vector<int64_t> k_dims;                          // sizes of the contracting dims (lhs order)
  std::vector<int64_t> lhs_k, rhs_k;                    // offset of each contraction step, row-major over k_dims
  int64_t out_count = 1;
};

// The plan for `d` over lhs/rhs dims; `rhs_skip` (ragged-dot's group dimension, or -1) is left
// out of the rhs free dims. Requires dimension numbers already checked by shape inference.
DotIndexPlan MakeDotIndexPlan(const std::vector<int64_t>& lhs_dims, const std::vector<int64_t>& rhs_dims,
                              const DotDimensionNumbers& d, int64_t rhs_skip);

// The lhs and rhs base offsets of output element `o`, and (when `lhs_coords` is not null) the
// lhs coordinate of each output dimension (-1 where the dimension is rhs-only).
void DotOutputBases(const DotIndexPlan& p, int64_t o, int64_t* lhs_base, int64_t* rhs_base,
                    std::vector<int64_t>* out_coords);

// OK when shape inference accepts `instr` and gives its declared dims (the kernels index by
// the dimension numbers, so a module that skipped the verifier is refused, never overrun).
absl::Status CheckVerifiedShape(const Instruction& instr);

// Whole buffers in an accumulator type. Reals: every real type (small floats decoded);
// complex: real types widened; integers: integer types only (sign- or zero-extended).
absl::StatusOr<std::vector<double>> LoadReals(const Buffer& b);
absl::StatusOr<std::vector<std::complex<double>>> LoadComplexes(const Buffer& b);
absl::StatusOr<std::vector<uint64_t>> LoadIntegers(const Buffer& b);
// Stores with the result type's rounding (small floats to nearest even, saturating).
void StoreReals(const std::vector<double>& v, Buffer& out);
void StoreComplexes(const std::vector<std::complex<double>>& v, Buffer& out);
void StoreIntegers(const std::vector<uint64_t>& v, Buffer& out);

}  // namespace hlox::rt
