// Analytical costs, computed from the module alone (nothing runs):
// - op count: instructions of the entry and of the computations it runs as control flow
//   (while/conditional/call bodies, each computation once), excluding parameter, constant,
//   tuple and get-tuple-element; a fusion counts as one op, the computations of reducers,
//   comparators and fusions are part of their op. OpCount of ir/module.h.
// - FLOPs: dot and convolution exact (2 per multiply-add; convolution taps that fall into
//   padding or base-dilation holes excluded), elementwise 1 per element, transcendental
//   kTranscendentalFlops per element, reductions one reducer application per input element.
//   While bodies count known_trip_count times (1 when unknown), conditionals their costliest branch.
//   A fusion counts what the runtime's fused loop evaluates (fused_flops.h): a shared fused
//   value once per index set it is evaluated on (elementwise users share it), a producer under
//   a broadcast once per consumer element unless the runtime computes it once (small computed
//   operands; the register path's computed sources), and a fusion the fused loop cannot
//   compile once per instruction (it runs unfused).
// - bytes moved: DRAM traffic under the module's fusion: every kernel (a fusion or an unfused
//   op) reads its operands and writes its outputs once; values inside a fusion never move.
//   Aliasing ops (parameter, constant, tuple, get-tuple-element, bitcast) move nothing; slices,
//   dynamic slices and gathers read only what they produce.
// - roofline seconds: sum over kernels of max(compute, bytes / bandwidth) + the kernel's fixed
//   cost (OverheadRule::kPerKind, the default): compute is max(flops / peak, the kind's measured
//   ns_per_element x elements (output; reduces: input; dot: FLOPs)), the fixed cost the kind's
//   fixed_us plus, for a fusion, node_us per fused op beyond the first (and node_ns_per_element
//   x elements each, on the compute side) and move_node_us per fused data-movement op; a
//   fusion's figures are the mix of its ops' element classes (f32, integer, bf16/f16;
//   MachinePeaks::kinds, `hlox calibrate`). OverheadRule::kFlat (the rule before 2026-11-21
//   23:00): max(flops / peak, bytes / bandwidth) + kernel_overhead_us per kernel +
//   fusion_overhead_us per fusion. A fusion
//   the fused loop cannot compile counts as the kernels of its body (it runs unfused).
// - scratchpad traffic and time on a scratchpad accelerator (AnalyticalOptions::scratchpad):
//   the analytical model of scratchpad.h.
// - peak memory: see peak_memory.h.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/calibrate.h"
#include "cost/result.h"
#include "cost/scratchpad.h"
#include "ir/module.h"

namespace hlox {

inline constexpr double kTranscendentalFlops = 8;  // exp, log, tanh, sin, erf, pow, ...

// How FLOPs inside fusions are counted.
enum class FusionFlopsRule : uint8_t {
  kRuntime,  // what the runtime's fused loop evaluates (fused_flops.h); the default
  // The rule before 2026-11-21: demand summed over every user (a value shared by k users
  // counted k times, compounding along chains), recomputation under broadcasts unless the
  // operand has <= 16384 elements. It ranked unfused configurations as faster when they were
  // slower; kept only as cost_kendall_bench's comparison baseline.
  kDemand,
};

// How the roofline charges each kernel beyond max(FLOPs, bytes) (rules above).
enum class OverheadRule : uint8_t {
  kPerKind,  // per-kind measured costs (MachinePeaks::kinds); the default
  kFlat,     // kernel_overhead_us + fusion_overhead_us; kept as cost_kendall_bench's baseline
};

struct FlopsOptions {
  FusionFlopsRule fusion_rule = FusionFlopsRule::kRuntime;
  int threads = 1;  // runtime threads (hoisted fused operands are computed once per evaluator)
};

struct AnalyticalOptions {
  MachinePeaks peaks = DefaultPeaks();
  int threads = 1;
  ScratchpadTarget scratchpad = CachedScratchpadTarget();  // for the scratchpad traffic
  FusionFlopsRule fusion_flops = FusionFlopsRule::kRuntime;
  OverheadRule overhead = OverheadRule::kPerKind;
};

// Every analytical cost of `module` (which must be verified).
AnalyticalCost ComputeAnalyticalCost(const Module& module, const AnalyticalOptions& options = {});

// FLOPs of one execution of `instr` (fusions: their fused instructions; control flow: their
// bodies as described above).
double InstructionFlops(const Instruction& instr, const FlopsOptions& options = {});
// Trip count of a while from backend_config known_trip_count, else 1.
int64_t WhileTripCount(const Instruction& while_instr);

}  // namespace hlox
