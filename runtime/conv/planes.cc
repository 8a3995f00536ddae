// f32 2-D convolution on layouts that keep both spatial dims innermost (NCHW input and output,
// as PyTorch exports them), any stride, padding, window dilation and reversal. Per image it is
// one GEMM, out[f, p] = sum over (ci, tap) of w[f, (ci, tap)] * in[ci, at(p) + shift(tap)], with
// at(p) the input position of output position p's first tap. With stride 1 and output extents
// equal to the input's ("same" padding) at(p) = p, so a shifted input plane is contiguous over
// flattened positions and each k row of a B panel is one masked load (lanes in the padding or
// wrapping across an image row are masked to zero); otherwise each lane is gathered. No im2col
// matrix, no layout transposes of input or output; OIHW weights are A as they are (other kernel
// orders are copied once per call). The GEMM's k-blocking depends only on the shapes, so results
// do not depend on the thread count.
#include <algorithm>
#include <vector>

#include "runtime/conv/paths.h"
#include "runtime/core/kernel_util.h"
#include "runtime/gemm/packed.h"
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt {
namespace {

// Packs A = dense weights [o, KC] and B = shifted planes of one image.
class PlaneSource : public gemm::PanelSource {
 public:
  // masks[jp * kk + t]: valid lanes of B panel jp's columns (nr <= 32) for kernel element t.
  // `at`: input offset of each output position's first tap, or null when it is the position
  // itself (stride 1, same extents).
  PlaneSource(const float* w, int64_t kc_total, int64_t kk, const int64_t* shift, const uint32_t* masks,
              int64_t cstride, const int64_t* at)
      : w_(w), kc_total_(kc_total), kk_(kk), shift_(shift), masks_(masks), cstride_(cstride), at_(at) {}
  void set_image(const float* img) { img_ = img; }

  void PackA(const gemm::MicroKernels& mk, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) const override {
    mk.pack_a(false, w_, kc_total_, r0, mr, p0, kc, dst);
  }

  void PackB(const gemm::MicroKernels& mk, int64_t p0, int64_t kc, int64_t j0, int /*nr*/, float* dst) const override {
    const uint32_t* masks = masks_ + (j0 / mk.nr) * kk_;
    if (at_ != nullptr) {
      GatherB(mk, masks, p0, kc, j0, dst);
      return;
    }
    // The panel's kc rows as source pointers and lane masks, packed in one call. Masked-off
    // lanes are never read, so a shifted pointer may point outside the plane.
    thread_local std::vector<const float*> rows;
    thread_local std::vector<uint32_t> row_masks;
    rows.resize(kc);
    row_masks.resize(kc);
    int64_t ci = p0 / kk_, t = p0 % kk_;
    for (int64_t q = 0; q < kc; ++q) {
      rows[q] = img_ + ci * cstride_ + j0 + shift_[t];
      row_masks[q] = masks[t];
      if (++t == kk_) {
        t = 0;
        ++ci;
      }
    }
    mk.masked_rows(dst, rows.data(), row_masks.data(), kc, mk.nr);
  }

 private:
  // The strided form: lane j of k row (ci, t) reads img[ci * cstride + at[j0 + j] + shift[t]].
  void GatherB(const gemm::MicroKernels& mk, const uint32_t* masks, int64_t p0, int64_t kc, int64_t j0,
               float* dst) const {
    int64_t ci = p0 / kk_, t = p0 % kk_;
    const int64_t* at = at_ + j0;
    for (int64_t q = 0; q < kc; ++q, dst += mk.nr) {
      const float* src = img_ + ci * cstride_ + shift_[t];
      const uint32_t m = masks[t];
      for (int j = 0; j < mk.nr; ++j) dst[j] = (m >> j) & 1u ? src[at[j]] : 0.0f;
      if (++t == kk_) {
        t = 0;
        ++ci;
      }
    }
  }

  const float* w_;
  int64_t kc_total_, kk_;
  const int64_t* shift_;
  const uint32_t* masks_;
  int64_t cstride_;
  const int64_t* at_;
  const float* img_ = nullptr;
};

}  // namespace

bool PlaneConvPossible(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank) {
  if (g.spatial != 2 || g.groups != 1 || g.batch_groups != 1 || rank != 4) return false;
  if (dn.input_spatial != std::vector<int64_t>{2, 3} || dn.output_spatial != std::vector<int64_t>{2, 3}) return false;
  for (int64_t d = 0; d < 2; ++d) {
    if (g.win[d].base_dilation != 1) return false;
  }
  return true;
}

namespace {
// Stride 1 and output extents equal to the input's: output position p reads input position p
// shifted by the tap, so B's k rows are contiguous.
bool SamePlanes(const ConvGeometry& g) {
  for (int64_t d = 0; d < 2; ++d) {
    if (g.win[d].stride != 1 || g.out[d] != g.in[d]) return false;
  }
  return true;
}
}  // namespace

bool PlaneConvApplies(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank) {
  if (Kernels().gemm == nullptr || !PlaneConvPossible(dn, g, rank)) return false;  // no packed GEMM
  // Worth it only with enough output positions for the column panels and enough output rows.
  // Weight-gradient forms (a window as large as the image, a few output positions) fail the
  // first test; the kernel tries the plane-filter path before this one.
  return g.out[0] * g.out[1] >= 32 && g.o >= 8 && g.c >= 1;
}

void PlaneConv(const ConvDimensionNumbers& dn, const ConvGeometry& g, const float* lhs,
               const std::vector<int64_t>& lhs_dims, const float* rhs, const std::vector<int64_t>& rhs_dims,
               float* out, const std::vector<int64_t>& out_dims, ThreadPool* pool, const DotEpilogue* done) {
  const gemm::MicroKernels& mk = *Kernels().gemm;  // the caller checked the level has one
  const std::vector<int64_t> ls = RowMajorStrides(lhs_dims), ks = RowMajorStrides(rhs_dims),
                             os = RowMajorStrides(out_dims);
  const int64_t kh = g.k[0], kw = g.k[1], kk = kh * kw, kc_total = g.c * kk;
  const int64_t h = g.in[0], wd = g.in[1], oh = g.out[0], ow = g.out[1], P = oh * ow;
  if (g.n == 0 || g.o == 0 || P == 0) return;
  if (kc_total == 0) {
    for (int64_t b = 0; b < g.n; ++b) {
      for (int64_t f = 0; f < g.o; ++f) std::fill_n(out + b * os[dn.output_batch] + f * os[dn.output_feature], P, 0.0f);
    }
    return;
  }
  // The weights as A = dense [o, (ci, ky, kx)] in kernel-element order: OIHW kernels are that
  // already, other orders are copied.
  const int64_t ko = ks[dn.kernel_output_feature], ki = ks[dn.kernel_input_feature];
  const int64_t ky = ks[dn.kernel_spatial[0]], kx = ks[dn.kernel_spatial[1]];
  std::vector<float> w_copy;
  const float* w = rhs;
  if (ko != kc_total || ki != kk || ky != kw || kx != 1) {
    w_copy.resize(g.o * kc_total);
    for (int64_t f = 0; f < g.o; ++f) {
      for (int64_t ci = 0; ci < g.c; ++ci) {
        const float* src = rhs + f * ko + ci * ki;
        float* d = w_copy.data() + f * kc_total + ci * kk;
        for (int64_t y = 0; y < kh; ++y) {
          for (int64_t x = 0; x < kw; ++x) d[y * kw + x] = src[y * ky + x * kx];
        }
      }
    }
    w = w_copy.data();
  }
  // Input offset of every kernel element (window reversal and dilation included).
  const WindowDimension &wy = g.win[0], &wx = g.win[1];
  std::vector<int64_t> dy(kk), dx(kk), shift(kk);
  for (int64_t y = 0; y < kh; ++y) {
    for (int64_t x = 0; x < kw; ++x) {
      const int64_t py = wy.reversal ? kh - 1 - y : y, px = wx.reversal ? kw - 1 - x : x;
      const int64_t t = y * kw + x;
      dy[t] = py * wy.window_dilation - wy.pad_low;
      dx[t] = px * wx.window_dilation - wx.pad_low;
      shift[t] = dy[t] * wd + dx[t];
    }
  }
  // Each output position's first-tap input offset when the positions are not the input's own.
  const bool same = SamePlanes(g);
  std::vector<int64_t> at;
  if (!same) {
    at.resize(P);
    for (int64_t pos = 0; pos < P; ++pos) at[pos] = (pos / ow) * wy.stride * wd + (pos % ow) * wx.stride;
  }
  const int64_t np = (P + mk.nr - 1) / mk.nr;
  std::vector<uint32_t> masks(np * kk);
  for (int64_t jp = 0; jp < np; ++jp) {
    for (int64_t t = 0; t < kk; ++t) {
      uint32_t m = 0;
      for (int64_t j = 0; j < mk.nr && jp * mk.nr + j < P; ++j) {
        const int64_t pos = jp * mk.nr + j;
        const int64_t y = (pos / ow) * wy.stride + dy[t], x = (pos % ow) * wx.stride + dx[t];
        if (y >= 0 && y < h && x >= 0 && x < wd) m |= uint32_t{1} << j;
      }
      masks[jp * kk + t] = m;
    }
  }
  PlaneSource src(w, kc_total, kk, shift.data(), masks.data(), ls[dn.input_feature], same ? nullptr : at.data());
  for (int64_t b = 0; b < g.n; ++b) {
    src.set_image(lhs + b * ls[dn.input_batch]);
    const int64_t first = b * os[dn.output_batch], fstride = os[dn.output_feature];
    const GemmDone part = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
      (*done)(first + r0 * fstride + c0, r1 - r0, fstride, c1 - c0);
    };
    gemm::SgemmPanels(mk, g.o, P, kc_total, src, out + first, fstride, false, pool, done != nullptr ? &part : nullptr);
  }
}

}  // namespace hlox::rt
