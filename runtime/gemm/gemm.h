// Internal: the templated GEMM backend shared by gemm/dot_general.cc (float, double, complex).
#pragma once

#include <cstdint>

#include "runtime/core/thread_pool.h"
#include "runtime/gemm/dot_general.h"
#include "runtime/math/half.h"

namespace hlox::rt {

// Below this m*n*k a GEMM (or a chunk of a batched dot) runs on one thread: a fork/join costs
// about 1 us, a GEMM of 1M multiply-adds about 8 us.
constexpr int64_t kParallelMinMnk = int64_t{1} << 20;
// Batched dots split their batches over threads when each GEMM is below this m*n*k (or there
// are at least 4 batches per thread); bigger GEMMs split their own rows and columns, which
// balances better than a few whole batches per thread.
constexpr int64_t kBatchSplitMaxMnk = int64_t{1} << 24;

// Row-major C[m,n] (=|+=) op(A)[m,k] * op(B)[k,n]; see Sgemm in gemm/dot_general.h. `done`
// (may be null) is told as each part of C is final (gemm/dot_general.h GemmDone).
template <typename T>
void GemmT(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
           int64_t ldb, T* c, int64_t ldc, bool accumulate, ThreadPool* pool, const GemmTuning& tuning = {},
           const GemmDone* done = nullptr);

// The few-rows GEMM with its big operand in bf16/f16 bits, widened piece by piece as it
// streams (a decode step's half weights), writing C[m,n] = op(A) op(B) (no accumulate):
// big_is_b: m <= 4, `small` is A and `big` is B; else n <= 4 with A stored [k, m] (ta),
// `small` is B and `big` is A. The
// flags and leading dimensions are those of the operands as given. False, with nothing done,
// for other shapes.
bool SgemmHalfStreamed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* small, int64_t ld_small,
                       const uint16_t* big, int64_t ld_big, fused::HalfType half, bool big_is_b, float* c, int64_t ldc,
                       ThreadPool* pool, const GemmTuning& tuning, const GemmDone* done);

}  // namespace hlox::rt
