// The kernel view of a computation that bytes-moved, roofline and scratchpad models share: its
// instructions in schedule order (post order), each either an alias (no kernel) or a kernel
// reading and writing tensors. A tensor is one array leaf produced by an instruction (a
// parameter, a constant or a kernel); aliases (ir/alias_ops.h: tuple, get-tuple-element,
// bitcast, ..., and custom calls the runtime runs as shared-buffer identities) resolve
// to the tensors they forward.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "cost/calibrate.h"
#include "ir/computation.h"

namespace hlox {

struct TensorId {
  const Instruction* producer = nullptr;
  int64_t leaf = 0;
  bool operator==(const TensorId& o) const { return producer == o.producer && leaf == o.leaf; }
};
struct TensorIdHash {
  size_t operator()(const TensorId& t) const {
    return std::hash<const void*>()(t.producer) * 31 + static_cast<size_t>(t.leaf);
  }
};

struct TensorAccess {
  TensorId tensor;
  double bytes = 0;  // bytes of the tensor this kernel touches
};

struct Kernel {
  const Instruction* instr = nullptr;
  std::vector<TensorAccess> reads;   // distinct input tensors
  std::vector<TensorAccess> writes;  // output tensors
  bool control_flow = false;         // while / conditional / call: bodies costed separately
  // The tensors of each operand, in operand order (aliases resolved; full sizes).
  std::vector<std::vector<TensorAccess>> operand_tensors;
  double ReadBytes() const;
  double WriteBytes() const;
};

struct KernelModel {
  std::vector<Kernel> kernels;                // schedule order
  std::vector<TensorAccess> outputs;          // tensors the computation returns
  std::unordered_map<TensorId, double, TensorIdHash> tensor_bytes;  // full size of each tensor
};

bool IsControlFlowOp(const Instruction& instr);
// The kind of kernel `instr` runs as (a fusion: by the fused evaluator that runs it; a fusion
// that runs unfused: kOther, its body's kernels are costed instead).
KernelKind KernelKindOf(const Instruction& instr);
// The element class a fused op computes in: a compare by its operands' type, anything else by
// its output's (integer and pred: kInteger; bf16/f16: kHalf; the rest: kFloat).
ElementClass ElementClassOf(const Instruction& instr);
// True for the data-movement ops a fusion charges move_node_us for (slice, concatenate, pad,
// dynamic-slice, dynamic-update-slice, gather, reverse, transpose).
bool IsFusedMoveOp(const Instruction& instr);
// Fused ops of a fusion body (those FusedNodeCount counts) per ElementClass, and how many of
// them are data-movement ops.
struct FusedOpMix {
  int count[3] = {0, 0, 0};  // indexed by ElementClass
  int moves = 0;
  int Total() const { return count[0] + count[1] + count[2]; }
};
FusedOpMix FusedOpMixOf(const Computation& fused);
// Builds the kernel view of `computation`.
KernelModel BuildKernelModel(const Computation& computation);

}  // namespace hlox
