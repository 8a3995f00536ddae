// Convolution algorithm choices, for the codegen pass's "conv:<convolution>" decision sites
// (passes/fusion/codegen_tuning.cc) and the convolution kernel that honours them. The kernel
// (kernels/convolution.cc) has several ways to run one convolution: an im2col patch per tile of
// output positions times the kernel (tiles), one GEMM over all rows reducing over fixed chunks
// of taps (wide-k), a GEMM straight on the operands' own layouts from shifted input planes
// (planes: NCHW stride-1 convolutions), and its weight-gradient form (plane-filter). Its own
// heuristic picks one from the shapes; a tuned backend_config picks another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/instruction.h"

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

}  // namespace hlox::rt
