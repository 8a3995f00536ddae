// LRU reference-output cache.
#include "cost/reference_cache.h"

#include "absl/strings/str_cat.h"

namespace hlox {

ReferenceCache::ReferenceCache(size_t max_entries, int64_t max_bytes)
    : max_entries_(max_entries == 0 ? 1 : max_entries), max_bytes_(max_bytes) {}

ReferencePtr ReferenceCache::Find(const std::string& module_hash, uint64_t seed) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(absl::StrCat(module_hash, "/", seed));
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void ReferenceCache::Insert(const std::string& module_hash, uint64_t seed, ReferencePtr value) {
  std::lock_guard<std::mutex> lock(mu_);
  Key key = absl::StrCat(module_hash, "/", seed);
  auto it = index_.find(key);
  if (it != index_.end()) {
    bytes_ -= it->second->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  bytes_ += value->bytes;
  lru_.emplace_front(key, std::move(value));
  index_[key] = lru_.begin();
  EvictLocked();
}

void ReferenceCache::EvictLocked() {
  // Never evict the entry just inserted (front), even when it alone exceeds max_bytes.
  while (lru_.size() > 1 && (lru_.size() > max_entries_ || bytes_ > max_bytes_)) {
    bytes_ -= lru_.back().second->bytes;
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

absl::StatusOr<ReferencePtr> ReferenceCache::GetOrCompute(
    const std::string& module_hash, uint64_t seed,
    const std::function<absl::StatusOr<Literal>()>& compute) {
  if (ReferencePtr hit = Find(module_hash, seed)) {
    std::lock_guard<std::mutex> lock(mu_);
    ++hits_;
    return hit;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++misses_;
  }
  absl::StatusOr<Literal> result = compute();
  if (!result.ok()) return result.status();
  auto ref = std::make_shared<ReferenceOutputs>();
  ref->result = *std::move(result);
  ref->bytes = LiteralBytes(ref->result);
  Insert(module_hash, seed, ref);
  return ReferencePtr(ref);
}

size_t ReferenceCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

int64_t ReferenceCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

int64_t ReferenceCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t ReferenceCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

ReferenceCache& GlobalReferenceCache() {
  static ReferenceCache* cache = new ReferenceCache();
  return *cache;
}

int64_t LiteralBytes(const Literal& literal) {
  int64_t total = literal.byte_size();
  for (const Literal& e : literal.tuple_elements()) total += LiteralBytes(e);
  return total;
}

}  // namespace hlox
