// The AVX-512 level's GEMM: packing, micro-kernel and table (gemm/packed.h MicroKernels): a
// 14 x 32 tile of C in 28 zmm accumulators. Packing copies contiguous runs, except transposed
// B, which goes through 16x16 in-register transposes; padding (rows past m, columns past n) is
// written as zeros so the kernel never reads garbage. Compiled for AVX-512 inside a target
// pragma, every other header included first (see isa/level_avx512.cc).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/gemm/packed.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2")
// GCC 12 reports false (maybe-)uninitialized warnings inside the AVX-512 intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace hlox::rt::gemm::avx512 {
namespace {

constexpr int kMr = 14;            // rows of C per micro-tile (broadcast operand A; <= 16)
constexpr int kNr = 32;            // columns of C per micro-tile (two zmm vectors of B)
constexpr int64_t kKc = 512;       // largest k-block
constexpr int64_t kAStride = kKc + 16;  // floats between rows of a row-major A panel (spreads L1 sets)
static_assert(kMr <= 16, "a p-major A panel row is one masked 16-float store");

__mmask16 Mask(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
}

// C tile [mr x nr] (=|+=) A panel * B panel over kc. Up to kMr x kNr accumulators live in zmm
// registers; kRows (>= mr) rows and one or two vectors of columns (kWide: nr > 16) are
// computed, padding included, and only [mr x nr] is stored. A packed B panel has rows of kNr
// floats (aligned, zero padded); unpacked B is read in place, rows ldb apart, masked past nr.
// Every variant runs the same FMA sequence per C element, so the choice never changes bits.
template <bool kPMajor, bool kPackedB, bool kWide, int kRows>
void Kernel(int64_t kc, const float* __restrict ap, const float* __restrict bp, int64_t ldb, float* c,
            int64_t ldc, int mr, int nr, bool load_c) {
  const __mmask16 m0 = Mask(nr), m1 = Mask(nr - 16);
  __m512 acc0[kRows], acc1[kRows];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
    acc0[i] = _mm512_setzero_ps();
    acc1[i] = _mm512_setzero_ps();
    if (i < mr) {  // the C tile is read (or written) at the end; start fetching it now
      _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
      if (kWide) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kNr - 1), _MM_HINT_T0);
    }
  }
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 b0 = kPackedB ? _mm512_load_ps(bp) : _mm512_maskz_loadu_ps(m0, bp);
    __m512 b1 = b0;
    if (kWide) b1 = kPackedB ? _mm512_load_ps(bp + 16) : _mm512_maskz_loadu_ps(m1, bp + 16);
    bp += kPackedB ? kNr : ldb;
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const __m512 av = _mm512_set1_ps(kPMajor ? ap[i] : ap[i * kAStride]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      if (kWide) acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    ap += kPMajor ? kMr : 1;
  }
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
    if (i >= mr) break;
    float* cr = c + i * ldc;
    __m512 v0 = acc0[i];
    if (load_c) v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), v0);
    _mm512_mask_storeu_ps(cr, m0, v0);
    if (kWide) {
      __m512 v1 = acc1[i];
      if (load_c) v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), v1);
      _mm512_mask_storeu_ps(cr + 16, m1, v1);
    }
  }
}

template <bool kPMajor, bool kPackedB, bool kWide>
constexpr KernelFn kByRows[3] = {Kernel<kPMajor, kPackedB, kWide, 4>, Kernel<kPMajor, kPackedB, kWide, 8>,
                                 Kernel<kPMajor, kPackedB, kWide, kMr>};
template <bool kPMajor, bool kPackedB>
constexpr const KernelFn* kByWidth[2] = {kByRows<kPMajor, kPackedB, false>, kByRows<kPMajor, kPackedB, true>};

// The kernel variant for an A layout, B packing and an [mr x nr] tile.
KernelFn PickKernel(bool pmajor, bool packed_b, int mr, int nr) {
  static constexpr const KernelFn* const* kAll[2][2] = {{kByWidth<false, false>, kByWidth<false, true>},
                                                        {kByWidth<true, false>, kByWidth<true, true>}};
  return kAll[pmajor][packed_b][nr > 16][mr <= 4 ? 0 : mr <= 8 ? 1 : 2];
}

// Index vectors for one stage of the 16x16 transpose: swapping bit w between row and column.
// lo builds row i (bit w clear) from rows i and i+w; hi builds row i+w.
struct TransposeIdx {
  __m512i lo[4], hi[4];
  TransposeIdx() {
    for (int s = 0; s < 4; ++s) {
      int w = 8 >> s;
      alignas(64) int32_t l[16], h[16];
      for (int j = 0; j < 16; ++j) {
        if (j & w) {
          l[j] = 16 + j - w;
          h[j] = 16 + j;
        } else {
          l[j] = j;
          h[j] = j + w;
        }
      }
      lo[s] = _mm512_load_si512(l);
      hi[s] = _mm512_load_si512(h);
    }
  }
};

