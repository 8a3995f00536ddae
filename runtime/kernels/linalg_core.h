// Dense linear-algebra routines on row-major f64 matrices shared by the linalg kernels and the
// cuSOLVER/cuBLAS custom calls: triangular solve, Cholesky, LU with partial pivoting (LAPACK
// getrf conventions), Householder QR (geqrf) and forming Q (orgqr).
#pragma once

#include <cstdint>
#include <vector>

namespace hlox::rt {

class ThreadPool;

// Solves op(A) X = B (left) or X op(A) = B (right) in place in b (m x n, row-major). A is k x k
// (k = m for left, n for right); only the `lower` (or upper) triangle of A is read; op is the
// transpose when `transpose`; `unit` assumes a unit diagonal.
void TriangularSolve(const double* a, double* b, int64_t m, int64_t n, bool left, bool lower,
                     bool transpose, bool unit);

// Cholesky factor of the n x n matrix a reading only its lower (or upper) triangle: writes L
// (a = L L^T) or U (a = U^T U) into that triangle of `out` and leaves `out`'s other triangle
// untouched. Returns 0, or the 1-based order of the first non-positive leading minor (its
// entries then hold NaN from the square root of a negative number, as XLA produces). A pool
// splits each big column's rows; the result's bits do not depend on it.
int64_t Cholesky(const double* a, double* out, int64_t n, bool lower, ThreadPool* pool = nullptr);

// In-place LU with partial pivoting of an m x n matrix: L (unit, below the diagonal) and U.
// pivots[i] is the 1-based row swapped with row i (LAPACK ipiv). Returns info: 0, or the
// 1-based index of the first exactly-zero pivot.
int64_t LuDecompose(double* a, int64_t m, int64_t n, int32_t* pivots);

// In-place Householder QR (LAPACK geqrf): R on and above the diagonal, reflector vectors
// below it (implicit leading 1); taus has min(m, n) entries.
void HouseholderQr(double* a, int64_t m, int64_t n, double* taus);

// Forms the first n columns of Q = H_0 ... H_{k-1} from geqrf output a (m x n) and k taus,
// writing the m x n result into q (LAPACK orgqr).
void FormQ(const double* a, int64_t m, int64_t n, const double* taus, int64_t k, double* q);

}  // namespace hlox::rt
