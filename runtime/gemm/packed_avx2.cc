// The AVX2 level's GEMM micro-kernel, packing and table (gemm/packed.h MicroKernels): a 6 x 16
// tile of C in 12 ymm accumulators, two B vectors and one A broadcast per row and k step (15 of
// the 16 ymm registers), 12 FMAs per step for the two FMA pipes. Packing copies contiguous runs,
// except transposed B, which goes through 8x8 in-register transposes; padding is written as
// zeros so the kernel never reads garbage. Compiled for AVX2+FMA inside a target pragma, every
// other header included first (see isa/level_avx512.cc).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/gemm/packed.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")

namespace hlox::rt::gemm::avx2 {
namespace {

constexpr int kMr = 6;             // rows of C per micro-tile (one A broadcast each)
constexpr int kNr = 16;            // columns of C per micro-tile (two ymm vectors of B)
constexpr int64_t kKc = 384;       // largest k-block (A panel 9 KiB in L1, B panel 24 KiB in L2)
constexpr int64_t kAStride = kKc + 16;  // floats between rows of a row-major A panel (spreads L1 sets)

// vmaskmovps lane mask of the first n lanes (clipped to 0..8).
__m256i FirstN(int64_t n) {
  const int32_t k = static_cast<int32_t>(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// How the kernel reads B: a packed panel, in place with every column present, or in place
// masked past nr.
enum BMode { kPacked, kInPlace, kInPlaceMasked };

// C tile [mr x nr] (=|+=) A panel * B panel over kc; kRows (>= mr) rows and one or two vectors
// of columns (kWide: nr > 8) are computed, padding included, and only [mr x nr] is stored.
// Every variant runs the same FMA sequence per C element, so the choice never changes bits.
template <bool kPMajor, BMode kB, bool kWide, int kRows>
void Kernel(int64_t kc, const float* __restrict ap, const float* __restrict bp, int64_t ldb, float* c,
            int64_t ldc, int mr, int nr, bool load_c) {
  const __m256i m0 = FirstN(nr), m1 = FirstN(nr - 8);
  __m256 acc0[kRows], acc1[kRows];
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
    acc0[i] = _mm256_setzero_ps();
    acc1[i] = _mm256_setzero_ps();
    if (i < mr) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
  }
  const int64_t bstep = kB == kPacked ? kNr : ldb;
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    __m256 b0, b1;
    if constexpr (kB == kPacked) {
      b0 = _mm256_load_ps(bp);
      b1 = kWide ? _mm256_load_ps(bp + 8) : b0;
    } else if constexpr (kB == kInPlace) {
      b0 = _mm256_loadu_ps(bp);
      b1 = kWide ? _mm256_loadu_ps(bp + 8) : b0;
    } else {
      b0 = _mm256_maskload_ps(bp, m0);
      b1 = kWide ? _mm256_maskload_ps(bp + 8, m1) : b0;
    }
    bp += bstep;
#pragma GCC unroll 8
    for (int i = 0; i < kRows; ++i) {
      const __m256 av = _mm256_broadcast_ss(kPMajor ? ap + i : ap + i * kAStride);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      if (kWide) acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    ap += kPMajor ? kMr : 1;
  }
  const bool full = nr == (kWide ? 16 : 8);
#pragma GCC unroll 8
  for (int i = 0; i < kRows; ++i) {
    if (i >= mr) break;
    float* cr = c + i * ldc;
    __m256 v0 = acc0[i], v1 = acc1[i];
    if (full) {
      if (load_c) v0 = _mm256_add_ps(_mm256_loadu_ps(cr), v0);
      _mm256_storeu_ps(cr, v0);
      if (kWide) {
        if (load_c) v1 = _mm256_add_ps(_mm256_loadu_ps(cr + 8), v1);
        _mm256_storeu_ps(cr + 8, v1);
      }
      continue;
    }
    if (load_c) v0 = _mm256_add_ps(_mm256_maskload_ps(cr, m0), v0);
    _mm256_maskstore_ps(cr, m0, v0);
    if (kWide) {
      if (load_c) v1 = _mm256_add_ps(_mm256_maskload_ps(cr + 8, m1), v1);
      _mm256_maskstore_ps(cr + 8, m1, v1);
    }
  }
}

template <bool kPMajor, BMode kB, bool kWide>
constexpr KernelFn kByRows[3] = {Kernel<kPMajor, kB, kWide, 2>, Kernel<kPMajor, kB, kWide, 4>,
                                 Kernel<kPMajor, kB, kWide, kMr>};
template <bool kPMajor, BMode kB>
constexpr const KernelFn* kByWidth[2] = {kByRows<kPMajor, kB, false>, kByRows<kPMajor, kB, true>};
template <bool kPMajor>
constexpr const KernelFn* const* kByB[3] = {kByWidth<kPMajor, kPacked>, kByWidth<kPMajor, kInPlace>,
                                            kByWidth<kPMajor, kInPlaceMasked>};

// In-place transpose of 8 rows of 8 floats.
inline void Transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

void PackA(bool ta, const float* a, int64_t lda, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) {
  if (!ta) {  // row-major panel: each row's k-range
    for (int i = 0; i < kMr; ++i) {
      float* d = dst + i * kAStride;
      if (i >= mr) {
        std::fill_n(d, kc, 0.0f);
        continue;
      }
      const float* s = a + (r0 + i) * lda + p0;
      int64_t p = 0;
      for (; p + 8 <= kc; p += 8) _mm256_storeu_ps(d + p, _mm256_loadu_ps(s + p));
      if (p < kc) {
        const __m256i mk = FirstN(kc - p);
        _mm256_maskstore_ps(d + p, mk, _mm256_maskload_ps(s + p, mk));
      }
    }
    return;
  }
  // A stored [k, m]: the kMr values of one p are contiguous. A whole panel copies 4 + 2 floats
  // per p with plain loads (vmaskmovps is slow on AMD's cores); a partial one masks, writing
  // 8 floats a step, the last two rewritten by the next p (the panel has room past its last).
  if (mr == kMr) {
    static_assert(kMr == 6, "whole panel rows copy 4 + 2 floats");
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = a + (p0 + p) * lda + r0;
      _mm_storeu_ps(dst + p * kMr, _mm_loadu_ps(s));
      _mm_storel_pi(reinterpret_cast<__m64*>(dst + p * kMr + 4), _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(s + 4))));
    }
    return;
  }
  const __m256i mk = FirstN(mr);
  for (int64_t p = 0; p < kc; ++p) {
    _mm256_storeu_ps(dst + p * kMr, _mm256_maskload_ps(a + (p0 + p) * lda + r0, mk));
  }
}

