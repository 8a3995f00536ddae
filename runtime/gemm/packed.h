// Internal: hlox's packed single-precision GEMM. A is packed into mr-row panels, B into
// nr-column panels per k-block; a level's FMA micro-kernel keeps an mr x nr tile of C in
// registers. The driver (gemm/packed.cc) is built for the portable baseline and runs any
// level's micro-kernels (MicroKernels: gemm/packed_avx512.cc, gemm/packed_avx2.cc), reached through the
// active level's IsaKernels::gemm. k is never split across threads and every C element sums
// its k-blocks in order, so results never depend on the thread count (they do depend on the
// level: tile shapes differ).
#pragma once

#include <cstdint>

#include "runtime/core/thread_pool.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt::gemm {

// C tile [mr x nr] (=|+=, load_c) A panel * B panel over kc. bp is a packed B panel (rows of
// nr_max floats, 64-byte aligned) or, for a kernel picked with packed_b false, B itself read in
// place (rows ldb apart, masked past nr).
using KernelFn = void (*)(int64_t kc, const float* ap, const float* bp, int64_t ldb, float* c, int64_t ldc, int mr,
                          int nr, bool load_c);

// One level's micro-kernels, packing and tile geometry.
struct MicroKernels {
  int mr = 0;              // rows of C per micro-tile
  int nr = 0;              // columns of C per micro-tile
  int64_t kc = 0;          // largest k-block
  int64_t a_stride = 0;    // floats between rows of a row-major A panel (>= kc + 16)
  int64_t mc_panels = 0;   // A panels a row-mode unit packs together (L2)
  int64_t nc_panels = 0;   // B panels each A panel meets in turn
  // The order tiles run in. false: each A panel (L1) meets nc_panels B panels (L2) in turn.
  // true: each B panel (L1) meets up to mc_panels A panels (L2) in turn, BLIS's order, which
  // streams the smaller operand panel from L2 when B panels are larger than A's (6x16 tiles).
  // Either order runs every tile's FMAs alike, so the bits never change.
  bool b_panel_in_l1 = false;
  // Floats per packed A panel (either layout).
  constexpr int64_t a_panel() const { return mr * a_stride; }

  // Packs rows [r0, r0+mr) x k-range [p0, p0+kc) of op(A) (mr <= this->mr, kc <= this->kc)
  // into one panel. !ta: row-major, element (i, p) at dst[i * a_stride + p]; ta: p-major,
  // dst[p * this->mr + i]. Rows past mr are zero.
  void (*pack_a)(bool ta, const float* a, int64_t lda, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) = nullptr;
  // Packs k-range [p0, p0+kc) x columns [j0, j0+nr) of op(B) (nr <= this->nr) into one panel,
  // element (p, j) at dst[p * this->nr + j] (dst 64-byte aligned); columns past nr are zero.
  void (*pack_b)(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) = nullptr;
  // The kernel for an A layout (p-major or row-major), packed or in-place B and an [mr x nr] tile.
  KernelFn (*pick)(bool a_pmajor, bool packed_b, int mr, int nr) = nullptr;
  // Panel rows for operands that exist only implicitly (PanelSource): for each r < rows,
  // dst[r * width + j] = src[r][j] for the lanes j < width whose bit is set in mask[r], 0 for
  // the others (width <= 32); src[r] is read only at set lanes, so it may point outside its
  // array elsewhere.
  void (*masked_rows)(float* dst, const float* const* src, const uint32_t* mask, int64_t rows, int width) = nullptr;
  // dst[v] = src[v] for lo <= v < hi, 0 for the other v < len; src read only inside [lo, hi).
  // May write dst up to len rounded up to 16.
  void (*copy_range)(float* dst, const float* src, int64_t lo, int64_t hi, int64_t len) = nullptr;
};

// Operands that are never materialized as matrices (e.g. a convolution's shifted input
// planes): the driver asks for packed panels in the layouts pack_a/pack_b write for the
// micro-kernels `mk` it runs. Calls may come from several threads at once, so both must be
// safe to run concurrently.
class PanelSource {
 public:
  virtual ~PanelSource() = default;
  // Like pack_a: rows [r0, r0+mr) x k-range [p0, p0+kc) of A into one panel, in the p-major
  // layout when a_pmajor() is true, else row-major (mk.a_stride); rows past mr zero.
  virtual void PackA(const MicroKernels& mk, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) const = 0;
  // Like pack_b: k-range [p0, p0+kc) x columns [j0, j0+nr) of B, dst[p * mk.nr + j], columns
  // past nr zero.
  virtual void PackB(const MicroKernels& mk, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) const = 0;
  virtual bool a_pmajor() const { return false; }
};

// Row-major C[m,n] (=|+=) op(A)[m,k] * op(B)[k,n] with m, n, k > 0; see Sgemm in gemm/dot_general.h.
// `tuning` overrides the blocking, schedule and thread split (gemm/dot_general.h GemmTuning).
void SgemmPacked(const MicroKernels& mk, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, ThreadPool* pool,
                 const GemmTuning& tuning = {}, const GemmDone* done = nullptr);

// Row-major C[m,n] (=|+=) A[m,k] * B[k,n] with both operands packed by `src` (m, n, k > 0).
// Same schedule, k-blocking and bit-determinism as SgemmPacked; `done` as there.
void SgemmPanels(const MicroKernels& mk, int64_t m, int64_t n, int64_t k, const PanelSource& src, float* c,
                 int64_t ldc, bool accumulate, ThreadPool* pool, const GemmDone* done = nullptr);

}  // namespace hlox::rt::gemm
