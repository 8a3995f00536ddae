// General dot (XLA dot_general) on dense row-major buffers, reusable by other kernels (the
// __cublas$gemm custom call). Operands are canonicalized to [batch, m, k] x [batch, k, n]
// (a transpose is packed only when the dims are not already in a GEMM-friendly order) and run
// on a GEMM backend: hlox's packed GEMM for f32 with the active level's micro-kernels
// (gemm/packed.h; Eigen at the generic level), Eigen for f64/c64/c128, f32 accumulate for f16/bf16, exact wrapping
// arithmetic for integers. Output dims: batch, lhs free dims, rhs free dims.
// Work is split in fixed blocks, so results do not depend on the thread count.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "ir/attributes.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"

namespace hlox::rt {

// Code-generation choices of one dot, read from its backend_config (keys hlox_gemm_mc,
// hlox_gemm_nc, hlox_gemm_schedule, hlox_gemm_batches, hlox_threads; the codegen-tuning pass
// writes them). Zero or absent keeps the runtime's own choice. They steer only the packed f32
// GEMM and the batch split, and none changes bits: every C element still sums its k-blocks in
// order. (The k-block is not a choice: regrouping the k-sum moved outputs of deep f16 models
// past validation, and it was never faster; docs/MEASUREMENTS.md.)
struct GemmTuning {
  enum Schedule : uint8_t { kAutoSchedule, kRows, kColumns };
  enum Batches : uint8_t { kAutoBatches, kSplitBatches, kSplitEach };
  int64_t mc_panels = 0;   // A panels a row-mode unit packs together
  int64_t nc_panels = 0;   // B panels each A panel meets in turn
  Schedule schedule = kAutoSchedule;
  Batches batches = kAutoBatches;  // batched dots: threads over batches, or inside each GEMM
  int threads = -1;        // 1: the calling thread only; -1: the pool
  bool b_panel_in_l1 = false;  // tiles in BLIS's order (gemm/packed.h MicroKernels::b_panel_in_l1)
  bool IsDefault() const {
    return mc_panels == 0 && nc_panels == 0 && schedule == kAutoSchedule && batches == kAutoBatches &&
           threads != 1 && !b_panel_in_l1;
  }
};

// Reads the hlox_gemm_* / hlox_threads keys of a backend_config (JSON or not; unknown keys and
// malformed values are ignored, so an XLA config never fails a run).
GemmTuning ParseGemmTuning(const std::string& backend_config);

// Told which part of a GEMM's C holds its final values: rows [r0, r1) x columns [c0, c1).
// Called from whichever thread computed that part, right after it (so the part is still in
// cache); the parts never overlap and cover C exactly once.
using GemmDone = std::function<void(int64_t r0, int64_t r1, int64_t c0, int64_t c1)>;
// Told that `rows` runs of `len` elements of a dot's output, starting at row-major linear
// index `first` and `stride` apart, hold their final values; the same contract as GemmDone,
// over the whole output. An output fusion's epilogue runs here (runtime/kernels/output_fusion.h).
using DotEpilogue = std::function<void(int64_t first, int64_t rows, int64_t stride, int64_t len)>;

// out = alpha * dot_general(lhs, rhs) + beta * out. `out` must already have the result shape
// (its element type decides the arithmetic; lhs/rhs may differ in type only among f16/bf16/
// f32, converted on load). With beta == 0 the previous contents of out are ignored.
// `epilogue`, when set, is told as each part of out is final: tile by tile inside hlox's packed
// f32 GEMM, row block by row block in the other GEMMs, all of out at once where a copy follows.
absl::Status DotGeneral(const Buffer& lhs, const Buffer& rhs, const DotDimensionNumbers& dnums,
                        Buffer& out, ThreadPool* pool, double alpha = 1.0, double beta = 0.0,
                        const GemmTuning& tuning = {}, const DotEpilogue* epilogue = nullptr);

// Row-major single-precision GEMM: C[m,n] = A[m,k] * B[k,n] (+ C if accumulate), with leading
// dimensions; ta/tb read A/B transposed (A stored [k,m], B stored [n,k]). Deterministic split.
void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, ThreadPool* pool);

}  // namespace hlox::rt
