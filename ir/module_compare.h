// Structural equality of two modules, with a message naming the first difference: the same
// computations in the same order, and for every instruction the same name, opcode, shape
// (layouts included), operands, called computations, control predecessors, typed attributes,
// raw attributes and literal bits. Used by round-trip checks (print -> parse -> compare).
#pragma once

#include "absl/status/status.h"
#include "ir/module.h"

namespace hlox {

// OK when `a` and `b` are structurally identical; otherwise FailedPrecondition whose message
// describes the first difference found (computation, instruction, field, both values).
absl::Status CompareModules(const Module& a, const Module& b);

// Names of the typed-attribute fields that differ between `a` and `b` (empty when equal).
std::vector<std::string> DiffAttributes(const Attributes& a, const Attributes& b);

}  // namespace hlox
