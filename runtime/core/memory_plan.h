// Planning-only memory figures: what running a module will hold at its peak, computed from the
// same liveness the Executor plans its buffers by (memory_plan.cc), without allocating or
// running anything. The worker compares it with its per-job budget before it starts a job.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/module.h"

namespace hlox::rt {

// Instructions reachable from `comp`'s root (operands and control predecessors) in the
// topological order the Executor runs them.
std::vector<const Instruction*> LiveOrder(const Computation& comp);

// Peak bytes of the buffers live at once while the Executor runs `comp` once: its parameters
// (when `include_parameters`; a called computation's alias its caller's operands) and constants
// for the whole run, each step's output from that step to its last use (the root's to the
// end), views (reshape, bitcast, tuple, get-tuple-element, opt-barrier) sharing their
// operand's buffer, and a while, call or conditional adding its computations' own peak while
// it runs. An upper bound on the live buffers (in-place donation only lowers it); kernel scratch
// (widened or transposed dot operands, im2col tiles) is not counted. Saturates at INT64_MAX.
int64_t PlannedPeakBytes(const Computation& comp, bool include_parameters);

// PlannedPeakBytes of the module's entry computation with its parameters (the inputs the
// caller holds); 0 for a module without an entry.
int64_t PlannedPeakBytes(const Module& module);

}  // namespace hlox::rt