// In-place transpose of 16 rows of 16 floats: four stages, each swaps one index bit.
inline void Transpose16(__m512 r[16], const TransposeIdx& idx) {
#pragma GCC unroll 4
  for (int s = 0; s < 4; ++s) {
    int w = 8 >> s;
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      if (i & w) continue;
      __m512 x = r[i], y = r[i + w];
      r[i] = _mm512_permutex2var_ps(x, idx.lo[s], y);
      r[i + w] = _mm512_permutex2var_ps(x, idx.hi[s], y);
    }
  }
}

void PackA(bool ta, const float* a, int64_t lda, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) {
  if (!ta) {
    // Row-major panel: copy each row's k-range.
    for (int i = 0; i < kMr; ++i) {
      float* d = dst + i * kAStride;
      if (i >= mr) {
        for (int64_t p = 0; p < kc; p += 16) _mm512_mask_storeu_ps(d + p, Mask(kc - p), _mm512_setzero_ps());
        continue;
      }
      const float* s = a + (r0 + i) * lda + p0;
      int64_t p = 0;
      for (; p + 16 <= kc; p += 16) _mm512_storeu_ps(d + p, _mm512_loadu_ps(s + p));
      if (p < kc) {
        __mmask16 mk = Mask(kc - p);
        _mm512_mask_storeu_ps(d + p, mk, _mm512_maskz_loadu_ps(mk, s + p));
      }
    }
    return;
  }
  // A stored [k, m]: the kMr values for one p are contiguous.
  __mmask16 mk = Mask(mr), full = Mask(kMr);
  for (int64_t p = 0; p < kc; ++p) {
    _mm512_mask_storeu_ps(dst + p * kMr, full, _mm512_maskz_loadu_ps(mk, a + (p0 + p) * lda + r0));
  }
}

void PackB(bool tb, const float* b, int64_t ldb, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) {
  static_assert(kNr == 32, "PackB writes two 16-float halves per k step");
  if (!tb) {
    __mmask16 m0 = Mask(nr), m1 = Mask(nr - 16);
    for (int64_t p = 0; p < kc; ++p) {
      const float* s = b + (p0 + p) * ldb + j0;
      _mm512_store_ps(dst + p * kNr, _mm512_maskz_loadu_ps(m0, s));
      _mm512_store_ps(dst + p * kNr + 16, _mm512_maskz_loadu_ps(m1, s + 16));
    }
    return;
  }
  // B stored [n, k]: column j of op(B) is row j of the stored matrix; transpose 16x16 tiles.
  static const TransposeIdx idx;
  for (int half = 0; half < 2; ++half) {
    int rows = std::clamp(nr - 16 * half, 0, 16);
    for (int64_t q0 = 0; q0 < kc; q0 += 16) {
      int64_t cnt = std::min<int64_t>(16, kc - q0);
      __mmask16 mk = Mask(cnt);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        r[i] = i < rows ? _mm512_maskz_loadu_ps(mk, b + (j0 + 16 * half + i) * ldb + p0 + q0) : _mm512_setzero_ps();
      }
      Transpose16(r, idx);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) {
        if (q < cnt) _mm512_store_ps(dst + (q0 + q) * kNr + 16 * half, r[q]);
      }
    }
  }
}

void MaskedRows(float* dst, const float* const* src, const uint32_t* mask, int64_t rows, int width) {
  const uint32_t valid = width >= 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  for (int64_t r = 0; r < rows; ++r, dst += width) {
    const uint32_t m = mask[r] & valid;
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(static_cast<__mmask16>(m & 0xFFFF), src[r]));
    if (width > 16) _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(static_cast<__mmask16>(m >> 16), src[r] + 16));
  }
}

// Lanes [lo, hi) of a 16-lane mask (clipped to the vector).
__mmask16 LaneRange(int64_t lo, int64_t hi) {
  const uint32_t a = static_cast<uint32_t>(std::clamp<int64_t>(lo, 0, 16));
  const uint32_t e = static_cast<uint32_t>(std::clamp<int64_t>(hi, 0, 16));
  return static_cast<__mmask16>((0xFFFFu >> (16 - e)) & (0xFFFFu << a));
}

void CopyRange(float* dst, const float* src, int64_t lo, int64_t hi, int64_t len) {
  for (int64_t v = 0; v < len; v += 16) _mm512_storeu_ps(dst + v, _mm512_maskz_loadu_ps(LaneRange(lo - v, hi - v), src + v));
}

}  // namespace
}  // namespace hlox::rt::gemm::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options

namespace hlox::rt::gemm {

extern const MicroKernels kAvx512;
constexpr MicroKernels kAvx512 = [] {
  MicroKernels k;
  k.mr = avx512::kMr;
  k.nr = avx512::kNr;
  k.kc = avx512::kKc;
  k.a_stride = avx512::kAStride;
  k.mc_panels = 16;  // 224 rows of A, ~470 KiB
  k.nc_panels = 8;   // 256 columns of B, ~400 KiB
  k.pack_a = avx512::PackA;
  k.pack_b = avx512::PackB;
  k.pick = avx512::PickKernel;
  k.masked_rows = avx512::MaskedRows;
  k.copy_range = avx512::CopyRange;
  return k;
}();

}  // namespace hlox::rt::gemm
