// Instructions that only forward or name values: no kernel runs for them and they move no bytes
// (the cost models' kernel view, cost/kernel_model.h, and passes that reason about kernels
// share this).
#pragma once

#include "ir/instruction.h"
#include "ir/opcode.h"

namespace hlox {

// parameter, constant, tuple, get-tuple-element, bitcast, after-all, add-dependency,
// optimization-barrier, domain.
bool IsAliasOpcode(Opcode op);

// A custom call the runtime runs as an identity that shares its operand's buffer
// (runtime/kernels/custom_call.cc): AwsNeuronTransferWithStaticRing whose result has exactly its
// operand's shape, layout included. Its result is its operand's value.
bool IsSharedIdentityCall(const Instruction& instr);

// IsAliasOpcode, or a shared identity call.
bool IsAliasInstruction(const Instruction& instr);

}  // namespace hlox
