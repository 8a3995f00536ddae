// Internal: the AVX-512 GEMM's tile geometry and packing entry points (gemm_avx512*.cc).
#pragma once

#include <cstdint>

#include "runtime/gemm_packed.h"

namespace hlox::rt::gemm::avx512 {

constexpr int kMr = 14;            // rows of C per micro-tile (broadcast operand A; <= 16)
constexpr int kNr = 32;            // columns of C per micro-tile (two zmm vectors of B)
constexpr int64_t kKc = 512;       // largest k-block
constexpr int64_t kAStride = kKc + 16;  // floats between rows of a row-major A panel (spreads L1 sets)
static_assert(kMr <= 16, "a p-major A panel row is one masked 16-float store");

// MicroKernels::pack_a / pack_b for this geometry (gemm_avx512_pack.cc).
void PackA(bool ta, const float* a, int64_t lda, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst);
void PackB(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst);
// MicroKernels::pick (gemm_avx512.cc).
KernelFn PickKernel(bool pmajor, bool packed_b, int mr, int nr);

}  // namespace hlox::rt::gemm::avx512
