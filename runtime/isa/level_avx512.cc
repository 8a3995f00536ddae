// The AVX-512 level's kernel table (isa/isa_kernels.h): the templated formulas and kernels of
// runtime/isa/simd/ instantiated for 16-lane zmm vectors. Every header with inline code is
// included before the target pragma, so only what is defined after it (in this level's own
// namespace) is compiled for AVX-512, and nothing shared with other translation units can
// carry AVX-512 instructions to a CPU without them. The table itself is a constant defined
// after the pragma ends: building it runs no code.
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
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2")
// GCC 12 reports false (maybe-)uninitialized warnings inside the AVX-512 intrinsics (their
// _mm512_undefined_* operands).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define HLOX_SIMD_NS avx512
#include "runtime/isa/simd/avx512.h"
#include "runtime/isa/simd/kernels.h"

namespace hlox::rt::simd::avx512 {
namespace {
using S = Avx512;
constexpr int kDepthwiseVectors = 4;  // 64 channels per block
}  // namespace
#include "runtime/isa/simd/level_entry_points.inc"
}  // namespace hlox::rt::simd::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace hlox::rt {
namespace gemm {
extern const MicroKernels kAvx512;  // gemm/packed_avx512.cc
}

extern const IsaKernels kIsaAvx512;
constexpr IsaKernels kIsaAvx512 = simd::avx512::Table(IsaLevel::kAvx512, &gemm::kAvx512);

}  // namespace hlox::rt
