// The process-wide buffer pool (see core/buffer_pool.h). Large memory is managed as address ranges
// of anonymous mappings: an allocation takes the best-fitting cached range and splits off the
// rest; a release coalesces with neighbouring cached ranges; a request no cached range fits
// grows the largest one with mremap (its resident pages move without copying, only the tail
// faults) or maps fresh memory. Every large range is 2 MiB aligned with MADV_HUGEPAGE, which
// cuts first-touch page faults 512-fold (malloc'ed blocks are not page aligned, so madvise on
// them fails). Cached ranges are unmapped (largest first) whenever live + cached large bytes
// would exceed the resident bound: max(peak live, floor), capped at half the memory, where the
// floor is an eighth of the machine's memory clamped to [256 MiB, 8 GiB].
#include "runtime/core/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

namespace hlox::rt {
namespace {

constexpr int64_t kAlign = 64;
constexpr int64_t kHuge = int64_t{2} << 20;

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Small requests: multiples of 64 bytes below 4 KiB, then four classes per power of two.
int64_t SmallClass(int64_t bytes) {
  if (bytes <= 4096) return std::max<int64_t>(kAlign, RoundUp(bytes, kAlign));
  int64_t p = 4096;
  while (p * 2 < bytes) p *= 2;
  return RoundUp(bytes, p / 4);
}

// Physical memory, or the cgroup v2 limit when that is smaller.
int64_t MemoryBytes() {
  int64_t phys = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  if (phys <= 0) phys = int64_t{8} << 30;
  std::ifstream f("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (f >> limit && limit != "max") {
    char* end = nullptr;
    long long v = std::strtoll(limit.c_str(), &end, 10);
    if (end != limit.c_str() && v > 0) phys = std::min<int64_t>(phys, v);
  }
  return phys;
}

// A fresh 2 MiB-aligned anonymous mapping of `bytes` (a multiple of kHuge), or nullptr.
uint8_t* MapFresh(int64_t bytes) {
  const size_t len = static_cast<size_t>(bytes + kHuge);
  void* raw = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  uint8_t* base = static_cast<uint8_t*>(raw);
  uint8_t* p = reinterpret_cast<uint8_t*>(RoundUp(reinterpret_cast<intptr_t>(base), kHuge));
  if (p > base) munmap(base, static_cast<size_t>(p - base));
  uint8_t* end = base + len;
  if (p + bytes < end) munmap(p + bytes, static_cast<size_t>(end - (p + bytes)));
  madvise(p, static_cast<size_t>(bytes), MADV_HUGEPAGE);
  return p;
}

class Pool {
 public:
  Pool() : memory_(MemoryBytes()) {
    floor_ = std::clamp<int64_t>(memory_ / 8, int64_t{256} << 20, int64_t{8} << 30);
    small_cap_ = std::clamp<int64_t>(memory_ / 32, int64_t{64} << 20, int64_t{1} << 30);
  }

  uint8_t* Allocate(int64_t bytes) {
    if (bytes < kLargeBufferBytes) return AllocateSmall(SmallClass(bytes));
    const int64_t cls = RoundUp(bytes, kHuge);
    std::vector<std::pair<uint8_t*, int64_t>> evicted;
    std::pair<uint8_t*, int64_t> grow{nullptr, 0};
    {
      std::lock_guard<std::mutex> lock(mu_);
      live_ += cls;
      peak_ = std::max(peak_, live_);
      auto fit = by_size_.lower_bound(cls);
      if (fit != by_size_.end()) {
        auto [size, p] = *fit;
        Take(fit);
        if (size > cls) Put(p + cls, size - cls);
        return p;
      }
      if (!by_size_.empty()) {  // nothing fits: grow the largest cached range
        auto largest = std::prev(by_size_.end());
        grow = {largest->second, largest->first};
        Take(largest);
      }
      while (!by_size_.empty() && live_ + cached_ > Bound()) {
        auto largest = std::prev(by_size_.end());
        evicted.push_back({largest->second, largest->first});
        Take(largest);
      }
      fresh_ += cls - grow.second;
    }
    for (auto [p, size] : evicted) munmap(p, static_cast<size_t>(size));
    uint8_t* p = nullptr;
    if (grow.first != nullptr) {
      void* q = mremap(grow.first, static_cast<size_t>(grow.second), static_cast<size_t>(cls), MREMAP_MAYMOVE);
      if (q != MAP_FAILED && reinterpret_cast<intptr_t>(q) % kHuge == 0) {
        p = static_cast<uint8_t*>(q);
        madvise(p, static_cast<size_t>(cls), MADV_HUGEPAGE);
      } else {
        munmap(q != MAP_FAILED ? q : grow.first, static_cast<size_t>(q != MAP_FAILED ? cls : grow.second));
      }
    }
    if (p == nullptr) p = MapFresh(cls);
    if (p == nullptr && Trim() > 0) {
      // Under an address-space or data limit (a worker's job child) the cached ranges may be
      // what stands in the way: give them back and try once more before failing.
      p = MapFresh(cls);
    }
    if (p == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      live_ -= cls;
      throw std::bad_alloc();
    }
    return p;
  }

