// Alias ops (alias_ops.h).
#include "ir/alias_ops.h"

namespace hlox {

bool IsAliasOpcode(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain: return true;
    default: return false;
  }
}

}  // namespace hlox
