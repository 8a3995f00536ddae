// Convolution as GEMM. Pointwise convolutions (1x1, stride 1, unpadded) are one GEMM per
// feature group over all images, reading the NHWC input in place. Everything else goes tile by
// tile: a task owns (group, image, tile of output positions), gathers the tile's im2col patch
// [rows, k_0*..*k_{S-1}*ck] into a buffer sized for L2 (a run of taps along the last spatial
// dim that is fully inside the input is one contiguous copy when the group spans all input
// features), and multiplies it with the group's kernel columns. f32 uses rt::Sgemm, f64
// Eigen. Tiles depend only on the shapes and each task's GEMM runs on one thread, so the
// result does not depend on the thread count.
// GCC 12 reports false -Wmaybe-uninitialized inside Eigen's AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "runtime/conv/paths.h"
#include "runtime/gemm/dot_general.h"
#include "runtime/gemm/gemm.h"

namespace hlox::rt {
namespace {

// c[rows, n] (ldc) = a[rows, kc] (lda) * b[kc, n] (ldb).
void Gemm(int64_t rows, int64_t n, int64_t kc, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c, int64_t ldc, ThreadPool* pool) {
  Sgemm(false, false, rows, n, kc, a, lda, b, ldb, c, ldc, false, pool);
}

void Gemm(int64_t rows, int64_t n, int64_t kc, const double* a, int64_t lda, const double* b,
          int64_t ldb, double* c, int64_t ldc, ThreadPool* pool) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  constexpr int64_t kRowBlock = 256;
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t r0 = blk * kRowBlock, nr = std::min(kRowBlock, rows - r0);
      Eigen::Map<const Mat, 0, Stride> am(a + r0 * lda, nr, kc, Stride(lda));
      Eigen::Map<const Mat, 0, Stride> bm(b, kc, n, Stride(ldb));
      Eigen::Map<Mat, 0, Stride> cm(c + r0 * ldc, nr, n, Stride(ldc));
      cm.noalias() = am * bm;
    }
  };
  if (pool != nullptr && blocks > 1) pool->ParallelFor(blocks, 1, body);
  else body(0, blocks);
}

// Writes the im2col row of output position `oi` (taps in kernel order, ck features each) for
// the image at in_b, reading features [cin_off, cin_off + ck) of each input position.
template <typename T>
void PatchRow(const ConvIndex& ix, const std::vector<int64_t>& oi, const T* in_b, int64_t cin_off,
              T* prow, std::vector<int64_t>& ki) {
  const ConvGeometry& g = *ix.g;
  const int64_t S = g.spatial, ck = g.ck, c = g.c;
  if (S == 0) {
    std::copy_n(in_b + cin_off, ck, prow);
    return;
  }
  const int64_t kl = g.k[S - 1];
  const int64_t* pl = ix.pos[S - 1].data() + oi[S - 1] * kl;
  const bool run = ix.last_contiguous && ck == c && kl > 0 && pl[0] >= 0 && pl[kl - 1] >= 0;
  const int64_t outer_taps = ix.KK / std::max<int64_t>(kl, 1);
  std::fill(ki.begin(), ki.end(), 0);
  for (int64_t t = 0; t < outer_taps; ++t, prow += kl * ck) {
    int64_t base = 0;
    bool valid = true;
    for (int64_t d = 0; d + 1 < S; ++d) {
      const int64_t ip = ix.pos[d][oi[d] * g.k[d] + ki[d]];
      if (ip < 0) {
        valid = false;
        break;
      }
      base += ip * ix.in_str[d];
    }
    for (int64_t d = S - 2; d >= 0; --d) {
      if (++ki[d] < g.k[d]) break;
      ki[d] = 0;
    }
    if (!valid) {
      std::fill_n(prow, kl * ck, T(0));
    } else if (run) {
      std::memcpy(prow, in_b + (base + pl[0]) * c, sizeof(T) * kl * c);
    } else {
      for (int64_t w = 0; w < kl; ++w) {
        if (pl[w] >= 0) std::copy_n(in_b + (base + pl[w]) * c + cin_off, ck, prow + w * ck);
        else std::fill_n(prow + w * ck, ck, T(0));
      }
    }
  }
}

}  // namespace

ConvIndex MakeConvIndex(const ConvGeometry& g) {
  ConvIndex ix;
  ix.g = &g;
  const int64_t S = g.spatial;
  ix.nout = g.batch_groups > 0 ? g.n / g.batch_groups : 0;
  for (int64_t d = 0; d < S; ++d) {
    ix.P *= g.out[d];
    ix.KK *= g.k[d];
    ix.in_sp *= g.in[d];
  }
  ix.pos.resize(S);
  for (int64_t d = 0; d < S; ++d) {
    const WindowDimension& w = g.win[d];
    const int64_t dilated_in = g.in[d] == 0 ? 0 : (g.in[d] - 1) * w.base_dilation + 1;
    ix.pos[d].assign(g.out[d] * g.k[d], -1);
    for (int64_t o = 0; o < g.out[d]; ++o) {
      for (int64_t kk = 0; kk < g.k[d]; ++kk) {
        const int64_t wpos = w.reversal ? g.k[d] - 1 - kk : kk;
        const int64_t p = o * w.stride - w.pad_low + wpos * w.window_dilation;
        if (p < 0 || p >= dilated_in || p % w.base_dilation != 0) continue;
        ix.pos[d][o * g.k[d] + kk] = p / w.base_dilation;
      }
    }
  }
  ix.in_str.assign(S, 1);
  for (int64_t d = S - 2; d >= 0; --d) ix.in_str[d] = ix.in_str[d + 1] * g.in[d + 1];
  if (S > 0) {
    const WindowDimension& w = g.win[S - 1];
    ix.last_contiguous = w.window_dilation == 1 && w.base_dilation == 1 && !w.reversal;
  }
  return ix;
}

