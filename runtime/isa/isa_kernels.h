// The kernels that exist once per instruction-set level (common/cpu_isa.h), as one table per
// level: the f32 vector math, the fused register path's op kernels, half-precision
// conversions, the depthwise convolution row and the packed GEMM. Each level's table is built
// in its own translation unit (isa/level_avx512.cc, isa/level_avx2.cc, isa/level_generic.cc) compiled for that
// level with `#pragma GCC target`, from the same templated formulas (runtime/isa/simd/), so the
// rest of the runtime is built for the portable baseline and calls through the table of the
// active level. Elementwise results are the same bits on every level; GEMM results differ
// between levels (tile shapes change the summation order) but never with the thread count.
#pragma once

#include <cstdint>

#include "common/cpu_isa.h"
#include "runtime/fused/vector_ops.h"

namespace hlox::rt {

namespace gemm {
struct MicroKernels;  // gemm/packed.h
}

struct IsaKernels {
  IsaLevel level = IsaLevel::kGeneric;
  int lanes = 1;  // f32 lanes of a vector register

  // o[i] = f(a[i]) for i < n; a and o may be the same array. Same bits for an element
  // wherever it sits in the array (tails run the same formula).
  using ArrayFn = void (*)(const float* a, float* o, int64_t n);
  ArrayFn exp = nullptr, tanh = nullptr, erf = nullptr, logistic = nullptr, log = nullptr;
  ArrayFn sqrt = nullptr;  // correctly rounded

  // The register path's kernel for op `code` storing with `mode` over any multiple of 16
  // values (`micro`: exactly vecops::kMicroValues, whatever n says); null for an unknown code.
  vecops::OpFn (*op)(uint8_t code, vecops::StoreMode mode, bool micro) = nullptr;

  // Half precision (math/half.h's HalfType: bf16 or f16 bits), bit-identical to ir/literal.h.
  // d[i] = the float of s[i], i < n.
  void (*half_to_f32)(uint8_t type, const uint16_t* s, float* d, int64_t n) = nullptr;
  // d[i] = s[i] narrowed (nearest even, NaN kept quiet), i < n.
  void (*f32_to_half)(uint8_t type, const float* s, uint16_t* d, int64_t n) = nullptr;
  // x[i] = HalfToFloat(FloatToHalf(x[i])), i < n.
  void (*round_f16)(float* x, int64_t n) = nullptr;

  // One output row of a depthwise f32 convolution without channel multiplier
  // (conv/depthwise.cc); null where the portable loop is as good.
  void (*depthwise_row)(const int64_t* pl, int64_t wl, int64_t kl, int64_t channels, const float* in_b,
                        const int64_t* bases, const float* const* wrows, int64_t taps, float* orow) = nullptr;

  // The packed f32 GEMM's micro-kernels and packing (gemm/packed.h); null: Eigen's GEMM.
  const gemm::MicroKernels* gemm = nullptr;
};

// The table of `level` (any level; call it only for levels <= CpuIsa()).
const IsaKernels& KernelsFor(IsaLevel level);
// The table of the active level (ActiveIsa()).
inline const IsaKernels& Kernels() { return KernelsFor(ActiveIsa()); }

}  // namespace hlox::rt
