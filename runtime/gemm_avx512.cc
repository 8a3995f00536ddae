// The AVX-512 level's GEMM micro-kernel and its table (gemm_packed.h MicroKernels; packing in
// gemm_avx512_pack.cc): a 14 x 32 tile of C in 28 zmm accumulators. Compiled for AVX-512 inside
// a target pragma, every other header included first (see isa_avx512.cc).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/gemm_avx512_geometry.h"
#include "runtime/gemm_packed.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2")
// GCC 12 reports false (maybe-)uninitialized warnings inside the AVX-512 intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace hlox::rt::gemm::avx512 {
namespace {

__mmask16 Mask(int count) {
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

}  // namespace

// The kernel variant for an A layout, B packing and an [mr x nr] tile.
KernelFn PickKernel(bool pmajor, bool packed_b, int mr, int nr) {
  static constexpr const KernelFn* const* kAll[2][2] = {{kByWidth<false, false>, kByWidth<false, true>},
                                                        {kByWidth<true, false>, kByWidth<true, true>}};
  return kAll[pmajor][packed_b][nr > 16][mr <= 4 ? 0 : mr <= 8 ? 1 : 2];
}

namespace {

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
