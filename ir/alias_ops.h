// Ops that only forward or name values: no kernel runs for them and they move no bytes (the
// cost models' kernel view, cost/kernel_model.h, and passes that reason about kernels share it).
#pragma once

#include "ir/opcode.h"

namespace hlox {

// parameter, constant, tuple, get-tuple-element, bitcast, after-all, add-dependency,
// optimization-barrier, domain.
bool IsAliasOpcode(Opcode op);

}  // namespace hlox
