// Analytical peak memory from liveness on the schedule (post order) without running: every
// tensor (parameters and constants for the whole run, kernel outputs from their producer to
// their last use, outputs to the end) is live over an interval; the peak is the largest sum of
// live bytes at any step. Control-flow ops add their body's own peak (without its parameters,
// which alias the operands) while they run. Aliasing ops allocate nothing.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace hlox {

// Peak live bytes of running `computation` once.
int64_t AnalyticalPeakMemory(const Computation& computation);

}  // namespace hlox
