// Tests of the process-wide buffer pool (runtime/core/buffer_pool.h): large buffers are 2 MiB
// aligned, never overlap while live (splitting and coalescing of cached ranges), are reused
// without fresh mappings, stay under the resident bound, and TrimBufferPool gives memory back.
#include "runtime/core/buffer_pool.h"

#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace hlox::rt {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

struct Block {
  uint8_t* p;
  int64_t bytes;
  uint8_t tag;
};

// Fills each block with its tag at a few offsets (start, middle, end) and checks them all.
void Stamp(const Block& b) {
  b.p[0] = b.tag;
  b.p[b.bytes / 2] = b.tag;
  b.p[b.bytes - 1] = b.tag;
}
bool StampIntact(const Block& b) {
  return b.p[0] == b.tag && b.p[b.bytes / 2] == b.tag && b.p[b.bytes - 1] == b.tag;
}

TEST(BufferPoolTest, LargeBuffersAlignedAndReusedWithoutFreshMappings) {
  TrimBufferPool();
  uint8_t* a = PoolAllocate(24 * kMiB);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % (2 * kMiB), 0u);
  std::memset(a, 1, 24 * kMiB);
  const int64_t fresh = GetBufferPoolStats().fresh_large_bytes;
  PoolRelease(a, 24 * kMiB);
  // Same size, then two smaller ones carved from the cached range: no fresh bytes.
  uint8_t* b = PoolAllocate(24 * kMiB);
  PoolRelease(b, 24 * kMiB);
  uint8_t* c = PoolAllocate(10 * kMiB);
  uint8_t* d = PoolAllocate(12 * kMiB);
  EXPECT_EQ(GetBufferPoolStats().fresh_large_bytes, fresh);
  EXPECT_TRUE(c + 10 * kMiB <= d || d + 12 * kMiB <= c);
  PoolRelease(c, 10 * kMiB);
  PoolRelease(d, 12 * kMiB);
  // The pieces coalesce again: a 24 MiB request fits without fresh memory.
  uint8_t* e = PoolAllocate(24 * kMiB);
  EXPECT_EQ(GetBufferPoolStats().fresh_large_bytes, fresh);
  PoolRelease(e, 24 * kMiB);
  // Growing past every cached range maps only the difference.
  uint8_t* f = PoolAllocate(30 * kMiB);
  EXPECT_LE(GetBufferPoolStats().fresh_large_bytes, fresh + 8 * kMiB);
  f[30 * kMiB - 1] = 3;
  PoolRelease(f, 30 * kMiB);
  EXPECT_GT(TrimBufferPool(), 0);
  EXPECT_EQ(GetBufferPoolStats().cached_large_bytes, 0);
}

// Random allocate/release of mixed sizes: live blocks never overlap or lose their contents,
// and live + cached large bytes stay within the resident bound.
TEST(BufferPoolTest, RandomTrafficKeepsBlocksDisjointAndBounded) {
  TrimBufferPool();
  std::mt19937 rng(5);
  std::vector<Block> live;
  uint8_t tag = 1;
  for (int step = 0; step < 200; ++step) {
    if (live.empty() || rng() % 2 != 0) {
      int64_t bytes = (rng() % 2) ? int64_t(rng() % 4096) + 1 : int64_t(4 * kMiB + rng() % (6 * kMiB));
      Block b{PoolAllocate(bytes), bytes, tag++};
      if (tag == 0) tag = 1;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(b.p) % 64, 0u);
      Stamp(b);
      live.push_back(b);
    } else {
      size_t k = rng() % live.size();
      ASSERT_TRUE(StampIntact(live[k])) << "block " << k << " overwritten";
      PoolRelease(live[k].p, live[k].bytes);
      live.erase(live.begin() + static_cast<int64_t>(k));
    }
    for (const Block& b : live) {
      ASSERT_TRUE(StampIntact(b)) << "step " << step;
    }
    BufferPoolStats s = GetBufferPoolStats();
    if (s.cached_large_bytes > 0) {
      EXPECT_LE(s.live_large_bytes + s.cached_large_bytes, s.resident_bound);
    }
  }
  for (size_t i = 0; i < live.size(); ++i) {
    for (size_t j = i + 1; j < live.size(); ++j) {
      const Block &a = live[i], &b = live[j];
      EXPECT_TRUE(a.p + a.bytes <= b.p || b.p + b.bytes <= a.p);
    }
  }
  for (const Block& b : live) PoolRelease(b.p, b.bytes);
  EXPECT_EQ(GetBufferPoolStats().live_large_bytes, 0);
  BufferPoolStats s = GetBufferPoolStats();
  EXPECT_GT(s.memory_bytes, 0);
  EXPECT_LE(s.resident_bound, s.memory_bytes / 2);
  TrimBufferPool();
}

}  // namespace
}  // namespace hlox::rt
