// Internal interface of the convolution kernel (kernels/convolution.cc). The kernel validates
// the instruction, brings the operands to canonical dense layouts and calls one of the paths
// declared here:
//   input  [n, in_0.., in_{S-1}, c]      (batch, spatial..., feature)
//   kernel [k_0.., k_{S-1}, ck, o]       (spatial..., input feature per group, output feature)
//   output [nout, out_0.., out_{S-1}, o]
// Every path splits its work into tasks fixed by the shapes alone and each output element is
// computed by exactly one task in a fixed order, so results are identical for any thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/attributes.h"
#include "runtime/conv/tuning.h"
#include "runtime/core/thread_pool.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt {

struct ConvGeometry {
  int64_t spatial = 0;                  // number of spatial dims
  std::vector<int64_t> in, k, out;      // spatial sizes
  std::vector<WindowDimension> win;
  int64_t n = 0, c = 0, ck = 0, o = 0;  // batch, input features, kernel in-features, out features
  int64_t groups = 1, batch_groups = 1;
};

// Index tables shared by the paths, derived from a ConvGeometry.
struct ConvIndex {
  const ConvGeometry* g = nullptr;
  int64_t nout = 0;   // output batch (n / batch_groups)
  int64_t P = 1;      // output positions per image
  int64_t KK = 1;     // kernel positions
  int64_t in_sp = 1;  // input positions per image
  // pos[d][o * k[d] + w]: input index read by output o and kernel element w along spatial dim
  // d, or -1 when that tap falls in padding or between base-dilated elements.
  std::vector<std::vector<int64_t>> pos;
  std::vector<int64_t> in_str;  // row-major strides of the input's spatial positions
  // True when along the last spatial dim consecutive taps read consecutive inputs (window
  // dilation 1, base dilation 1, no reversal), so a fully valid run is one contiguous block.
  bool last_contiguous = false;
};

// Builds the index tables for `g`.
ConvIndex MakeConvIndex(const ConvGeometry& g);

// True when the convolution is a plain matrix product per group: every kernel extent 1, no
// padding, stride 1, no base dilation, output extents equal to input extents, no batch groups.
bool IsPointwise(const ConvGeometry& g);

// `done` (may be null), on the paths below, is told as each part of the output holds its final
// values (runs of canonical output elements, the contract of gemm/dot_general.h's DotEpilogue),
// from the thread that computed it: an output fusion applies its epilogue there, while the part
// is still in cache.

// Depthwise (ck == 1, feature_group_count == c, any channel multiplier o / c, no batch
// groups): direct loop, channels innermost. Writes every output element; `done` per output row.
template <typename T>
void DepthwiseConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool,
                   const DotEpilogue* done = nullptr);

// Everything else: per (group, image, tile of output positions) an im2col patch (contiguous
// row copies) times the group's kernel columns; pointwise convolutions skip the patch and run
// one GEMM per group over all images. Writes every output element.
// `algorithm` kTiles or kWideK forces that path (conv/tuning.h); kAuto picks as above.
// `done` per tile, per part of C as the GEMM finishes it for ungrouped f32 pointwise
// convolutions (per group's columns otherwise), once for all of the output for wide-k ones.
template <typename T>
void GemmConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool,
              ConvAlgorithm algorithm = ConvAlgorithm::kAuto, const DotEpilogue* done = nullptr);

// True when the output has few rows (images x positions) and the reduction (taps x features)
// is long, e.g. a weight gradient: then WideKConv beats the tile path.
bool PreferWideK(const ConvIndex& ix);

// One GEMM per group over all output rows, reducing over fixed chunks of kernel taps in order
// (conv/wide_k.cc). Writes every output element.
template <typename T>
void WideKConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool);

// True when PlaneConv can run the convolution: 2 spatial dims that are the last two dims of
// input and output, no base dilation, no groups (any stride, padding, window dilation and
// reversal). Independent of the instruction-set level.
bool PlaneConvPossible(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank);
// PlaneConvPossible, the level has the packed GEMM, and the shapes make it the default choice.
bool PlaneConvApplies(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank);

// f32 convolution straight on the operands' layouts (conv/planes.cc): one GEMM per image with
// B packed from (shifted, or gathered when strided) input planes. Requires PlaneConvPossible and
// a level with the packed GEMM. Writes every output element; `done` per part of each image's
// GEMM, in the output's own layout (runs of output positions of a block of features).
void PlaneConv(const ConvDimensionNumbers& dn, const ConvGeometry& g, const float* lhs,
               const std::vector<int64_t>& lhs_dims, const float* rhs, const std::vector<int64_t>& rhs_dims,
               float* out, const std::vector<int64_t>& out_dims, ThreadPool* pool,
               const DotEpilogue* done = nullptr);

// True when PlaneFilterConv can run the convolution: the weight-gradient form of PlaneConv (2
// spatial dims last in input and kernel, window extents equal to the input's, stride 1, no
// dilation or reversal, no groups; any output layout). Independent of the level.
bool PlaneFilterConvPossible(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank);
// PlaneFilterConvPossible, the level has the packed GEMM, and the shapes make it the default.
bool PlaneFilterConvApplies(const ConvDimensionNumbers& dn, const ConvGeometry& g, int64_t rank);

// f32 weight-gradient-form convolution straight on the operands' layouts
// (conv/plane_filter.cc). Requires PlaneFilterConvApplies. Writes every output element.
void PlaneFilterConv(const ConvDimensionNumbers& dn, const ConvGeometry& g, const float* lhs,
                     const std::vector<int64_t>& lhs_dims, const float* rhs, const std::vector<int64_t>& rhs_dims,
                     float* out, const std::vector<int64_t>& out_dims, ThreadPool* pool);

}  // namespace hlox::rt
