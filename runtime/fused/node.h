// Internal representation of a compiled fused computation (see fused/program.h): one node per
// fused instruction in topological order, the value kind each node is held in, and the
// per-thread block evaluator that computes a node on a set of its own linear indices.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/attributes.h"
#include "ir/instruction.h"
#include "runtime/core/value.h"

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
  // kAffine / kDynamicSlice: the same map over collapsed dims (size-1 dims dropped, neighbours
  // along which the operand index runs on merged; rank >= 1), what the evaluator walks.
  std::vector<int64_t> map_dims, map_strides, map_coef;
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
  // kReduce: dimensions={...} over op_dims, both collapsed (size-1 dims dropped, neighbouring
  // reduced or kept dims merged).
  std::vector<int64_t> reduce_dims;
};

class BlockPrefetcher;  // fused/stream.h

// A set of linear indices of one node: contiguous [start, start+n) when idx is null. An idx
// set may also describe itself as `runs` arithmetic runs run_start[r] + k * run_step for k in
// [0, run_len[r]) (a hint for index maps; idx always holds every index).
struct IndexSet {
  int64_t n = 0;
  int64_t start = 0;
  const int64_t* idx = nullptr;
  uint64_t id = 0;  // memo key: evaluations on the same set id are shared
  const int64_t* run_start = nullptr;
  const int64_t* run_len = nullptr;
  int64_t runs = 0;
  int64_t run_step = 1;
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
  // Elementwise work is split into chunks of kWorkChunk elements, with a prefetch step of
  // `p` (may be null) after each, so the next block's loads overlap this block's math.
  static constexpr int64_t kWorkChunk = 1024;
  void set_prefetcher(BlockPrefetcher* p) { prefetch_ = p; }
  // Lets node `node`, when computed as f32 on set `set_id`, write its values straight to `dst`
  // (an output buffer's block) instead of the arena; Eval returns dst when it did.
  void set_destination(int node, uint64_t set_id, float* dst) {
    dest_node_ = node;
    dest_set_ = set_id;
    dest_ = dst;
  }

 private:
  // Computes node `node` at `set` (no memo): dispatches on the node's op to one of the
  // Compute* functions below or to the index-map evaluators (fused/eval.cc, fused/affine.cc).
  const void* Compute(int node, const IndexSet& set);
  // Storage for `node`'s values at `set` as kind k: the destination buffer when
  // set_destination named this node and set (f32 only), else the arena.
  void* AllocResult(int node, const IndexSet& set, VKind k);
  // Operand i of `nd` at `set`, broadcast when the operand is a scalar and `nd` is not.
  const void* Operand(const FusedNode& nd, int i, const IndexSet& set);
  const void* ComputeParam(int node, const IndexSet& set);
  const void* ComputeConstant(int node, const IndexSet& set);
  const void* ComputeIota(int node, const IndexSet& set);
  const void* ComputeUnary(int node, const IndexSet& set);
  const void* ComputeBinary(int node, const IndexSet& set);
  // A float binary node with exactly one scalar (or scalar-broadcast) operand, computed
  // without materializing the scalar; null when the shape or opcode does not qualify.
  const void* ComputeBinaryWithScalar(int node, const IndexSet& set);
  const void* ComputeCompare(int node, const IndexSet& set);
  const void* ComputeSelectOrClamp(int node, const IndexSet& set);
  const void* ComputeConvert(int node, const IndexSet& set);
  const void* ComputeBitcastConvert(int node, const IndexSet& set);
  const void* ComputeDynamicSlice(const FusedNode& nd, const IndexSet& set);
  // Calls f(lo, hi) over [0, n) in kWorkChunk pieces, stepping the prefetcher between them.
  template <typename F>
  void Chunked(int64_t n, F&& f);
  const void* EvalAffine(const FusedNode& nd, const IndexSet& set, int64_t offset);
  // EvalAffine on `count` contiguous ranges [rstart[k], +rlen[k]) of a node of rank >= 1
  // (n indices in all).
  const void* EvalAffineRuns(const FusedNode& nd, const int64_t* rstart, const int64_t* rlen,
                             int64_t count, int64_t n, int64_t offset);
  // EvalAffine on a set of arithmetic runs of step set.run_step != 1 (a tiled walk, see
  // fused/tile.cc); null when the step is not a step along one map dim.
  const void* EvalAffineStrided(const FusedNode& nd, const IndexSet& set, int64_t offset);
  // The operand of `nd` at `runs` arithmetic runs of step `step` (n indices in all);
  // `contiguous` when the runs join into one range.
  const void* EvalOperandRuns(const FusedNode& nd, int64_t* run_lin, int64_t* run_len,
                              int64_t runs, int64_t step, int64_t n, bool contiguous);
  // The whole of a small computed operand of index-map node `nd` (computed once), or null
  // when the operand is a parameter/constant or too big to hoist.
  const void* HoistedOperand(const FusedNode& nd);
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
  BlockPrefetcher* prefetch_ = nullptr;
  int dest_node_ = -1;
  uint64_t dest_set_ = 0;
  float* dest_ = nullptr;
};

// Bytes per element of a kind's storage.
inline int64_t KindBytes(VKind k) { return k == VKind::kF32 ? 4 : 8; }

}  // namespace hlox::rt
