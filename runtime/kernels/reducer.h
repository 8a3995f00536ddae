// Recognizes the common scalar reducer computations (add, multiply, maximum, minimum, and, or,
// xor of the two parameters) so reduce, reduce-window, scatter and friends can run a native
// loop instead of interpreting the computation per element.
#pragma once

#include <optional>

#include "ir/computation.h"

namespace hlox::rt {

// The opcode of `comp` when its root is `op(p0, p1)` or `op(p1, p0)` over its two scalar
// parameters of one element type and op is add, multiply, maximum, minimum, and, or or xor;
// nullopt otherwise.
std::optional<Opcode> MatchBinaryReducer(const Computation& comp);

}  // namespace hlox::rt
