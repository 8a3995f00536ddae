// Dense linear-algebra routines (see kernels/linalg_core.h). Plain loops in f64 (Cholesky's
// dot products vectorized, its big columns split over a pool): fixed loop and summation orders
// keep results deterministic.
#include "runtime/kernels/linalg_core.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/thread_pool.h"

namespace hlox::rt {

void TriangularSolve(const double* a, double* b, int64_t m, int64_t n, bool left, bool lower,
                     bool transpose, bool unit) {
  const int64_t k = left ? m : n;
  // T = op(A) restricted to its triangle; T(i, j) reads A(i, j) or A(j, i).
  auto t = [&](int64_t i, int64_t j) { return transpose ? a[j * k + i] : a[i * k + j]; };
  const bool t_lower = lower != transpose;
  if (left) {  // T X = B, column by column.
    for (int64_t c = 0; c < n; ++c) {
      if (t_lower) {
        for (int64_t i = 0; i < k; ++i) {
          double s = b[i * n + c];
          for (int64_t j = 0; j < i; ++j) s -= t(i, j) * b[j * n + c];
          b[i * n + c] = unit ? s : s / t(i, i);
        }
      } else {
        for (int64_t i = k - 1; i >= 0; --i) {
          double s = b[i * n + c];
          for (int64_t j = i + 1; j < k; ++j) s -= t(i, j) * b[j * n + c];
          b[i * n + c] = unit ? s : s / t(i, i);
        }
      }
    }
    return;
  }
  // X T = B, row by row: x T = b, i.e. x_j = (b_j - sum_{i != j} x_i T(i, j)) / T(j, j).
  for (int64_t r = 0; r < m; ++r) {
    double* x = b + r * n;
    if (t_lower) {  // T(i, j) nonzero for i >= j: solve from the last column back.
      for (int64_t j = k - 1; j >= 0; --j) {
        double s = x[j];
        for (int64_t i = j + 1; i < k; ++i) s -= x[i] * t(i, j);
        x[j] = unit ? s : s / t(j, j);
      }
    } else {
      for (int64_t j = 0; j < k; ++j) {
        double s = x[j];
        for (int64_t i = 0; i < j; ++i) s -= x[i] * t(i, j);
        x[j] = unit ? s : s / t(j, j);
      }
    }
  }
}

namespace {

// x . y over n entries in eight interleaved partial sums added in a fixed order: the compiler
// vectorizes it (a single running sum it may not reorder), and the bits depend on n alone.
double DotFixed(const double* x, const double* y, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t p = 0;
  for (; p + 8 <= n; p += 8) {
    for (int q = 0; q < 8; ++q) acc[q] += x[p + q] * y[p + q];
  }
  for (int q = 0; p < n; ++p, ++q) acc[q] += x[p] * y[p];
  return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
}

}  // namespace

int64_t Cholesky(const double* a, double* out, int64_t n, bool lower, ThreadPool* pool) {
  // Work on L (lower) in a scratch; the upper case uses U = L^T of the mirrored input. Column j
  // needs dot products of row prefixes of L (contiguous), one per row below the diagonal; big
  // columns split those rows over the pool (each row's value is the same either way).
  std::vector<double> l(n * n, 0.0);
  auto in = [&](int64_t i, int64_t j) { return lower ? a[i * n + j] : a[j * n + i]; };  // i >= j
  int64_t info = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double d = in(j, j) - DotFixed(&l[j * n], &l[j * n], j);
    if (!(d > 0) && info == 0) info = j + 1;
    const double ljj = std::sqrt(d);
    l[j * n + j] = ljj;
    auto rows = [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) l[i * n + j] = (in(i, j) - DotFixed(&l[i * n], &l[j * n], j)) / ljj;
    };
    const int64_t work = (n - j - 1) * std::max<int64_t>(j, 1);
    if (pool != nullptr && work >= (int64_t{1} << 15)) {
      pool->ParallelFor(n - j - 1, std::max<int64_t>(1, (int64_t{1} << 13) / std::max<int64_t>(j, 1)),
                        [&](int64_t lo, int64_t hi) { rows(j + 1 + lo, j + 1 + hi); });
    } else {
      rows(j + 1, n);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      if (lower) out[i * n + j] = l[i * n + j];
      else out[j * n + i] = l[i * n + j];
    }
  }
  return info;
}

int64_t LuDecompose(double* a, int64_t m, int64_t n, int32_t* pivots) {
  const int64_t k = std::min(m, n);
  int64_t info = 0;
  for (int64_t j = 0; j < k; ++j) {
    int64_t p = j;
    double best = std::fabs(a[j * n + j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const double v = std::fabs(a[i * n + j]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    pivots[j] = static_cast<int32_t>(p + 1);
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(a[j * n + c], a[p * n + c]);
    }
    const double piv = a[j * n + j];
    if (piv == 0.0) {
      if (info == 0) info = j + 1;
      continue;
    }
    for (int64_t i = j + 1; i < m; ++i) {
      const double f = a[i * n + j] / piv;
      a[i * n + j] = f;
      for (int64_t c = j + 1; c < n; ++c) a[i * n + c] -= f * a[j * n + c];
    }
  }
  return info;
}

void HouseholderQr(double* a, int64_t m, int64_t n, double* taus) {
  const int64_t k = std::min(m, n);
  std::vector<double> w(n);
  for (int64_t j = 0; j < k; ++j) {
    const double alpha = a[j * n + j];
    double xnorm2 = 0;
    for (int64_t i = j + 1; i < m; ++i) xnorm2 += a[i * n + j] * a[i * n + j];
    if (xnorm2 == 0) {
      taus[j] = 0;
      continue;
    }
    const double beta = -std::copysign(std::sqrt(alpha * alpha + xnorm2), alpha);
    taus[j] = (beta - alpha) / beta;
    const double scale = 1.0 / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) a[i * n + j] *= scale;
    a[j * n + j] = beta;
    // Apply H = I - tau v v^T (v_j = 1) to the trailing columns.
    for (int64_t c = j + 1; c < n; ++c) {
      double s = a[j * n + c];
      for (int64_t i = j + 1; i < m; ++i) s += a[i * n + j] * a[i * n + c];
      s *= taus[j];
      a[j * n + c] -= s;
      for (int64_t i = j + 1; i < m; ++i) a[i * n + c] -= s * a[i * n + j];
    }
  }
}

void FormQ(const double* a, int64_t m, int64_t n, const double* taus, int64_t k, double* q) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t c = 0; c < n; ++c) q[i * n + c] = i == c ? 1.0 : 0.0;
  for (int64_t j = std::min(k, std::min(m, n)) - 1; j >= 0; --j) {
    const double tau = taus[j];
    for (int64_t c = 0; c < n; ++c) {
      double s = q[j * n + c];
      for (int64_t i = j + 1; i < m; ++i) s += a[i * n + j] * q[i * n + c];
      s *= tau;
      q[j * n + c] -= s;
      for (int64_t i = j + 1; i < m; ++i) q[i * n + c] -= s * a[i * n + j];
    }
  }
}

}  // namespace hlox::rt
