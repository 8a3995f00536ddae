// Output fusions: a dot or a convolution and the elementwise work on its result (bias, batch
// norm, activation, residual add, scale) run as one kernel. The dot or convolution runs into
// the fusion's output buffer, and the epilogue (the rest of the fused computation, with that
// result as a parameter) is applied to each part of the buffer as it is finished (a GEMM's
// tile, a convolution's tile or output row: gemm/dot_general.h DotEpilogue), so the result is
// read back from cache instead of memory, and no separate loop, buffer or dispatch is needed.
// Each output element is the same bits as the unfused dot or convolution and epilogue.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "runtime/core/thread_pool.h"
#include "runtime/conv/tuning.h"
#include "runtime/core/value.h"
#include "runtime/fused/program.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt {

class OutputFusion {
 public:
  // Compiles a fused computation of the form epilogue(op(p_a, p_b), other parameters), op a dot
  // or a convolution: exactly one of them, whose operands are parameters and whose result
  // reaches the root only through elementwise ops of the root's dims (each output element
  // reads op's element at its own index, so the epilogue may overwrite op's result in place);
  // the root is one array of op's dims. Unimplemented names what does not fit.
  static absl::StatusOr<std::unique_ptr<OutputFusion>> Compile(const Computation& comp, uint64_t seed);
  ~OutputFusion();

  // Runs the fusion on `operands` (one per parameter of the fused computation).
  // `gemm` tunes a dot, `conv` a convolution (the fusion's backend_config keys).
  absl::StatusOr<Value> Run(const std::vector<const Value*>& operands, ThreadPool* pool, const GemmTuning& gemm,
                            const ConvTuning& conv) const;

 private:
  OutputFusion() = default;

  std::unique_ptr<Computation> epilogue_comp_;  // the fused computation, op a parameter
  std::unique_ptr<FusedProgram> epilogue_;
  DotDimensionNumbers dnums_;                // a dot's
  std::unique_ptr<Computation> conv_comp_;   // a convolution's copy over two parameters
  const Instruction* conv_ = nullptr;        // ... and the copy (null for a dot)
  int64_t lhs_param_ = 0, rhs_param_ = 0;
  int64_t dot_param_ = 0;  // the epilogue's parameter standing for op's result
  Shape result_shape_;
};

}  // namespace hlox::rt
