// The dot kernel: validates attributes and hands off to DotGeneral (gemm/dot_general.h).
#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/gemm/dot_general.h"

namespace hlox::rt {

absl::StatusOr<Value> DotKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  if (!instr.shape().IsArray()) return KernelError(instr, "dot result must be an array");
  // XLA's HLO text reads a dot written without dimension numbers as one with none: no
  // contraction and no batch, so scalar x scalar multiplies and vector x vector is an outer
  // product.
  const DotDimensionNumbers dn = instr.attrs().dot.value_or(DotDimensionNumbers{});
  Value out = NewArray(instr.shape());
  // Codegen decisions (passes/fusion/codegen_tuning.cc) ride in the backend_config.
  const GemmTuning tuning =
      instr.attrs().has_backend_config ? ParseGemmTuning(instr.attrs().backend_config) : GemmTuning{};
  absl::Status st = DotGeneral(*lhs, *rhs, dn, *out.array, ctx.pool, 1.0, 0.0, tuning);
  if (!st.ok()) return KernelError(instr, std::string(st.message()));
  return out;
}

}  // namespace hlox::rt
