// An in-process LRU cache of reference outputs: the unoptimized module's outputs on seeded
// inputs, computed once per (module hash, seed) and shared by every evaluation of that module.
// Bounded by entry count and total bytes; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "ir/literal.h"

namespace hlox {

// The reference outputs of one (module, seed): the entry result as a literal.
struct ReferenceOutputs {
  Literal result;
  int64_t bytes = 0;  // data bytes held
};
using ReferencePtr = std::shared_ptr<const ReferenceOutputs>;

class ReferenceCache {
 public:
  explicit ReferenceCache(size_t max_entries = 32, int64_t max_bytes = int64_t{512} << 20);

  // The cached entry for (hash, seed), or the result of `compute` (stored on success). Errors
  // are not cached. Concurrent misses for the same key may compute twice; both agree.
  absl::StatusOr<ReferencePtr> GetOrCompute(const std::string& module_hash, uint64_t seed,
                                            const std::function<absl::StatusOr<Literal>()>& compute);
  // nullptr when absent; a hit refreshes the entry's recency.
  ReferencePtr Find(const std::string& module_hash, uint64_t seed);
  void Insert(const std::string& module_hash, uint64_t seed, ReferencePtr value);

  size_t size() const;
  int64_t bytes() const;
  int64_t hits() const;    // lookups answered from the cache
  int64_t misses() const;  // lookups that computed

 private:
  using Key = std::string;
  void EvictLocked();

  mutable std::mutex mu_;
  size_t max_entries_;
  int64_t max_bytes_;
  int64_t bytes_ = 0;
  int64_t hits_ = 0, misses_ = 0;
  std::list<std::pair<Key, ReferencePtr>> lru_;  // most recent first
  std::unordered_map<Key, std::list<std::pair<Key, ReferencePtr>>::iterator> index_;
};

// The process-wide cache EvaluateCandidate uses.
ReferenceCache& GlobalReferenceCache();
// Data bytes of a literal, tuples included.
int64_t LiteralBytes(const Literal& literal);

}  // namespace hlox
