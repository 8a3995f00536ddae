// Kernel-kind calibration for `hlox calibrate`: what one small kernel of each kind
// (cost/calibrate.h KernelKind) costs in this runtime, measured on generated modules.
#pragma once

#include "cost/calibrate.h"

namespace hlox::cli {

// Measures every kind's fixed cost and per-element cost in this runtime (1 thread, in cache):
// per size, a module of 4 and one of 36 independent kernels of the kind, best of many runs each;
// the per-kernel time is their difference over 32, fitted as fixed + per_element x elements over
// three sizes. Takes about `seconds` in all. Kinds that fail to build keep `fallback`'s figures.
KernelKindCosts MeasureKernelKindCosts(double seconds, const KernelKindCosts& fallback);

}  // namespace hlox::cli
