// Output fusions: a dot and the elementwise work on its result (bias, activation, residual
// add, scale) run as one kernel. The dot runs into the fusion's output buffer, and the
// epilogue (the rest of the fused computation, with the dot's result as a parameter) is
// applied to each part of that buffer as the GEMM finishes it (gemm/dot_general.h
// DotEpilogue), so the dot's result is read back from cache instead of memory, and no
// separate loop, buffer or dispatch is needed. Each output element is the same bits as the
// dot followed by the unfused epilogue.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/program.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt {

class OutputFusion {
 public:
  // Compiles a fused computation of the form epilogue(dot(p_a, p_b), other parameters): exactly
  // one dot, whose operands are parameters and whose result reaches the root only through
  // elementwise ops of the root's dims (each output element reads the dot's element at its own
  // index, so the epilogue may overwrite the dot's result in place); the root is one array of
  // the dot's dims. Unimplemented names what does not fit.
  static absl::StatusOr<std::unique_ptr<OutputFusion>> Compile(const Computation& comp, uint64_t seed);
  ~OutputFusion();

  // Runs the fusion on `operands` (one per parameter of the fused computation).
  absl::StatusOr<Value> Run(const std::vector<const Value*>& operands, ThreadPool* pool,
                            const GemmTuning& tuning) const;

 private:
  OutputFusion() = default;

  std::unique_ptr<Computation> epilogue_comp_;  // the fused computation, the dot a parameter
  std::unique_ptr<FusedProgram> epilogue_;
  DotDimensionNumbers dnums_;
  int64_t lhs_param_ = 0, rhs_param_ = 0;
  int64_t dot_param_ = 0;  // the epilogue's parameter standing for the dot's result
  Shape result_shape_;
};

}  // namespace hlox::rt
