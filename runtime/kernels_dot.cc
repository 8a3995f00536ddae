// The dot kernel: validates attributes and hands off to DotGeneral (dot.h).
#include "common/status_macros.h"
#include "runtime/dot.h"
#include "runtime/kernel.h"
#include "runtime/kernel_util.h"

namespace hlox::rt {

absl::StatusOr<Value> DotKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  if (!instr.shape().IsArray()) return KernelError(instr, "dot result must be an array");
  DotDimensionNumbers dn;
  if (instr.attrs().dot) {
    dn = *instr.attrs().dot;
  } else {
    // Classic dot: contract lhs's last dim with rhs's first (rhs rank 2) or only dim.
    if (lhs->shape().rank() < 1 || rhs->shape().rank() < 1) return KernelError(instr, "dot of scalars needs dimension numbers");
    dn.lhs_contracting = {lhs->shape().rank() - 1};
    dn.rhs_contracting = {0};
  }
  Value out = NewArray(instr.shape());
  absl::Status st = DotGeneral(*lhs, *rhs, dn, *out.array, ctx.pool);
  if (!st.ok()) return KernelError(instr, std::string(st.message()));
  return out;
}

}  // namespace hlox::rt
