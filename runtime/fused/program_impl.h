// FusedProgram's private state, shared by its compiler (fused/compile.cc) and its block loop
// (fused/run.cc).
#pragma once

#include <functional>
#include <vector>

#include "runtime/fused/node.h"
#include "runtime/fused/program.h"
#include "runtime/fused/vector.h"

namespace hlox::rt {

struct FusedProgram::Impl {
  std::vector<FusedNode> nodes;    // topological order
  std::vector<int> outputs;        // node per output (one unless the root is a tuple)
  bool tuple_root = false;
  Shape result_shape;
  int64_t param_count = 0;
  std::vector<int64_t> streamed;  // parameters read at the outputs' own indices (fused/stream.h)
  int64_t work_nodes = 0;         // f32 elementwise nodes (prefetch steps per work chunk)
  int64_t block_bytes_per_elem = 0;  // arena bytes one output element of a block needs
  // The register path (fused/vector.h) when every output is f32 elementwise math; else null.
  std::unique_ptr<VectorProgram> vec;
  // Per output: the dim its tiled walk runs along (fused/tile.cc), or -1 for row order.
  std::vector<int64_t> tile_dim;
};

// The calling thread's block arena (reused across blocks and runs).
extern thread_local Arena t_arena;
// Stores n values of kind k into buffer b from element `start`, converting to b's type.
void StoreBlock(Buffer& b, int64_t start, const void* src, VKind k, int64_t n);
// Block of an elementwise pass: options.block, or with auto_block the largest power of two
// (1024 to options.block) whose intermediates fit in about 40 KiB (L1).
int64_t ElementwiseBlock(int64_t block_bytes_per_elem, const FusedRunOptions& options);
// Runs fn over [0, nblocks) on the pool (or inline for one thread / one block).
void ParallelBlocks(ThreadPool* pool, const FusedRunOptions& opt, int64_t nblocks,
                    const std::function<void(int64_t, int64_t)>& fn);
// Per output node: the output dim along which its parameters are read at unit (or zero) step
// when its minor dim reads some at a large step (a transpose in the index map), or -1.
std::vector<int64_t> TileDims(const std::vector<FusedNode>& nodes, const std::vector<int>& outputs);
// Computes elementwise output node `node` into `out` tile by tile: each tile spans up to 64
// positions of `tile_dim` and of the minor dim, is evaluated in runs along `tile_dim` and
// stored transposed into output rows.
void RunTiledPass(const std::vector<FusedNode>& nodes, int node, int64_t tile_dim,
                  const std::vector<const Buffer*>& params, ThreadPool* pool,
                  const FusedRunOptions& opt, Buffer& out);
// True when set's runs form a tile: run r starts at run_start[0] + r, all of one length.
bool TileRuns(const IndexSet& set);
// o[r * len + k] = src[r + k * step] for r < runs, k < len, read row (k) by row with each
// row's continuation (the next tile's part) prefetched (fused/tile.cc).
void GatherTileF32(const float* src, int64_t step, int64_t runs, int64_t len, float* o);
// Computes reduce output node `nd` into `out` (fused/reduce.cc).
void RunFusedReduce(const std::vector<FusedNode>& nodes, const FusedNode& nd,
                    const std::vector<const Buffer*>& params, ThreadPool* pool,
                    const FusedRunOptions& opt, Buffer& out);

}  // namespace hlox::rt
