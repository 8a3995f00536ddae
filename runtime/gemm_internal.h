// Internal: the templated GEMM backend shared by dot.cc (float, double, complex).
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace hlox::rt {

// Row-major C[m,n] (=|+=) op(A)[m,k] * op(B)[k,n]; see Sgemm in dot.h.
template <typename T>
void GemmT(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
           int64_t ldb, T* c, int64_t ldc, bool accumulate, ThreadPool* pool);

}  // namespace hlox::rt
