// The AVX2 level's kernel table (isa/isa_kernels.h): the templated formulas and kernels of
// runtime/isa/simd/ instantiated for 8-lane ymm vectors, compiled for AVX2+FMA+F16C inside a
// target pragma the same way as isa/level_avx512.cc (which explains the include order).
#include <immintrin.h>

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

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")
#define HLOX_SIMD_NS avx2
#include "runtime/isa/simd/avx2.h"
#include "runtime/isa/simd/kernels.h"

namespace hlox::rt::simd::avx2 {
namespace {
using S = Avx2;
constexpr int kDepthwiseVectors = 8;  // 64 channels per block
}  // namespace
#include "runtime/isa/simd/level_entry_points.inc"
}  // namespace hlox::rt::simd::avx2

#pragma GCC pop_options

namespace hlox::rt {
namespace gemm {
extern const MicroKernels kAvx2;  // gemm/packed_avx2.cc
}

extern const IsaKernels kIsaAvx2;
constexpr IsaKernels kIsaAvx2 = simd::avx2::Table(IsaLevel::kAvx2, &gemm::kAvx2);

}  // namespace hlox::rt
