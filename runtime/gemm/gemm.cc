// GEMM backends behind DotGeneral. f32 runs hlox's packed GEMM with the active level's
// micro-kernels (gemm/packed.h; AVX-512 and AVX2); at the generic level, and for f64/complex,
// Eigen's blocked GEMM on row-major maps. Eigen
// work is split into fixed row blocks of C (a function of the shape only), so each block runs the
// same Eigen call whatever the thread count, which keeps results bit-identical across thread
// counts. Few rows of C (m <= 4), or few columns (n <= 4, as the transpose), take a streaming
// GEMV-like path for every type.
// GCC 12 reports false -Wmaybe-uninitialized inside Eigen's AVX-512 packet code.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <complex>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/gemm/dot_general.h"
#include "runtime/gemm/packed.h"
#include "runtime/gemm/gemm.h"
#include "runtime/isa/isa_kernels.h"
#include "runtime/math/half.h"
#include "runtime/core/value.h"

namespace hlox::rt {
namespace {

template <typename T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using CMap = Eigen::Map<const RowMat<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <typename T>
using MMap = Eigen::Map<RowMat<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// Rows of C per block: whole matrix when small, else a multiple of 16 chosen from m and the
// flop count only.
int64_t RowBlock(int64_t m, int64_t n, int64_t k) {
  double flops = 2.0 * m * n * k;
  if (flops < 4e6 || m < 64) return m;
  // Few blocks: each Eigen call repacks all of B, so more blocks cost more packing.
  int64_t blocks = std::clamp<int64_t>(m / 64, 1, 4);
  int64_t rb = (m + blocks - 1) / blocks;
  return (rb + 15) / 16 * 16;
}

// Sum of x[p] * y[p * stride] for p < k as eight partial sums over p mod 8, combined in a fixed
// order: the compiler vectorizes the eight (a single running sum is one add per element, each
// waiting for the last), and the order depends only on k, so bits never change with threads.
template <typename T>
T DotStrided(const T* x, const T* y, int64_t stride, int64_t k) {
  T s[8] = {};
  int64_t p = 0;
  if (stride == 1) {
    for (; p + 8 <= k; p += 8) {
      for (int l = 0; l < 8; ++l) s[l] += x[p + l] * y[p + l];
    }
  } else {
    for (; p + 8 <= k; p += 8) {
      for (int l = 0; l < 8; ++l) s[l] += x[(p + l) * stride] * y[p + l];
    }
  }
  for (; p < k; ++p) s[0] += x[p * stride] * y[p];
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

// acc[i][j] += a[i][0] B[0][j] + ... + a[i][3] B[3][j] for i < M, j < w (B's rows ldb apart),
// added one product at a time in row order: each element of B is loaded once for all M rows.
template <typename T, int M>
void FourRows(T* __restrict acc, int64_t ld_acc, const T* __restrict b0, int64_t ldb, const T (&a)[4][4], int64_t w) {
  const T* __restrict b1 = b0 + ldb;
  const T* __restrict b2 = b1 + ldb;
  const T* __restrict b3 = b2 + ldb;
  for (int64_t j = 0; j < w; ++j) {
    const T x0 = b0[j], x1 = b1[j], x2 = b2[j], x3 = b3[j];
    for (int i = 0; i < M; ++i) {
      T s = acc[i * ld_acc + j];
      s += a[i][0] * x0;
      s += a[i][1] * x1;
      s += a[i][2] * x2;
      s += a[i][3] * x3;
      acc[i * ld_acc + j] = s;
    }
  }
}

// Few rows of C (decode-style GEMV): stream B once. For row-major B every row of B meets all m
// rows of A before the next, C[i,:] = sum_p A[i,p] * B[p,:] in p order; for transposed B each
// C element is a dot product over contiguous k (DotStrided). Columns are split in chunks,
// and since no element's sum crosses a chunk, any split gives the same bits. A chunk is wide
// (up to kCols columns: each row of B is read as one 32 KB run for f32, 16 KB for half, which
// the hardware prefetchers follow, while the chunk's accumulators stay in L2; 256-column runs
// at a decode step's 44 KB row stride ran at about 1 GB/s) and takes four rows of B per pass
// over its accumulators (FourRows), each element still summed in p order. B may hold bf16/f16
// bits (Tb = uint16_t, f32 only): each piece of B is widened into cache just before use
// (math/half.h), so a half weight matrix is read once, at two bytes an element, and never
// widened whole.
template <typename T, typename Tb = T>
void SmallM(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const Tb* b, int64_t ldb,
            T* c, int64_t ldc, bool accumulate, ThreadPool* pool, const GemmDone* done,
            fused::HalfType b_half = fused::kNotHalf) {
  constexpr bool kWiden = !std::is_same_v<T, Tb>;
  constexpr int64_t kCols = 8192;
  constexpr int64_t kMaxRows = 4;  // GemmT sends m <= 4 here
  // Narrower chunks when there would be fewer than two per thread.
  int64_t cols = kCols;
  const int64_t want = pool != nullptr ? 2 * int64_t{pool->threads()} : 1;
  while (cols > 256 && (n + cols - 1) / cols < want) cols /= 2;
  cols = std::min(cols, std::max<int64_t>(n, 1));  // a narrow C's accumulators stay small
  const int64_t chunks = (n + cols - 1) / cols;
  auto body = [&](int64_t lo, int64_t hi) {
    // Accumulators (rows `cols` apart; every element is set before it is read, so no zeroing:
    // a tiny dot must not pay for a wide chunk's buffer).
    const std::unique_ptr<T[]> acc_store(new T[kMaxRows * cols]);
    T* acc = acc_store.get();
    // Widened rows of B (four of a chunk's width), or one column of transposed B (k values).
    std::vector<T> wide(kWiden ? std::max<int64_t>(4 * cols, tb ? k : 0) : 0);
    auto rows = [&](int64_t p, int64_t count, int64_t j0, int64_t w, int64_t* ld) -> const T* {
      if constexpr (kWiden) {
        for (int64_t q = 0; q < count; ++q) fused::HalfToF32(b_half, b + (p + q) * ldb + j0, wide.data() + q * cols, w);
        *ld = cols;
        return wide.data();
      } else {
        *ld = ldb;
        return b + p * ldb + j0;
      }
    };
    auto av = [&](int64_t i, int64_t p) { return ta ? a[p * lda + i] : a[i * lda + p]; };
    for (int64_t ch = lo; ch < hi; ++ch) {
      const int64_t j0 = ch * cols, j1 = std::min(n, j0 + cols), w = j1 - j0;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < w; ++j) acc[i * cols + j] = accumulate ? c[i * ldc + j0 + j] : T(0);
      }
      if (!tb) {
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
          T ap[kMaxRows][4];
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t q = 0; q < 4; ++q) ap[i][q] = av(i, p + q);
          }
          int64_t ld = 0;
          const T* b0 = rows(p, 4, j0, w, &ld);
          switch (m) {
            case 1: FourRows<T, 1>(acc, cols, b0, ld, ap, w); break;
            case 2: FourRows<T, 2>(acc, cols, b0, ld, ap, w); break;
            case 3: FourRows<T, 3>(acc, cols, b0, ld, ap, w); break;
            default: FourRows<T, 4>(acc, cols, b0, ld, ap, w); break;
          }
        }
        for (; p < k; ++p) {
          int64_t ld = 0;
          const T* brow = rows(p, 1, j0, w, &ld);
          for (int64_t i = 0; i < m; ++i) {
            const T a0 = av(i, p);
            T* row = acc + i * cols;
            for (int64_t j = 0; j < w; ++j) row[j] += a0 * brow[j];
          }
        }
      } else {
        for (int64_t j = 0; j < w; ++j) {
          const T* bcol;
          if constexpr (kWiden) {
            fused::HalfToF32(b_half, b + (j0 + j) * ldb, wide.data(), k);
            bcol = wide.data();
          } else {
            bcol = b + (j0 + j) * ldb;
          }
          for (int64_t i = 0; i < m; ++i) {
            acc[i * cols + j] += ta ? DotStrided(a + i, bcol, lda, k) : DotStrided(a + i * lda, bcol, 1, k);
          }
        }
      }
      for (int64_t i = 0; i < m; ++i) std::copy(acc + i * cols, acc + i * cols + w, c + i * ldc + j0);
      if (done != nullptr) (*done)(0, m, j0, j1);
    }
  };
  if (pool != nullptr && chunks > 1 && m * n * k > (1 << 16)) pool->ParallelFor(chunks, 1, body);
  else body(0, chunks);
}

