// The generic level's kernel table (isa/isa_kernels.h): the templated formulas and kernels of
// runtime/isa/simd/ for one f32 lane, compiled for the portable baseline (any x86-64 CPU). The
// formulas are the vector levels' operation for operation, so elementwise results are the
// same bits; GEMM is Eigen's (no packed micro-kernel at this level).
#include <array>
#include <bit>
#include <cstdint>
#include <utility>

#include "ir/literal.h"
#include "runtime/fused/vector_ops.h"
#include "runtime/gemm/packed.h"
#include "runtime/isa/isa_kernels.h"
#include "runtime/math/half.h"
#include "runtime/math/vmath_coef.h"

#define HLOX_SIMD_NS generic
#include "runtime/isa/simd/kernels.h"
#include "runtime/isa/simd/scalar.h"

namespace hlox::rt::simd::generic {
namespace {
using S = Scalar;
constexpr int kDepthwiseVectors = 0;  // the portable loop in conv/depthwise.cc
}  // namespace
#include "runtime/isa/simd/level_entry_points.inc"
}  // namespace hlox::rt::simd::generic

namespace hlox::rt {

extern const IsaKernels kIsaGeneric;
constexpr IsaKernels kIsaGeneric = simd::generic::Table(IsaLevel::kGeneric, nullptr);

}  // namespace hlox::rt
