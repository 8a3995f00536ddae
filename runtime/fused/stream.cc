// Memory streaming for fused block loops (see fused/stream.h): which parameters a block loop
// streams, software prefetch of their next block, and non-temporal output stores.
#include "runtime/fused/stream.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace hlox::rt {

void ParallelPieces(ThreadPool* pool, int64_t n, int64_t min_piece,
                    const std::function<void(int64_t, int64_t)>& fn) {
  const int64_t piece = std::max<int64_t>({1, min_piece, (n + kStreamPieces - 1) / kStreamPieces});
  const int64_t pieces = (n + piece - 1) / piece;
  if (pool == nullptr || pool->threads() == 1 || pieces < 2) {
    if (n > 0) fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  // One claiming loop per thread; a loop that finds every piece taken returns at once.
  pool->ParallelFor(pool->threads(), 1, [&](int64_t, int64_t) {
    for (int64_t p = next.fetch_add(1, std::memory_order_relaxed); p < pieces;
         p = next.fetch_add(1, std::memory_order_relaxed)) {
      fn(p * piece, std::min(n, (p + 1) * piece));
    }
  });
}

std::vector<int64_t> StreamedParams(const std::vector<FusedNode>& nodes,
                                    const std::vector<int>& outputs) {
  std::vector<char> seen(nodes.size(), 0);
  std::vector<int> stack(outputs.begin(), outputs.end());
  std::vector<int64_t> params;
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id < 0 || id >= static_cast<int>(nodes.size()) || seen[id]) continue;
    seen[id] = 1;
    const FusedNode& nd = nodes[id];
    switch (nd.op) {
      case NodeOp::kParam:
        if (std::find(params.begin(), params.end(), nd.param) == params.end()) {
          params.push_back(nd.param);
        }
        break;
      case NodeOp::kUnary: case NodeOp::kBinary: case NodeOp::kSelect: case NodeOp::kClamp:
      case NodeOp::kCompare: case NodeOp::kConvert: case NodeOp::kBitcastConvert:
      case NodeOp::kIdentity:
        for (int o : nd.operands) {
          if (!nodes[o].dims.empty() || nd.dims.empty()) stack.push_back(o);  // not a scalar broadcast
        }
        break;
      default:
        break;  // index maps read other positions
    }
  }
  std::sort(params.begin(), params.end());
  return params;
}

void BlockPrefetcher::Queue(const std::vector<const Buffer*>& params,
                            const std::vector<int64_t>& streamed, int64_t start, int64_t n,
                            int64_t steps) {
  count_ = 0;
  int64_t lines = 0;
  for (int64_t p : streamed) {
    if (count_ == kMaxRanges) break;
    if (p < 0 || p >= static_cast<int64_t>(params.size()) || params[p] == nullptr) continue;
    const Buffer& b = *params[p];
    const int64_t count = b.element_count();
    if (count <= 0 || start >= count || n <= 0) continue;
    const int64_t esize = b.byte_size() / count;
    Range& r = ranges_[count_++];
    r.base = reinterpret_cast<const char*>(b.data());
    r.off = start * esize & ~int64_t{63};
    r.end = std::min(count, start + n) * esize;
    lines += (r.end - r.off + 63) / 64;
  }
  per_step_ = std::max<int64_t>(1, (lines + std::max<int64_t>(1, steps) - 1) / std::max<int64_t>(1, steps));
}

void BlockPrefetcher::Step() {
#if defined(__x86_64__)
  // Each range gets its share of the step's lines (ranges advance together), issued in a
  // tight loop; ranges that run out drop off the end of the list.
  if (count_ == 0) return;
  const int64_t share = std::max<int64_t>(1, per_step_ / count_);
  for (int i = 0; i < count_;) {
    Range& r = ranges_[i];
    const int64_t end = std::min(r.end, r.off + share * 64);
    for (int64_t off = r.off; off < end; off += 64) _mm_prefetch(r.base + off, _MM_HINT_T0);
    r.off = end;
    if (r.off >= r.end) {
      ranges_[i] = ranges_[--count_];
    } else {
      ++i;
    }
  }
#endif
}

void BlockPrefetcher::Flush() {
  per_step_ = int64_t{1} << 40;  // every queued line (no overflow in Step)
  Step();
}

void StreamStoreF32(float* dst, const float* src, int64_t n) {
  // SSE's 16-byte non-temporal stores (every x86-64 CPU has them): four fill a line in the
  // write-combining buffer as one wide store would, so the width does not matter here.
  int64_t j = 0;
  while (j < n && (reinterpret_cast<uintptr_t>(dst + j) & 15) != 0) {
    dst[j] = src[j];
    ++j;
  }
  for (; j + 4 <= n; j += 4) _mm_stream_ps(dst + j, _mm_loadu_ps(src + j));
  for (; j < n; ++j) dst[j] = src[j];
}

void StreamFence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace hlox::rt