// C[m, n] for n <= 4 with A stored [k, m] (ta), as its transpose C^T = op(B)^T op(A)^T on the
// few-rows path, which streams A's rows once; into scratch, then transposed back. `a` may hold
// bf16/f16 bits (Ta = uint16_t, `a_half`).
template <typename T, typename Ta>
void NarrowAsTranspose(bool tb, int64_t m, int64_t n, int64_t k, const Ta* a, int64_t lda, const T* b, int64_t ldb,
                       T* c, int64_t ldc, bool accumulate, ThreadPool* pool, const GemmDone* done,
                       fused::HalfType a_half = fused::kNotHalf) {
  BufferPtr scratch = ScratchBuffer(m * n * static_cast<int64_t>(sizeof(T)));
  T* ct = reinterpret_cast<T*>(scratch->data());  // C^T, [n, m]
  SmallM<T, Ta>(!tb, false, n, m, k, b, ldb, a, lda, ct, m, false, pool, nullptr, a_half);
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) row[j] = accumulate ? row[j] + ct[j * m + i] : ct[j * m + i];
  }
  if (done != nullptr) (*done)(0, m, 0, n);
}

}  // namespace

template <typename T>
void GemmT(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
           int64_t ldb, T* c, int64_t ldc, bool accumulate, ThreadPool* pool, const GemmTuning& tuning,
           const GemmDone* done) {
  if (m == 0 || n == 0) return;
  if (tuning.threads == 1) pool = nullptr;
  if (k == 0) {
    if (!accumulate) for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    if (done != nullptr) (*done)(0, m, 0, n);
    return;
  }
  if (m <= 4) {
    SmallM<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate, pool, done);
    return;
  }
  // Up to 4 columns with A stored [k, m] (a decode step's [vocab, batch] logits from
  // hidden-first weights): the transpose on the few-rows path. (With A stored [m, k] that path
  // would read B at a stride for every element.)
  if (n <= 4 && ta) {
    NarrowAsTranspose<T, T>(tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate, pool, done);
    return;
  }
  // f32 runs the active level's packed GEMM when it has one. Narrow C (fewer columns than half
  // a micro-tile) runs as its transpose on the packed GEMM.
  if constexpr (std::is_same_v<T, float>) {
    const gemm::MicroKernels* mk = Kernels().gemm;
    if (mk != nullptr && n >= mk->nr / 2) {
      gemm::SgemmPacked(*mk, ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate, pool, tuning, done);
      return;
    }
    if (mk != nullptr && m >= mk->nr) {
      BufferPtr scratch = ScratchBuffer(m * n * static_cast<int64_t>(sizeof(float)));
      float* ct = scratch->as<float>();  // C^T, [n, m]
      gemm::SgemmPacked(*mk, !tb, !ta, n, m, k, b, ldb, a, lda, ct, m, false, pool, tuning);
      for (int64_t i = 0; i < m; ++i) {
        float* row = c + i * ldc;
        for (int64_t j = 0; j < n; ++j) row[j] = accumulate ? row[j] + ct[j * m + i] : ct[j * m + i];
      }
      if (done != nullptr) (*done)(0, m, 0, n);
      return;
    }
  }
  int64_t rb = RowBlock(m, n, k);
  int64_t blocks = (m + rb - 1) / rb;
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t blk = lo; blk < hi; ++blk) {
      int64_t r0 = blk * rb, rows = std::min(rb, m - r0);
      MMap<T> C(c + r0 * ldc, rows, n, Eigen::OuterStride<>(ldc));
      auto run = [&](const auto& A) {
        if (!tb) {
          CMap<T> B(b, k, n, Eigen::OuterStride<>(ldb));
          if (accumulate) C.noalias() += A * B; else C.noalias() = A * B;
        } else {
          CMap<T> Bt(b, n, k, Eigen::OuterStride<>(ldb));
          if (accumulate) C.noalias() += A * Bt.transpose(); else C.noalias() = A * Bt.transpose();
        }
      };
      if (!ta) {
        run(CMap<T>(a + r0 * lda, rows, k, Eigen::OuterStride<>(lda)));
      } else {
        // A stored [k, m]: rows r0.. of A are columns r0.. of the stored matrix.
        CMap<T> At(a, k, m, Eigen::OuterStride<>(lda));
        run(At.middleCols(r0, rows).transpose());
      }
      if (done != nullptr) (*done)(r0, r0 + rows, 0, n);
    }
  };
  if (pool != nullptr && blocks > 1) pool->ParallelFor(blocks, 1, body);
  else body(0, blocks);
}