bool IsPointwise(const ConvGeometry& g) {
  if (g.batch_groups != 1) return false;
  for (int64_t d = 0; d < g.spatial; ++d) {
    const WindowDimension& w = g.win[d];
    if (g.k[d] != 1 || w.pad_low != 0 || w.pad_high != 0 || w.stride != 1 ||
        w.base_dilation != 1 || g.in[d] != g.out[d]) {
      return false;
    }
  }
  return true;
}

template <typename T>
void GemmConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool, ConvAlgorithm algorithm,
              const DotEpilogue* done) {
  const ConvGeometry& g = *ix.g;
  const int64_t S = g.spatial, P = ix.P, nout = ix.nout;
  const int64_t total_groups = g.groups * g.batch_groups;
  const int64_t og = g.o / total_groups;
  const int64_t KC = ix.KK * g.ck;
  if (nout * P == 0 || og == 0) return;
  if (KC == 0) {
    std::fill_n(out, nout * P * g.o, T(0));
    if (done != nullptr) (*done)(0, 1, 0, nout * P * g.o);
    return;
  }
  if (algorithm == ConvAlgorithm::kAuto && IsPointwise(g)) {
    for (int64_t grp = 0; grp < g.groups; ++grp) {
      T* c = out + grp * og;
      if constexpr (std::is_same_v<T, float>) {
        if (done != nullptr && g.groups == 1) {  // each part of C as the GEMM finishes it
          const GemmDone part = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
            (*done)(r0 * g.o + c0, r1 - r0, g.o, c1 - c0);
          };
          GemmT<float>(false, false, nout * P, og, g.ck, in, g.c, k, g.o, c, g.o, false, pool, {}, &part);
          continue;
        }
      }
      Gemm(nout * P, og, g.ck, in + grp * g.ck, g.c, k + grp * og, g.o, c, g.o, pool);
      if (done != nullptr) (*done)(grp * og, nout * P, g.o, og);
    }
    return;
  }
  if (algorithm == ConvAlgorithm::kWideK || (algorithm == ConvAlgorithm::kAuto && PreferWideK(ix))) {
    WideKConv(ix, in, k, out, pool);
    if (done != nullptr) (*done)(0, 1, 0, nout * P * g.o);
    return;
  }
  // Rows per tile: a patch of about 64K elements (256 KB in f32) stays in L2.
  const int64_t tile = std::min(P, std::max<int64_t>(16, 65536 / KC));
  const int64_t tiles = (P + tile - 1) / tile;
  const int64_t tasks = total_groups * nout * tiles;
  auto body = [&](int64_t lo, int64_t hi) {
    std::vector<T> patch(tile * KC);
    std::vector<int64_t> oi(S), ki(S);
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t grp = t / (nout * tiles);
      const int64_t ob = (t / tiles) % nout;
      const int64_t p0 = (t % tiles) * tile;
      const int64_t rows = std::min(tile, P - p0);
      const int64_t cin_off = g.groups > 1 ? grp * g.ck : 0;
      const int64_t ib = g.batch_groups > 1 ? grp * nout + ob : ob;
      const T* in_b = in + ib * ix.in_sp * g.c;
      int64_t lin = p0;
      for (int64_t d = S - 1; d >= 0; --d) {
        oi[d] = lin % g.out[d];
        lin /= g.out[d];
      }
      for (int64_t r = 0; r < rows; ++r) {
        PatchRow(ix, oi, in_b, cin_off, patch.data() + r * KC, ki);
        for (int64_t d = S - 1; d >= 0; --d) {
          if (++oi[d] < g.out[d]) break;
          oi[d] = 0;
        }
      }
      Gemm(rows, og, KC, patch.data(), KC, k + grp * og, g.o, out + (ob * P + p0) * g.o + grp * og,
           g.o, nullptr);
      if (done != nullptr) {
        if (og == g.o) (*done)((ob * P + p0) * g.o, 1, 0, rows * g.o);
        else (*done)((ob * P + p0) * g.o + grp * og, rows, g.o, og);
      }
    }
  };
  const int64_t work = tile * KC * og;
  const int64_t grain = work > 32768 ? 1 : std::max<int64_t>(1, 32768 / std::max<int64_t>(work, 1));
  if (pool != nullptr) pool->ParallelFor(tasks, grain, body);
  else body(0, tasks);
}

template void GemmConv<float>(const ConvIndex&, const float*, const float*, float*, ThreadPool*, ConvAlgorithm,
                              const DotEpilogue*);
template void GemmConv<double>(const ConvIndex&, const double*, const double*, double*, ThreadPool*, ConvAlgorithm,
                               const DotEpilogue*);

}  // namespace hlox::rt
