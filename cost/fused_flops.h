// FLOPs of a fusion as the runtime's fused loop (runtime/fused/*.cc) really evaluates it, read
// from the IR alone (the cost core does not link the runtime). The runtime's rules:
// - A fused computation the block evaluator cannot compile (FusedProgram::Compile: dot, gather,
//   a reduce that is not an output, ...) runs unfused: every instruction once over its shape.
// - Otherwise each pass over an output's index space evaluates every node once per element of
//   each distinct index set it is asked for: elementwise users share their operand's values on
//   the same set (the per-block memo), so a shared subexpression costs once, however many
//   users it has. An index map (broadcast, transpose, slice, reverse, dynamic-slice, pad,
//   concatenate, layout bitcast) asks its operand for a fresh set of the same size (duplicates
//   included), so a producer under a broadcast is recomputed per consumer element, except a
//   small computed operand (<= 16384 elements, replicated >= 16x, no contiguous minor run of a
//   block or more) that the block loop computes once per evaluator and gathers.
// - The register path (pure f32/bf16/f16 elementwise programs, fused/vector*.cc) computes each
//   node once per output element and each computed index-map source (<= 65536 elements) once.
// - Elementwise outputs of equal dims share one pass; every other output (a reduce, an output
//   of other dims) is its own pass, so what it shares with the others is computed again.
#pragma once

#include <cstdint>

#include "ir/computation.h"

namespace hlox {

// True when the runtime's fused loop can compile `fused` (FusedProgram::Compile's rules read
// from the IR); false means the runtime runs the fused computation unfused, op by op.
bool FusedLoopSupported(const Computation& fused);

// Which of the runtime's fused evaluators runs `fused` (FusedProgram's choice read from the IR).
enum class FusedPath : uint8_t {
  kUnfused,   // FusedLoopSupported is false: op by op
  kRegister,  // the register path (pure f32-kind elementwise programs)
  kBlock,     // the block loop, elementwise outputs only
  kReduce,    // the block loop with a reduce output
};
FusedPath FusedPathOf(const Computation& fused);
// Fused ops the evaluator walks per block: instructions other than parameters, constants and
// tuples.
int FusedNodeCount(const Computation& fused);

// FLOPs of one execution of a fusion calling `fused`, by the rules above, with `threads`
// runtime threads (a hoisted operand is computed once per evaluator, one per chunk of blocks).
// Per-element FLOPs of each instruction are InstructionFlops' (analytical.h).
double FusedLoopFlops(const Computation& fused, int threads);

}  // namespace hlox