template void GemmT<float>(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t, bool, ThreadPool*, const GemmTuning&, const GemmDone*);
template void GemmT<double>(bool, bool, int64_t, int64_t, int64_t, const double*, int64_t, const double*, int64_t, double*, int64_t, bool, ThreadPool*, const GemmTuning&, const GemmDone*);
template void GemmT<std::complex<float>>(bool, bool, int64_t, int64_t, int64_t, const std::complex<float>*, int64_t, const std::complex<float>*, int64_t, std::complex<float>*, int64_t, bool, ThreadPool*, const GemmTuning&, const GemmDone*);
template void GemmT<std::complex<double>>(bool, bool, int64_t, int64_t, int64_t, const std::complex<double>*, int64_t, const std::complex<double>*, int64_t, std::complex<double>*, int64_t, bool, ThreadPool*, const GemmTuning&, const GemmDone*);

bool SgemmHalfStreamed(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* small, int64_t ld_small,
                       const uint16_t* big, int64_t ld_big, fused::HalfType half, bool big_is_b, float* c, int64_t ldc,
                       ThreadPool* pool, const GemmTuning& tuning, const GemmDone* done) {
  if (tuning.threads == 1) pool = nullptr;
  if (k == 0 || n == 0 || m == 0) return false;
  if (big_is_b && m <= 4) {
    SmallM<float, uint16_t>(ta, tb, m, n, k, small, ld_small, big, ld_big, c, ldc, false, pool, done, half);
    return true;
  }
  if (!big_is_b && n <= 4 && ta) {
    NarrowAsTranspose<float, uint16_t>(tb, m, n, k, big, ld_big, small, ld_small, c, ldc, false, pool, done, half);
    return true;
  }
  return false;
}

void Sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, ThreadPool* pool) {
  GemmT<float>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate, pool);
}

}  // namespace hlox::rt
