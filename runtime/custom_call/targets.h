// The custom-call targets hlox implements, one function per target family, each with the
// kernel signature. kernels/custom_call.cc dispatches on custom_call_target; the families live
// in custom_call/<family>.cc. Shapes and backend_config layouts follow the corpus dumps
// (jaxlib's cuBLAS/cuSOLVER descriptors, transformers-neuronx's Neuron calls).
#pragma once

#include <vector>

#include "runtime/core/kernel.h"

namespace hlox::rt {

using CustomCallFn = absl::StatusOr<Value> (*)(const Instruction&, const std::vector<const Value*>&,
                                               KernelContext&);

// cuda_threefry2x32: (key0, key1, x0, x1) u32 arrays (keys may be size 1) -> (y0, y1).
absl::StatusOr<Value> CcThreefry2x32(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// __cublas$gemm: alpha * dot(lhs, rhs) + beta * bias with backend_config's dimension numbers.
absl::StatusOr<Value> CcCublasGemm(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cublas_trsm_batched: (a, b) -> (x, workspace...), side/uplo/trans/diag from backend_config.
absl::StatusOr<Value> CcTrsmBatched(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cusolver_getrf / cublas_getrf_batched: a -> (lu, pivots (1-based), info, workspace...).
absl::StatusOr<Value> CcGetrf(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cuda_lu_pivots_to_permutation: 0-based pivots [..., k] -> permutation [..., p].
absl::StatusOr<Value> CcPivotsToPermutation(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cusolver_geqrf: a -> (householder a, taus, info, workspace).
absl::StatusOr<Value> CcGeqrf(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cusolver_orgqr: (a, taus) -> (q, info, workspace).
absl::StatusOr<Value> CcOrgqr(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// cusolver_potrf: a -> (cholesky factor in the backend_config's triangle, info, workspace).
absl::StatusOr<Value> CcPotrf(const Instruction&, const std::vector<const Value*>&, KernelContext&);
// AwsNeuronGelu / AwsNeuronGeluApprxTanh / AwsNeuronGeluBackward / AwsNeuronRmsNorm.
absl::StatusOr<Value> CcNeuronGelu(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> CcNeuronRmsNorm(const Instruction&, const std::vector<const Value*>&, KernelContext&);

// Result helpers: the i-th array shape of a (possibly tuple) result, and a result value whose
// leaves other than those filled by the caller are zeroed (workspaces, info).
Shape ResultLeafShape(const Shape& result, int64_t i);
Value ZeroedResult(const Shape& result);
// Leaf i of a result value built by ZeroedResult.
Buffer& ResultLeaf(Value& v, int64_t i);
// Reads a little-endian int32 at byte `offset` of the backend_config, or `dflt` when short.
int32_t BackendConfigInt32(const Instruction& instr, size_t offset, int32_t dflt);

}  // namespace hlox::rt
