// Internal: hlox's packed single-precision GEMM for x86-64 AVX-512 (used by gemm.cc when the
// build targets AVX-512, and by the convolution plane paths through SgemmPanels). A is packed into kMr-row panels, B into kNr-column panels per k-block;
// an FMA micro-kernel keeps a kMr x kNr tile of C in zmm registers. k is never split across
// threads and every C element sums its k-blocks in order, so results never depend on the thread
// count. Packing lives in gemm_avx512_pack.cc, the kernel and the driver in gemm_avx512.cc.
#pragma once

#ifdef __AVX512F__

#include <cstdint>

#include "runtime/thread_pool.h"

namespace hlox::rt::gemm {

constexpr int kMr = 14;            // rows of C per micro-tile (broadcast operand A; <= 16)
constexpr int kNr = 32;            // columns of C per micro-tile (two zmm vectors of B)
constexpr int64_t kKc = 512;       // largest k-block
constexpr int64_t kAStride = kKc + 16;  // floats between rows of a row-major A panel (spreads L1 sets)
constexpr int64_t kAPanel = kMr * kAStride;  // floats per packed A panel, either layout
static_assert(kMr <= 16, "a p-major A panel row is one masked 16-float store");

// Packs rows [r0, r0+mr) x k-range [p0, p0+kc) of op(A) (mr <= kMr, kc <= kKc) into one panel.
// !ta: row-major panel, element (i, p) at dst[i * kAStride + p]; ta: p-major, dst[p * kMr + i].
// Rows past mr are zero.
void PackA(bool ta, const float* a, int64_t lda, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst);

// Packs k-range [p0, p0+kc) x columns [j0, j0+nr) of op(B) (nr <= kNr) into one panel, element
// (p, j) at dst[p * kNr + j] (dst 64-byte aligned); columns past nr are zero.
void PackB(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst);

// Row-major C[m,n] (=|+=) op(A)[m,k] * op(B)[k,n] with m, n, k > 0; see Sgemm in dot.h.
void SgemmPacked(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, ThreadPool* pool);

// Operands that are never materialized as matrices (e.g. a convolution's shifted input
// planes): the driver asks for packed panels in the layouts PackA/PackB write. Calls may come
// from several threads at once, so both must be safe to run concurrently.
class PanelSource {
 public:
  virtual ~PanelSource() = default;
  // Like PackA: rows [r0, r0+mr) x k-range [p0, p0+kc) of A into one panel, in the p-major
  // layout when a_pmajor() is true, else row-major (kAStride); rows past mr zero.
  virtual void PackA(int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) const = 0;
  // Like PackB: k-range [p0, p0+kc) x columns [j0, j0+nr) of B, dst[p * kNr + j], columns past
  // nr zero.
  virtual void PackB(int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) const = 0;
  virtual bool a_pmajor() const { return false; }
};

// Row-major C[m,n] (=|+=) A[m,k] * B[k,n] with both operands packed by `src` (m, n, k > 0).
// Same schedule, k-blocking and bit-determinism as SgemmPacked.
void SgemmPanels(int64_t m, int64_t n, int64_t k, const PanelSource& src, float* c, int64_t ldc,
                 bool accumulate, ThreadPool* pool);

}  // namespace hlox::rt::gemm

#endif  // __AVX512F__
