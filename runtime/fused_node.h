// Internal representation of a compiled fused computation (see fused_program.h): one node per
// fused instruction in topological order, the value kind each node is held in, and the
// per-thread block evaluator that computes a node on a set of its own linear indices.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/attributes.h"
#include "ir/instruction.h"
#include "runtime/value.h"

namespace hlox::rt {

// How a node's values are held inside a block.
enum class VKind : uint8_t { kF32, kF64, kI64 };

enum class NodeOp : uint8_t {
  kParam, kConstant, kIota, kUnary, kBinary, kSelect, kClamp, kCompare, kConvert,
  kBitcastConvert, kIdentity, kAffine, kLayoutBitcast, kPad, kConcat, kDynamicSlice,
  kReduce, kTuple,
};

struct FusedNode {
  const Instruction* instr = nullptr;
  NodeOp op = NodeOp::kIdentity;
  Opcode opcode = Opcode::kAdd;
  PrimitiveType type = PrimitiveType::kF32;  // result element type
  VKind kind = VKind::kF32;
  std::vector<int> operands;                 // node ids
  std::vector<int64_t> dims;                 // result dims
  std::vector<int64_t> strides;              // row-major strides of the result
  int64_t param = -1;
  std::vector<float> cf;                     // constant data in kind storage
  std::vector<double> cd;
  std::vector<int64_t> ci;
  // kAffine / kDynamicSlice: operand linear index = offset + sum_d coord[d] * coef[d].
  std::vector<int64_t> coef;
  int64_t offset = 0;
  std::vector<int64_t> op_dims;              // dims of operand 0
  std::vector<int64_t> op_strides;           // row-major strides of operand 0
  int64_t iota_dim = 0;
  ComparisonDirection dir = ComparisonDirection::kEq;
  std::vector<PaddingDim> padding;
  int64_t concat_dim = 0;
  std::vector<int64_t> concat_starts;        // start of each operand along concat_dim
  std::vector<int64_t> out_phys_strides;     // kLayoutBitcast: physical strides of the result
  std::vector<int64_t> op_minor_to_major;    // kLayoutBitcast: operand layout
  int reduce_op = 0;                         // kReduce: ScalarOp as int
  std::vector<int64_t> reduce_dims;          // kReduce: dimensions={...}
};

// A set of linear indices of one node: contiguous [start, start+n) when idx is null.
struct IndexSet {
  int64_t n = 0;
  int64_t start = 0;
  const int64_t* idx = nullptr;
  uint64_t id = 0;  // memo key: evaluations on the same set id are shared
  int64_t at(int64_t j) const { return idx ? idx[j] : start + j; }
};

// Bump allocator reset once per block; its chunks are reused, so blocks stay cache-resident.
class Arena {
 public:
  void* Alloc(int64_t bytes);
  void Reset();

 private:
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
  std::vector<int64_t> sizes_;
  size_t chunk_ = 0;
  int64_t used_ = 0;
};

// Evaluates nodes of one program on index sets, with a per-block memo.
class BlockEval {
 public:
  BlockEval(const std::vector<FusedNode>& nodes, const std::vector<const Buffer*>& params,
            Arena& arena);
  // Starts a new block: clears the memo and the arena.
  void NewBlock();
  // A fresh index set id.
  uint64_t NewSetId() { return ++set_counter_; }
  // Values of `node` at `set` (set.n elements of the node's kind storage).
  const void* Eval(int node, const IndexSet& set);
  Arena& arena() { return arena_; }

 private:
  const void* Compute(int node, const IndexSet& set);
  const void* EvalAffine(const FusedNode& nd, const IndexSet& set, int64_t offset);
  const void* EvalPad(const FusedNode& nd, const IndexSet& set);
  const void* EvalConcat(const FusedNode& nd, const IndexSet& set);
  const void* EvalConcatRuns(const FusedNode& nd, const IndexSet& set,
                             const std::vector<int64_t>& size);
  const void* EvalLayoutBitcast(const FusedNode& nd, const IndexSet& set);
  const void* EvalSubset(int node, const std::vector<int64_t>& idx);
  int64_t ScalarInt(int node);
  // All `count` values of `node`, computed once per BlockEval (small broadcast operands).
  const void* Hoisted(int node, int64_t count);

  const std::vector<FusedNode>& nodes_;
  const std::vector<const Buffer*>& params_;
  Arena& arena_;
  uint64_t set_counter_ = 0;
  std::vector<uint64_t> memo_id_;
  std::vector<const void*> memo_ptr_;
  std::vector<std::vector<uint8_t>> hoisted_;  // per node; empty until Hoisted computes it
};

// Bytes per element of a kind's storage.
inline int64_t KindBytes(VKind k) { return k == VKind::kF32 ? 4 : 8; }

}  // namespace hlox::rt
