// Convolution with few output rows and a long reduction (kernel window much larger than the
// output, as in the weight gradient of a convolution, where the "window" is a whole image and
// the output is the kernel). The tile path would re-read all of the kernel columns once per
// image; here every output row of a group (all images times all output positions) forms one
// GEMM, and the reduction runs chunk by chunk over the kernel taps: each chunk gathers the
// patch columns of its taps for all rows (L2-sized), then out (+)= patch * kernel rows of
// those taps. Chunks depend only on the shapes and are added in order, so the result does not
// depend on the thread count.
#include <algorithm>
#include <cstring>

#include "runtime/conv/paths.h"
#include "runtime/gemm/gemm.h"

namespace hlox::rt {
namespace {

// A run of taps along the last spatial dim for one combination of the outer kernel indices.
struct Segment {
  std::vector<int64_t> outer;  // kernel index along dims 0..S-2
  int64_t w0 = 0, w1 = 0;      // last-dim kernel range
};

constexpr int64_t kPatchFloats = 1 << 17;  // patch chunk budget (512 KB in f32)
constexpr int64_t kMinCols = 256;          // never fewer patch columns per chunk (GEMM depth)

// Writes the patch columns of `segs` for output position `oi` of the image at in_b.
template <typename T>
void FillRow(const ConvIndex& ix, const std::vector<Segment>& segs, const int64_t* oi, const T* in_b,
             int64_t cin_off, T* dst) {
  const ConvGeometry& g = *ix.g;
  const int64_t S = g.spatial, ck = g.ck, c = g.c;
  for (const Segment& s : segs) {
    const int64_t n = (s.w1 - s.w0) * ck;
    int64_t base = 0;
    bool valid = true;
    for (int64_t d = 0; d + 1 < S; ++d) {
      const int64_t ip = ix.pos[d][oi[d] * g.k[d] + s.outer[d]];
      if (ip < 0) {
        valid = false;
        break;
      }
      base += ip * ix.in_str[d];
    }
    if (!valid) {
      std::fill_n(dst, n, T(0));
    } else if (S == 0) {
      std::copy_n(in_b + cin_off, ck, dst);
    } else {
      const int64_t kl = g.k[S - 1];
      const int64_t* pl = ix.pos[S - 1].data() + oi[S - 1] * kl;
      if (ix.last_contiguous && ck == c && pl[s.w0] >= 0 && pl[s.w1 - 1] >= 0) {
        std::memcpy(dst, in_b + (base + pl[s.w0]) * c, sizeof(T) * n);
      } else {
        for (int64_t w = s.w0; w < s.w1; ++w) {
          T* o = dst + (w - s.w0) * ck;
          if (pl[w] >= 0) std::copy_n(in_b + (base + pl[w]) * c + cin_off, ck, o);
          else std::fill_n(o, ck, T(0));
        }
      }
    }
    dst += n;
  }
}

}  // namespace

bool PreferWideK(const ConvIndex& ix) {
  const ConvGeometry& g = *ix.g;
  const int64_t kc = ix.KK * g.ck, rows = ix.nout * ix.P;
  // Long enough that re-reading the kernel per tile would dominate; rows few enough that a
  // chunk of kMinCols columns for all rows stays within a few patch budgets.
  return kc >= 2048 && rows * kMinCols <= 4 * kPatchFloats;
}

template <typename T>
void WideKConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool) {
  const ConvGeometry& g = *ix.g;
  const int64_t S = g.spatial, P = ix.P, nout = ix.nout, ck = g.ck;
  const int64_t total_groups = g.groups * g.batch_groups;
  const int64_t og = g.o / total_groups, R = nout * P;
  if (R == 0 || og == 0) return;
  const int64_t kl = S > 0 ? g.k[S - 1] : 1;
  // Segments: taps in kernel order, a last-dim row split so one segment fits the budget.
  const int64_t cols_cap = std::max(kMinCols, kPatchFloats / R);
  const int64_t seg_w = std::clamp<int64_t>(cols_cap / std::max<int64_t>(ck, 1), 1, std::max<int64_t>(kl, 1));
  std::vector<Segment> all;
  std::vector<int64_t> outer(std::max<int64_t>(S - 1, 0), 0);
  const int64_t outer_taps = ix.KK / std::max<int64_t>(kl, 1);
  for (int64_t t = 0; t < outer_taps; ++t) {
    for (int64_t w0 = 0; w0 < kl; w0 += seg_w) all.push_back({outer, w0, std::min(kl, w0 + seg_w)});
    for (int64_t d = S - 2; d >= 0; --d) {
      if (++outer[d] < g.k[d]) break;
      outer[d] = 0;
    }
  }
  // Chunks: consecutive segments up to cols_cap columns (at least one segment each).
  std::vector<std::pair<size_t, size_t>> chunks;
  for (size_t s = 0; s < all.size();) {
    size_t e = s;
    int64_t cols = 0;
    while (e < all.size() && (e == s || cols + (all[e].w1 - all[e].w0) * ck <= cols_cap)) {
      cols += (all[e].w1 - all[e].w0) * ck;
      ++e;
    }
    chunks.push_back({s, e});
    s = e;
  }
  // Output position indices of every row, computed once.
  std::vector<int64_t> oidx(P * std::max<int64_t>(S, 1), 0);
  for (int64_t p = 0; p < P; ++p) {
    int64_t lin = p;
    for (int64_t d = S - 1; d >= 0; --d) {
      oidx[p * S + d] = lin % g.out[d];
      lin /= g.out[d];
    }
  }
  std::vector<T> patch;
  for (int64_t grp = 0; grp < total_groups; ++grp) {
    const int64_t cin_off = g.groups > 1 ? grp * ck : 0;
    int64_t tap0 = 0;  // first tap of the chunk (kernel row tap0 * ck)
    for (size_t ci = 0; ci < chunks.size(); ++ci) {
      const std::vector<Segment> segs(all.begin() + chunks[ci].first, all.begin() + chunks[ci].second);
      int64_t taps = 0;
      for (const Segment& s : segs) taps += s.w1 - s.w0;
      const int64_t cols = taps * ck;
      patch.resize(R * cols);
      auto fill = [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          const int64_t ob = r / P, p = r % P;
          const int64_t ib = g.batch_groups > 1 ? grp * nout + ob : ob;
          FillRow(ix, segs, oidx.data() + p * S, in + ib * ix.in_sp * g.c, cin_off, patch.data() + r * cols);
        }
      };
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
      if (pool != nullptr) pool->ParallelFor(R, grain, fill);
      else fill(0, R);
      GemmT<T>(false, false, R, og, cols, patch.data(), cols, k + tap0 * ck * g.o + grp * og, g.o,
               out + grp * og, g.o, ci > 0, pool);
      tap0 += taps;
    }
  }
}

template void WideKConv<float>(const ConvIndex&, const float*, const float*, float*, ThreadPool*);
template void WideKConv<double>(const ConvIndex&, const double*, const double*, double*, ThreadPool*);

}  // namespace hlox::rt
