// Arithmetic on the f8 family and f4e2m1fn, as XLA's CPU backend does it: no kernel computes
// on these types natively; an instruction that computes on them runs its ordinary kernel on
// f32 copies of its small-float operands, and each small-float leaf of its result is rounded
// back once (ir/small_float.h's round-to-nearest-even, each type's own overflow rule). The
// executor decides this once per instruction when it plans a computation, so no kernel's loop
// ever tests for these types. Ops that call a computation per element (reduce, reduce-window,
// sort, scatter, select-and-scatter, map) and those that only move or select elements
// (topk, gather, the data movement ops) are not widened: they pass the small-float elements
// to their computation, whose own instructions round back after every application.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/core/kernel.h"
#include "runtime/core/value.h"

namespace hlox::rt {

// True for the nine small float types (f8e5m2 ... f8e8m0fnu, f4e2m1fn).
bool IsSmallFloat(PrimitiveType t);
// True when some array leaf of `shape` has a small float type.
bool HasSmallFloatLeaf(const Shape& shape);

// The value of `code` (a buffer byte) in small float type `t`, exactly (NaN for NaN codes).
// Requires IsSmallFloat(t).
float SmallFloatToFloat(PrimitiveType t, uint8_t code);

// Whether `instr` computes on small floats and must run through a WidenedStep: an elementwise
// op (convert, bitcast-convert and copy excepted), dot, ragged-dot, convolution,
// batch-norm, cholesky, triangular-solve, iota or rng with a small-float operand or result
// leaf.
bool ComputesByWidening(const Instruction& instr);

// One instruction run in f32 on behalf of a small-float one. Holds a copy of the instruction
// whose small-float leaves are f32, over stand-in operands of the widened operand shapes (so a
// kernel that reads operand shapes from the instruction sees f32 too); called computations
// are shared with the original.
class WidenedStep {
 public:
  // Requires ComputesByWidening(instr).
  explicit WidenedStep(const Instruction& instr);
  ~WidenedStep();
  // Widens the small-float leaves of `operands` to f32, runs `kernel` on the widened
  // instruction, and rounds the result's small-float leaves (per the original shape) back.
  absl::StatusOr<Value> Run(KernelFn kernel, const std::vector<const Value*>& operands,
                            KernelContext& ctx) const;

 private:
  const Instruction& original_;
  std::vector<std::unique_ptr<Instruction>> stand_ins_;  // declared first: outlives wide_
  std::unique_ptr<Instruction> wide_;
};

}  // namespace hlox::rt
