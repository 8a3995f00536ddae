// Packing for the AVX-512 f32 GEMM (gemm_avx512_geometry.h), compiled for AVX-512 inside a
// target pragma (see isa_avx512.cc). Every layout is chosen so packing is a plain
// copy of contiguous runs, except transposed B, which goes through 16x16 in-register transposes.
// Padding (rows past m, columns past n) is written as zeros so the kernel never reads garbage.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "runtime/gemm_avx512_geometry.h"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c,bmi,bmi2")
// GCC 12 reports false (maybe-)uninitialized warnings inside the AVX-512 intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace hlox::rt::gemm::avx512 {
namespace {

__mmask16 Mask(int64_t count) {
  return count >= 16 ? __mmask16(0xFFFF) : count <= 0 ? __mmask16(0) : __mmask16((1u << count) - 1);
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

}  // namespace

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

}  // namespace hlox::rt::gemm::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