  void Release(uint8_t* p, int64_t bytes) {
    if (bytes < kLargeBufferBytes) return ReleaseSmall(p, SmallClass(bytes));
    const int64_t cls = RoundUp(bytes, kHuge);
    {
      std::lock_guard<std::mutex> lock(mu_);
      live_ -= cls;
      if (live_ + cached_ + cls <= Bound()) {
        PutCoalesced(p, cls);
        return;
      }
    }
    munmap(p, static_cast<size_t>(cls));
  }

  int64_t Trim() {
    std::vector<std::pair<uint8_t*, int64_t>> ranges;
    std::vector<uint8_t*> small;
    int64_t freed = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto [p, size] : by_addr_) ranges.push_back({p, size});
      by_addr_.clear();
      by_size_.clear();
      freed = cached_ + small_cached_;
      cached_ = 0;
      for (auto& [cls, list] : small_free_) small.insert(small.end(), list.begin(), list.end());
      small_free_.clear();
      small_cached_ = 0;
      peak_ = live_;
    }
    for (auto [p, size] : ranges) munmap(p, static_cast<size_t>(size));
    for (uint8_t* p : small) std::free(p);
    return freed;
  }

  BufferPoolStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    BufferPoolStats s;
    s.live_large_bytes = live_;
    s.cached_large_bytes = cached_;
    s.cached_small_bytes = small_cached_;
    s.peak_large_bytes = peak_;
    s.resident_bound = Bound();
    s.fresh_large_bytes = fresh_;
    s.memory_bytes = memory_;
    return s;
  }

 private:
  // Most large bytes (live + cached) to keep; live bytes beyond it are never refused.
  int64_t Bound() const { return std::min(std::max(peak_, floor_), memory_ / 2); }

  void Put(uint8_t* p, int64_t size) {
    by_addr_[p] = size;
    by_size_.emplace(size, p);
    cached_ += size;
  }
  void Take(std::multimap<int64_t, uint8_t*>::iterator it) {
    by_addr_.erase(it->second);
    cached_ -= it->first;
    by_size_.erase(it);
  }
  void TakeRange(uint8_t* p, int64_t size) {
    auto [lo, hi] = by_size_.equal_range(size);
    for (auto it = lo; it != hi; ++it) {
      if (it->second == p) return Take(it);
    }
  }
  // Caches [p, p + size), merged with cached neighbours so later large requests fit.
  void PutCoalesced(uint8_t* p, int64_t size) {
    auto next = by_addr_.find(p + size);
    if (next != by_addr_.end()) {
      int64_t n = next->second;
      TakeRange(p + size, n);
      size += n;
    }
    auto prev = by_addr_.lower_bound(p);
    if (prev != by_addr_.begin()) {
      --prev;
      if (prev->first + prev->second == p) {
        uint8_t* q = prev->first;
        int64_t n = prev->second;
        TakeRange(q, n);
        p = q;
        size += n;
      }
    }
    Put(p, size);
  }

  uint8_t* AllocateSmall(int64_t cls) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = small_free_.find(cls);
      if (it != small_free_.end() && !it->second.empty()) {
        uint8_t* p = it->second.back();
        it->second.pop_back();
        small_cached_ -= cls;
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlign, static_cast<size_t>(cls));
    if (p == nullptr && Trim() > 0) p = std::aligned_alloc(kAlign, static_cast<size_t>(cls));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<uint8_t*>(p);
  }
  void ReleaseSmall(uint8_t* p, int64_t cls) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (small_cached_ + cls <= small_cap_) {
        small_free_[cls].push_back(p);
        small_cached_ += cls;
        return;
      }
    }
    std::free(p);
  }

  std::mutex mu_;
  const int64_t memory_;
  int64_t floor_ = 0, small_cap_ = 0;
  std::map<uint8_t*, int64_t> by_addr_;          // cached large ranges by start
  std::multimap<int64_t, uint8_t*> by_size_;     // the same ranges by size
  int64_t cached_ = 0, live_ = 0, peak_ = 0, fresh_ = 0;
  std::map<int64_t, std::vector<uint8_t*>> small_free_;  // by size class
  int64_t small_cached_ = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: buffers may outlive statics
  return *pool;
}

}  // namespace

uint8_t* PoolAllocate(int64_t bytes) { return ThePool().Allocate(bytes); }
void PoolRelease(uint8_t* p, int64_t bytes) { ThePool().Release(p, bytes); }
int64_t TrimBufferPool() { return ThePool().Trim(); }
BufferPoolStats GetBufferPoolStats() { return ThePool().Stats(); }

}  // namespace hlox::rt
