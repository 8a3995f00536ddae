// Structural verifier: operand counts, shapes inferred from operands and attributes against
// declared shapes, called computations' signatures, tuple indices, parameter numbers.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hlox {

// OK, or InvalidArgument naming the computation, the instruction and what is wrong.
absl::Status VerifyModule(const Module& module);
// The shape `instr` must have given its operands and attributes (layouts not inferred).
// Unimplemented for opcodes whose shape cannot be inferred (custom-call, ...); callers then
// accept the declared shape.
absl::StatusOr<Shape> InferShape(const Instruction& instr);

}  // namespace hlox
