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

bool IsSharedIdentityCall(const Instruction& instr) {
  return instr.opcode() == Opcode::kCustomCall && instr.operand_count() == 1 &&
         instr.attrs().custom_call_target == "AwsNeuronTransferWithStaticRing" &&
         instr.shape() == instr.operand(0)->shape();
}

bool IsAliasInstruction(const Instruction& instr) {
  return IsAliasOpcode(instr.opcode()) || IsSharedIdentityCall(instr);
}

}  // namespace hlox
