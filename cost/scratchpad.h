// DRAM<->scratchpad traffic for a scratchpad of S bytes, in the spirit of memory-access
// minimisation for scratchpad accelerators, on the kernel view (kernel_model.h):
// - kernels run in schedule order; tensors are whole buffers (no tiling);
// - parameters and constants start in DRAM; a kernel's output tensors are produced in the
//   scratchpad;
// - a kernel whose working set (inputs + outputs) exceeds S streams: it reads every input from
//   DRAM and writes every output to DRAM, and nothing it touched stays resident;
// - otherwise inputs already resident cost nothing, others are loaded (DRAM read) and stay;
// - when the resident set exceeds S, tensors are evicted furthest-next-use first (Belady); a
//   dirty tensor (produced here, not yet in DRAM) that is still needed is written back; dead
//   tensors are dropped for free;
// - the computation's outputs end in DRAM (written back if only resident);
// - control-flow ops flush their inputs to DRAM, and their bodies are costed recursively with
//   the same S (times the trip count).
// With S = 0 the traffic equals bytes moved; with S = infinity it is inputs read once plus
// outputs written once.
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace hlox {

// DRAM<->scratchpad bytes of running `computation` once with a scratchpad of `scratchpad_bytes`.
double ScratchpadTraffic(const Computation& computation, int64_t scratchpad_bytes);

}  // namespace hlox
