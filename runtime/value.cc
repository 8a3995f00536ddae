// Runtime values: buffer allocation from a process-wide size-class pool, and conversions
// between values and IR literals. The pool keeps freed buffers (up to a byte cap) so repeated
// runs reuse memory that is already paged in instead of page-faulting fresh allocations.
#include "runtime/value.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>

namespace hlox::rt {
namespace {

constexpr int64_t kAlign = 64;
constexpr int64_t kMaxCachedBytes = int64_t{6} << 30;  // total bytes kept in free lists
constexpr int64_t kHugePageThreshold = int64_t{4} << 20;
constexpr int64_t kResidentFloor = int64_t{8} << 30;  // the resident bound never goes below this

// Rounds a request up to its size class: multiples of 64 bytes below 4 KiB, then four
// classes per power of two (at most 25% waste).
int64_t SizeClass(int64_t bytes) {
  if (bytes <= 4096) return std::max<int64_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  int64_t p = 4096;
  while (p * 2 < bytes) p *= 2;
  int64_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

// Large buffers (>= kHugePageThreshold) also obey a resident bound: live + cached bytes stay
// within the peak of live bytes seen so far or kResidentFloor, whichever is larger (cached
// buffers are evicted to make room for a fresh allocation), so caching never raises a huge
// module's footprint above what its run needs.
class BufferPool {
 public:
  uint8_t* Allocate(int64_t bytes) {
    const int64_t cls = SizeClass(bytes);
    std::vector<uint8_t*> evicted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(cls);
      if ((it == free_.end() || it->second.empty()) && cls >= kHugePageThreshold) {
        // A large request may take a cached buffer of up to 4x its class: those pages are
        // already resident, so reusing them costs no page faults and no extra memory.
        it = free_.upper_bound(cls);
        while (it != free_.end() && it->first <= 4 * cls && it->second.empty()) ++it;
        if (it != free_.end() && it->first > 4 * cls) it = free_.end();
      }
      if (it != free_.end() && !it->second.empty()) {
        uint8_t* p = it->second.back();
        it->second.pop_back();
        cached_bytes_ -= it->first;
        if (it->first >= kHugePageThreshold) Charge(it->first);
        return p;
      }
      if (cls >= kHugePageThreshold) {
        // Evict the largest cached buffers until this allocation fits under the peak.
        for (auto r = free_.rbegin(); r != free_.rend() && r->first >= kHugePageThreshold &&
                                      live_large_ + cached_bytes_ + cls > Bound(live_large_ + cls);) {
          if (r->second.empty()) {
            ++r;
            continue;
          }
          evicted.push_back(r->second.back());
          r->second.pop_back();
          cached_bytes_ -= r->first;
          capacity_.erase(evicted.back());
        }
        Charge(cls);
      }
    }
    for (uint8_t* e : evicted) std::free(e);
    void* p = std::aligned_alloc(kAlign, static_cast<size_t>(cls));
    if (p == nullptr) throw std::bad_alloc();
    if (cls >= kHugePageThreshold) {
      madvise(p, static_cast<size_t>(cls), MADV_HUGEPAGE);
      std::lock_guard<std::mutex> lock(mu_);
      capacity_[static_cast<uint8_t*>(p)] = cls;
    }
    return static_cast<uint8_t*>(p);
  }

  void Release(uint8_t* p, int64_t bytes) {
    int64_t cls = SizeClass(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      bool keep = cached_bytes_ + cls <= kMaxCachedBytes;
      if (cls >= kHugePageThreshold) {
        auto c = capacity_.find(p);
        if (c != capacity_.end()) cls = c->second;
        live_large_ -= cls;
        // Keep two buffers of the largest class, so ops alternating between two huge buffers
        // never page-fault fresh ones, but stay under the resident bound.
        keep = cached_bytes_ + cls <= std::max(kMaxCachedBytes, 2 * cls) &&
               live_large_ + cached_bytes_ + cls <= Bound(0);
        if (!keep) capacity_.erase(p);
      }
      if (keep) {
        free_[cls].push_back(p);
        cached_bytes_ += cls;
        return;
      }
    }
    std::free(p);
  }

 private:
  // Most bytes of large buffers (live + cached) the pool may hold.
  int64_t Bound(int64_t at_least) const { return std::max({peak_large_, kResidentFloor, at_least}); }

  void Charge(int64_t cls) {
    live_large_ += cls;
    peak_large_ = std::max(peak_large_, live_large_);
  }

  std::mutex mu_;
  std::map<int64_t, std::vector<uint8_t*>> free_;  // by size class
  std::unordered_map<uint8_t*, int64_t> capacity_;  // size class of each large allocation
  int64_t cached_bytes_ = 0;
  int64_t live_large_ = 0, peak_large_ = 0;  // large buffers handed out: now and at most
};

BufferPool& Pool() {
  static BufferPool* pool = new BufferPool();  // never destroyed: buffers may outlive statics
  return *pool;
}

}  // namespace

Buffer::Buffer(Shape shape) : shape_(std::move(shape)) {
  bytes_ = shape_.IsArray() ? shape_.ByteSize() : 0;
  data_ = Pool().Allocate(bytes_);
}

Buffer::~Buffer() { Pool().Release(data_, bytes_); }

void Value::Flatten(std::vector<BufferPtr>* out) const {
  if (is_tuple) {
    for (const Value& v : tuple) v.Flatten(out);
  } else if (array) {
    out->push_back(array);
  }
}

Value ValueFromLiteral(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    std::vector<Value> elems;
    for (const Literal& l : literal.tuple_elements()) elems.push_back(ValueFromLiteral(l));
    return Value::Tuple(std::move(elems));
  }
  if (!shape.IsArray()) return Value::Token();
  auto buf = std::make_shared<Buffer>(shape);
  if (!literal.elided() && literal.byte_size() == buf->byte_size()) {
    if (buf->byte_size() > 0) std::memcpy(buf->data(), literal.data(), buf->byte_size());
  } else if (buf->byte_size() > 0) {
    std::memset(buf->data(), 0, buf->byte_size());
  }
  return Value::Array(std::move(buf));
}

Literal LiteralFromValue(const Value& value, const Shape& shape) {
  if (shape.IsTuple()) {
    Literal lit(shape);
    for (int64_t i = 0; i < shape.tuple_size() && i < static_cast<int64_t>(value.tuple.size()); ++i) {
      lit.tuple_elements()[i] = LiteralFromValue(value.tuple[i], shape.tuple_shape(i));
    }
    return lit;
  }
  Literal lit(shape);
  if (value.array && value.array->byte_size() == lit.byte_size() && lit.byte_size() > 0) {
    std::memcpy(lit.data(), value.array->data(), lit.byte_size());
  }
  return lit;
}

}  // namespace hlox::rt