void PackB(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) {
  if (!tb) {
    const __m256i m0 = FirstN(nr), m1 = FirstN(nr - 8);
    const bool full = nr == kNr;
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = b + (p0 + p) * ldb + j0;
      if (full) {
        _mm256_store_ps(dst + p * kNr, _mm256_loadu_ps(s));
        _mm256_store_ps(dst + p * kNr + 8, _mm256_loadu_ps(s + 8));
      } else {
        _mm256_store_ps(dst + p * kNr, _mm256_maskload_ps(s, m0));
        _mm256_store_ps(dst + p * kNr + 8, _mm256_maskload_ps(s + 8, m1));
      }
    }
    return;
  }
  // B stored [n, k]: column j of op(B) is row j of the stored matrix; transpose 8x8 tiles.
  for (int half = 0; half < 2; ++half) {
    const int rows = std::clamp(nr - 8 * half, 0, 8);
    for (int64_t q0 = 0; q0 < kc; q0 += 8) {
      const int64_t cnt = std::min<int64_t>(8, kc - q0);
      const __m256i mk = FirstN(cnt);
      __m256 r[8];
      for (int i = 0; i < 8; ++i) {
        const float* s = b + (j0 + 8 * half + i) * ldb + p0 + q0;
        r[i] = i >= rows ? _mm256_setzero_ps() : cnt == 8 ? _mm256_loadu_ps(s) : _mm256_maskload_ps(s, mk);
      }
      Transpose8(r);
      for (int q = 0; q < cnt; ++q) _mm256_store_ps(dst + (q0 + q) * kNr + 8 * half, r[q]);
    }
  }
}

