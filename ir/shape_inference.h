// Shape inference for HLO instructions, from operand shapes and typed attributes. The verifier
// compares the result with each instruction's declared shape. Where XLA lets the text choose
// something (the result element type of convert or dot, the target dims of broadcast), the
// declared shape supplies it and inference checks the rest.
#pragma once

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace hlox {

// Inferred result shape without layouts. Unimplemented for opcodes whose shape cannot be
// inferred from operands (custom-call, rng, infeed, ...); InvalidArgument when the operands
// and attributes are inconsistent.
absl::StatusOr<Shape> InferInstructionShape(const Instruction& instr);

}  // namespace hlox
