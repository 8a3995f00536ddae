// The kernel interface. Every opcode's kernel has the same signature and is reached through
// the explicit table in core/kernel_table.cc (a switch with no default, so -Wswitch catches an
// opcode nobody wired in). One file per op family implements the functions declared here.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"

namespace hlox::rt {

class Executor;

// What a kernel may use besides its operands.
struct KernelContext {
  ThreadPool* pool = nullptr;
  uint64_t seed = 0;         // for rng ops and seeded constants
  uint64_t* rng_state = nullptr;  // rng-get-and-update-state counter
  Executor* executor = nullptr;   // to run called computations (map, reduce, sort, while, ...)
};

// Computes `instr` from operand values into a new value.
using KernelFn = absl::StatusOr<Value> (*)(const Instruction& instr,
                                           const std::vector<const Value*>& operands,
                                           KernelContext& ctx);

// The kernel for an opcode (never null: unsupported opcodes get a kernel returning an
// Unimplemented status naming the opcode).
KernelFn KernelFor(Opcode opcode);

// Families (each in its own kernels/<family>.cc).
absl::StatusOr<Value> ElementwiseKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ConvertKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> BitcastConvertKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> DotKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> RaggedDotKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ScaledDotKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ConvolutionKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ReduceKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ReduceWindowKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> SelectAndScatterKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> GatherKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> ScatterKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> SortKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> DataMovementKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // broadcast, reshape, transpose, slice, concat, pad, reverse, dynamic-(update-)slice, iota, bitcast, copy
absl::StatusOr<Value> ControlFlowKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // while, call, conditional, tuple, get-tuple-element, map, scan
absl::StatusOr<Value> ShuffleKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // rotate, permute
absl::StatusOr<Value> RngKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> BatchNormKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> LinalgKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // triangular-solve, cholesky
absl::StatusOr<Value> FftKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // FFT, IFFT, RFFT, IRFFT
absl::StatusOr<Value> StochasticConvertKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> CollectiveKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);  // single-replica semantics
absl::StatusOr<Value> CustomCallKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);
absl::StatusOr<Value> FusionKernel(const Instruction&, const std::vector<const Value*>&, KernelContext&);

}  // namespace hlox::rt