// Lane j of the result: all ones where bit j of `bits` is set.
__m256i BitLanes(uint32_t bits) {
  const __m256i lane = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int32_t>(bits)), lane), lane);
}

// Lanes of src where `bits` (8 bits) are set, zero elsewhere: a plain load when all are set (most
// rows of a convolution's shifted planes), zeros when none is, else vmaskmovps (which never
// touches the masked-off lanes' memory, and is several times slower on AMD's cores).
__m256 LoadLanes(const float* src, uint32_t bits) {
  if (bits == 0xFF) return _mm256_loadu_ps(src);
  if (bits == 0) return _mm256_setzero_ps();
  return _mm256_maskload_ps(src, BitLanes(bits));
}

void MaskedRows(float* dst, const float* const* src, const uint32_t* mask, int64_t rows, int width) {
  const uint32_t valid = width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  for (int64_t r = 0; r < rows; ++r, dst += width) {
    const uint32_t m = mask[r] & valid;
    if (width == kNr && m == 0xFFFFu) {  // the common case: a whole panel row inside the plane
      _mm256_storeu_ps(dst, _mm256_loadu_ps(src[r]));
      _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(src[r] + 8));
      continue;
    }
    for (int v = 0; v < width; v += 8) _mm256_storeu_ps(dst + v, LoadLanes(src[r] + v, (m >> v) & 0xFFu));
  }
}

void CopyRange(float* dst, const float* src, int64_t lo, int64_t hi, int64_t len) {
  if (lo <= 0 && hi >= len) {  // the whole run lies inside the plane (most runs): plain copies
    int64_t v = 0;
    for (; v + 8 <= len; v += 8) _mm256_storeu_ps(dst + v, _mm256_loadu_ps(src + v));
    if (v < len) _mm256_storeu_ps(dst + v, _mm256_maskload_ps(src + v, FirstN(len - v)));
    return;
  }
  for (int64_t v = 0; v < len; v += 8) {
    // Lanes j with lo <= v + j < hi.
    const int64_t a = std::clamp<int64_t>(lo - v, 0, 8), e = std::clamp<int64_t>(hi - v, 0, 8);
    const uint32_t bits = e > a ? ((1u << e) - 1) & ~((1u << a) - 1) : 0u;
    _mm256_storeu_ps(dst + v, LoadLanes(src + v, bits));
  }
}

}  // namespace

// The kernel variant for an A layout, B reading and an [mr x nr] tile.
KernelFn PickKernel(bool pmajor, bool packed_b, int mr, int nr) {
  const int b = packed_b ? kPacked : nr == kNr ? kInPlace : kInPlaceMasked;
  const KernelFn* rows = (pmajor ? kByB<true> : kByB<false>)[b][nr > 8];
  return rows[mr <= 2 ? 0 : mr <= 4 ? 1 : 2];
}

}  // namespace hlox::rt::gemm::avx2

#pragma GCC pop_options

namespace hlox::rt::gemm {

extern const MicroKernels kAvx2;
constexpr MicroKernels kAvx2 = [] {
  MicroKernels k;
  k.mr = avx2::kMr;
  k.nr = avx2::kNr;
  k.kc = avx2::kKc;
  k.a_stride = avx2::kAStride;
  k.mc_panels = 32;  // 192 rows of A, ~300 KiB
  k.nc_panels = 8;   // 128 columns of B
  k.pack_a = avx2::PackA;
  k.pack_b = avx2::PackB;
  k.pick = avx2::PickKernel;
  k.masked_rows = avx2::MaskedRows;
  k.copy_range = avx2::CopyRange;
  return k;
}();

}  // namespace hlox::rt::gemm
