// Convolution algorithm choices, for the codegen pass's "conv:<convolution>" decision sites
// (passes/fusion/codegen_tuning.cc) and the convolution kernel that honours them. The kernel
// (kernels/convolution.cc) has several ways to run one convolution: an im2col patch per tile of
// output positions times the kernel (tiles), one GEMM over all rows reducing over fixed chunks
// of taps (wide-k), a GEMM straight on the operands' own layouts from the input planes
// (planes: NCHW convolutions, any stride), and the weight-gradient form of stride-1 ones
// (plane-filter). Its own
// heuristic picks one from the shapes; a tuned backend_config picks another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt {

enum class ConvAlgorithm : uint8_t { kAuto = 0, kTiles = 1, kWideK = 2, kPlanes = 3, kPlaneFilter = 4 };

// backend_config keys hlox_conv_algo (1-4 as above) and hlox_threads (1: the calling thread
// only). Unknown or malformed values leave the runtime's choice.
struct ConvTuning {
  ConvAlgorithm algorithm = ConvAlgorithm::kAuto;
  int threads = -1;
};
ConvTuning ParseConvTuning(const std::string& backend_config);

// The algorithms other than kAuto that can run `conv` (f32 operands and result for the plane
// algorithms), whatever the instruction-set level: at a level without the packed GEMM (the
// generic one) the plane algorithms fall back to the default path, so a decision file means the
// same on every machine. Empty for a convolution the kernel would refuse, for depthwise ones
// (a single direct path) and for pointwise ones without a plane form (one GEMM is best).
std::vector<ConvAlgorithm> ConvAlgorithmsFor(const Instruction& conv);

// Runs `conv` (real element types) on lhs and rhs into `out`, a buffer of the instruction's
// shape, as its kernel would (same path, same bits). Where the convolution writes the result's
// layout directly in parts (depthwise rows and the tiles of ungrouped im2col convolutions with
// NHWC-style dim_labels, the GEMM parts of the plane path on NCHW-style ones), it tells `done`
// (may be null) as each part of `out` is final, from the thread that computed it, and returns
// true; an output fusion (kernels/output_fusion.h) applies its epilogue there. Otherwise it
// returns false, having told `done` nothing: the caller takes the whole result.
absl::StatusOr<bool> ConvolutionInto(const Instruction& conv, const Buffer& lhs, const Buffer& rhs, BufferPtr out,
                                     ThreadPool* pool, const ConvTuning& tuning, const DotEpilogue* done);

}  // namespace hlox::rt
