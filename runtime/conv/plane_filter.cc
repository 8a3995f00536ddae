// The weight-gradient form of a stride-1 f32 2-D convolution on layouts that keep both spatial
// dims innermost (what autograd emits for an NCHW convolution: the "window" is a whole image
// plane and the output is the small kernel). As a GEMM, C[(b, oy, ox), f] = sum over (i, ky,
// kx) of in[i, b, oy + ky - pad, ox + kx - pad] * w[i, f, ky, kx]: each row of A is an input
// plane shifted by the output position, so A panels are packed straight from the input (masked
// loads per plane row, padding lanes zero), and B panels are the kernel operand's planes read
// transposed. One GEMM over all rows, C in scratch, then scattered into the output layout. The
// GEMM's k-blocking depends only on the shapes, so results do not depend on the thread count.
#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/conv/paths.h"
#include "runtime/core/kernel_util.h"
#include "runtime/gemm/packed.h"
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt {
namespace {

// A: rows (b, oy, ox), k = (i, plane position); B: k x f from the kernel operand's planes.
class FilterSource : public gemm::PanelSource {
 public:
  FilterSource(const float* in, int64_t in_b, int64_t in_i, const float* w, int64_t w_i, int64_t w_f, int64_t h,
               int64_t wd, int64_t oh, int64_t ow, int64_t pad_y, int64_t pad_x)
      : in_(in), in_b_(in_b), in_i_(in_i), w_(w), w_i_(w_i), w_f_(w_f), h_(h), wd_(wd), oh_(oh), ow_(ow),
        pad_y_(pad_y), pad_x_(pad_x) {}

  void PackA(const gemm::MicroKernels& mk, int64_t r0, int mr, int64_t p0, int64_t kc, float* dst) const override {
    // The k-range as runs within one plane row: the same for every row of the panel.
    struct Run {
      int64_t src, ky, kx0, len, off;  // src: plane offset of the row start (i * in_i + ky * wd)
    };
    thread_local std::vector<Run> runs;
    runs.clear();
    const int64_t plane = h_ * wd_;
    int64_t i = p0 / plane, ky = p0 % plane / wd_, kx0 = p0 % wd_;
    for (int64_t q = p0; q < p0 + kc;) {
      const int64_t len = std::min(p0 + kc - q, wd_ - kx0);
      runs.push_back({i * in_i_ + ky * wd_, ky, kx0, len, q - p0});
      q += len;
      kx0 = 0;
      if (++ky == h_) {
        ky = 0;
        ++i;
      }
    }
    for (int r = 0; r < mk.mr; ++r) {
      float* d = dst + r * mk.a_stride;
      if (r >= mr) {
        std::fill_n(d, kc, 0.0f);
        continue;
      }
      const int64_t row = r0 + r, b = row / (oh_ * ow_), oy = row / ow_ % oh_, ox = row % ow_;
      const int64_t sy = oy - pad_y_, sx = ox - pad_x_;
      // Valid kx: 0 <= kx + sx < wd.
      const int64_t x_lo = std::max<int64_t>(0, -sx), x_hi = std::min(wd_, wd_ - sx);
      const float* img = in_ + b * in_b_ + sy * wd_ + sx;
      for (const Run& run : runs) {
        // Masked loads of the valid lanes, zeros elsewhere. Masked-off lanes are never read, so
        // the shifted pointer may point outside the plane. Whole-vector stores: a panel row has
        // a_stride >= kc + 16 floats, and lanes past this run are rewritten by the next one.
        const int64_t y = run.ky + sy;
        float* o = d + run.off;
        if (y < 0 || y >= h_) {
          std::fill_n(o, run.len, 0.0f);
          continue;
        }
        const float* srow = img + run.src + run.kx0;
        // Valid lanes relative to the run start.
        const int64_t lo = std::max(x_lo, run.kx0) - run.kx0, hi = std::min(x_hi, run.kx0 + run.len) - run.kx0;
        mk.copy_range(o, srow, lo, hi, run.len);
      }
    }
  }

  void PackB(const gemm::MicroKernels& mk, int64_t p0, int64_t kc, int64_t j0, int nr, float* dst) const override {
    const int64_t plane = h_ * wd_;
    int64_t q = p0;
    const int64_t q_end = p0 + kc;
    while (q < q_end) {
      const int64_t i = q / plane, pos = q % plane, len = std::min(q_end - q, plane - pos);
      mk.pack_b(true, w_ + i * w_i_, w_f_, pos, len, j0, nr, dst + (q - p0) * mk.nr);
      q += len;
    }
  }

 private:
  const float* in_;
  int64_t in_b_, in_i_;
  const float* w_;
  int64_t w_i_, w_f_, h_, wd_, oh_, ow_, pad_y_, pad_x_;
};

}  // namespace

bool PlaneFilterConvPossible(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank) {
  if (g.spatial != 2 || g.groups != 1 || g.batch_groups != 1 || rank != 4) return false;
  if (dn.input_spatial != std::vector<int64_t>{2, 3} || dn.kernel_spatial != std::vector<int64_t>{2, 3}) return false;
  for (int64_t d = 0; d < 2; ++d) {
    const WindowDimension& w = g.win[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.reversal || g.k[d] != g.in[d]) {
      return false;
    }
  }
  return true;
}

bool PlaneFilterConvApplies(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank) {
  if (Kernels().gemm == nullptr || !PlaneFilterConvPossible(dn, g, rank)) return false;  // no packed GEMM
  // A long reduction over planes, and enough output columns to fill the micro-tiles.
  return g.in[0] * g.in[1] >= 256 && g.o >= 16;
}

void PlaneFilterConv(const ConvDimensionNumbers& dn, const ConvGeometry& g, const float* lhs,
                     const std::vector<int64_t>& lhs_dims, const float* rhs, const std::vector<int64_t>& rhs_dims,
                     float* out, const std::vector<int64_t>& out_dims, ThreadPool* pool) {
  const gemm::MicroKernels& mk = *Kernels().gemm;  // the caller checked the level has one
  const std::vector<int64_t> ls = RowMajorStrides(lhs_dims), ks = RowMajorStrides(rhs_dims),
                             os = RowMajorStrides(out_dims);
  const int64_t oh = g.out[0], ow = g.out[1], rows = g.n * oh * ow, k = g.c * g.in[0] * g.in[1];
  if (rows == 0 || g.o == 0) return;
  std::vector<float> c(rows * g.o, 0.0f);
  if (k > 0) {
    FilterSource src(lhs, ls[dn.input_batch], ls[dn.input_feature], rhs, ks[dn.kernel_input_feature],
                     ks[dn.kernel_output_feature], g.in[0], g.in[1], oh, ow, g.win[0].pad_low, g.win[1].pad_low);
    gemm::SgemmPanels(mk, rows, g.o, k, src, c.data(), g.o, false, pool);
  }
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        const float* cr = c.data() + ((b * oh + y) * ow + x) * g.o;
        float* o = out + b * os[dn.output_batch] + y * os[dn.output_spatial[0]] + x * os[dn.output_spatial[1]];
        for (int64_t f = 0; f < g.o; ++f) o[f * os[dn.output_feature]] = cr[f];
      }
    }
  }
}

}  // namespace hlox::rt
