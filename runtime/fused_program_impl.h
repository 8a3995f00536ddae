// FusedProgram's private state, shared by its compiler (fused_compile.cc) and its block loop
// (fused_run.cc).
#pragma once

#include <functional>
#include <vector>

#include "runtime/fused_node.h"
#include "runtime/fused_program.h"

namespace hlox::rt {

struct FusedProgram::Impl {
  std::vector<FusedNode> nodes;    // topological order
  std::vector<int> outputs;        // node per output (one unless the root is a tuple)
  bool tuple_root = false;
  Shape result_shape;
  int64_t param_count = 0;
};

// The calling thread's block arena (reused across blocks and runs).
extern thread_local Arena t_arena;
// Stores n values of kind k into buffer b from element `start`, converting to b's type.
void StoreBlock(Buffer& b, int64_t start, const void* src, VKind k, int64_t n);
// Runs fn over [0, nblocks) on the pool (or inline for one thread / one block).
void ParallelBlocks(ThreadPool* pool, const FusedRunOptions& opt, int64_t nblocks,
                    const std::function<void(int64_t, int64_t)>& fn);
// Computes reduce output node `nd` into `out` (fused_reduce.cc).
void RunFusedReduce(const std::vector<FusedNode>& nodes, const FusedNode& nd,
                    const std::vector<const Buffer*>& params, ThreadPool* pool,
                    const FusedRunOptions& opt, Buffer& out);

}  // namespace hlox::rt
