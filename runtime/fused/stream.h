// Memory streaming for fused block loops over arrays larger than the caches. A block loop
// alternates between reading a block of its inputs (memory-bound) and computing on it
// (compute-bound); one thread only overlaps the two when the next block's inputs are already
// on their way, so the loop prefetches the next block of every parameter it reads at the
// output's own indices. Outputs too big to stay cached are written with non-temporal stores,
// which skip the read-for-ownership an ordinary store pays on each output line. Big loops
// spread over threads in pieces claimed in turn (ParallelPieces), so no thread's share waits
// behind a thread that starts late.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/node.h"

namespace hlox::rt {

// Total bytes (streamed inputs + outputs) above which a fused loop streams its output.
constexpr int64_t kStreamStoreBytes = int64_t{24} << 20;

// Parameter numbers that output nodes read at their own linear indices, through elementwise
// and reshape nodes only (so block [s, s+n) of the output reads block [s, s+n) of each).
std::vector<int64_t> StreamedParams(const std::vector<FusedNode>& nodes,
                                    const std::vector<int>& outputs);

// Prefetches the next block of the streamed parameters spread over the current block's work:
// Queue() lists the lines, each Step() (called between chunks of elementwise work) issues its
// share, round-robin over the parameters so their streams advance together.
class BlockPrefetcher {
 public:
  // Queues elements [start, start + n) of params[p] for p in `streamed` (clipped to each
  // buffer), to be issued over about `steps` calls of Step(); drops what was still queued.
  void Queue(const std::vector<const Buffer*>& params, const std::vector<int64_t>& streamed,
             int64_t start, int64_t n, int64_t steps);
  // Issues the next share of the queued lines.
  void Step();
  // Issues every line still queued.
  void Flush();

 private:
  static constexpr int kMaxRanges = 16;
  struct Range {
    const char* base = nullptr;
    int64_t off = 0, end = 0;  // bytes still to prefetch
  };
  Range ranges_[kMaxRanges];
  int count_ = 0;
  int64_t per_step_ = 0;  // lines per Step, over all ranges
};

// Prefetches into L2 every cache line of [p, p + bytes) (a range off line boundaries spans
// one line more than bytes / 64).
inline void PrefetchLinesL2(const void* p, int64_t bytes) {
  if (bytes <= 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
  const uintptr_t last = reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(bytes) - 1;
  for (uintptr_t a = first; a <= last; a += 64) __builtin_prefetch(reinterpret_cast<const void*>(a), 0, 2);
}

// Runs fn over [0, n) on the pool's threads in pieces of about n / kStreamPieces (at least
// min_piece) that each thread claims in turn, so a thread that starts late (a halted vCPU
// waking up) takes fewer pieces instead of leaving the others its whole share as a tail.
// Piece bounds depend only on n and min_piece; with no pool or one thread, fn(0, n).
constexpr int64_t kStreamPieces = 64;
void ParallelPieces(ThreadPool* pool, int64_t n, int64_t min_piece,
                    const std::function<void(int64_t, int64_t)>& fn);

// Copies n floats from src to dst with non-temporal stores (any alignment). Call
// StreamFence() before another thread may read dst.
void StreamStoreF32(float* dst, const float* src, int64_t n);
void StreamFence();

}  // namespace hlox::rt
