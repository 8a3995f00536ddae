// In-place donation analysis for the executor: which operands of an instruction may give
// their buffer to its output. A donated buffer is overwritten while the kernel still reads it,
// so only kernels whose output element i depends on the donor's element i alone qualify:
// elementwise ops (not copy, which is a memcpy) and fusions whose parameter reaches the root
// through elementwise ops of the root's dims only (no broadcast, transpose, slice, reduce).
#pragma once

#include <vector>

#include "ir/instruction.h"
#include "runtime/core/kernel.h"

namespace hlox::rt {

// Operand positions of `instr` (run by `kernel`) whose buffer the output may reuse in place,
// judged from shapes and the op alone; the executor still checks liveness and sharing.
std::vector<int> DonatableOperands(const Instruction& instr, KernelFn kernel);

// Whether every transitive user of `instr` (inside its computation) is elementwise with the
// dims of `root`, so each element of the root reads `instr`'s element at the same index only.
bool ElementwiseToRoot(const Instruction* instr, const Shape& root);

// Whether donation is on by default: true unless the environment sets HLOX_NO_DONATE=1.
bool DonationDefault();

}  // namespace hlox::rt
