// The process-wide buffer pool behind every runtime Buffer. Small requests come from malloc in
// size classes and are kept on free lists; large ones (>= kLargeBufferBytes) are anonymous
// mappings on 2 MiB boundaries with transparent huge pages requested, kept resident after
// release (split and coalesced) so repeated runs reuse paged-in memory instead of
// page-faulting fresh memory. Resident large bytes (live + cached) stay under a bound sized from
// the machine's memory and the peak live bytes of the runs so far.
#pragma once

#include <cstdint>

namespace hlox::rt {

inline constexpr int64_t kLargeBufferBytes = int64_t{4} << 20;

struct BufferPoolStats {
  int64_t live_large_bytes = 0;   // large buffers handed out now
  int64_t cached_large_bytes = 0; // released large memory kept resident for reuse
  int64_t cached_small_bytes = 0; // released small buffers kept on free lists
  int64_t peak_large_bytes = 0;   // most large bytes live at once (since start or the last trim)
  int64_t resident_bound = 0;     // most large bytes (live + cached) the pool keeps right now
  int64_t fresh_large_bytes = 0;  // large bytes mapped fresh from the OS so far (page-faulted)
  int64_t memory_bytes = 0;       // the machine's (or cgroup's) memory the bound is sized from
};

// Uninitialized memory of at least `bytes` bytes, 64-byte aligned (2 MiB aligned when large).
// When the OS refuses (a worker's job child under its memory limit), the cache is given back
// (TrimBufferPool) and the request tried once more; throws std::bad_alloc when that fails too.
uint8_t* PoolAllocate(int64_t bytes);
// Returns memory from PoolAllocate(bytes) (same `bytes`) to the pool.
void PoolRelease(uint8_t* p, int64_t bytes);

// Unmaps every cached large range, frees the cached small buffers and resets the peak, so the
// next run's bound starts from its own needs; returns the bytes given back. Live buffers stay.
int64_t TrimBufferPool();
BufferPoolStats GetBufferPoolStats();

}  // namespace hlox::rt
