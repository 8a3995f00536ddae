// Analytical costs, computed from the module alone (nothing runs):
// - op count: instructions of the entry and of the computations it runs as control flow
//   (while/conditional/call bodies, each computation once), excluding parameter, constant,
//   tuple and get-tuple-element; a fusion counts as one op, the computations of reducers,
//   comparators and fusions are part of their op. The same definition as passes' OpCount.
// - FLOPs: dot and convolution exact (2 per multiply-add; convolution taps that fall into
//   padding or base-dilation holes excluded), elementwise 1 per element, transcendental
//   kTranscendentalFlops per element, reductions one reducer application per input element.
//   While bodies count known_trip_count times (1 when unknown), conditionals their costliest branch.
//   Inside a fusion an instruction counts once per element its users demand (recomputation
//   under broadcasts and reduces; small recomputed operands materialised once), because a
//   fusion runs as one loop nest over its root's elements.
// - bytes moved: DRAM traffic under the module's fusion: every kernel (a fusion or an unfused
//   op) reads its operands and writes its outputs once; values inside a fusion never move.
//   Aliasing ops (parameter, constant, tuple, get-tuple-element, bitcast) move nothing; slices,
//   dynamic slices and gathers read only what they produce.
// - roofline seconds: sum over kernels of max(flops / peak, bytes / bandwidth).
// - scratchpad traffic for a scratchpad of S bytes: see scratchpad.h.
// - peak memory: see peak_memory.h.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/calibrate.h"
#include "cost/result.h"
#include "ir/module.h"

namespace hlox {

inline constexpr double kTranscendentalFlops = 8;  // exp, log, tanh, sin, erf, pow, ...

struct AnalyticalOptions {
  MachinePeaks peaks = DefaultPeaks();
  int threads = 1;
  int64_t scratchpad_bytes = int64_t{1} << 20;  // 1 MiB
};

// Every analytical cost of `module` (which must be verified).
AnalyticalCost ComputeAnalyticalCost(const Module& module, const AnalyticalOptions& options = {});

// Op count as defined above (equal to OpCount of passes/module_util.h, which needs the passes
// library; this one lets the cost core stay IR-only).
int64_t AnalyticalOpCount(const Module& module);
// FLOPs of one execution of `instr` (fusions: their fused instructions; control flow: their
// bodies as described above).
double InstructionFlops(const Instruction& instr);
// Trip count of a while from backend_config known_trip_count, else 1.
int64_t WhileTripCount(const Instruction& while_instr);

}  // namespace hlox
