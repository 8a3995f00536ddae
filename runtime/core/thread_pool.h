// The one thread pool of the runtime. ParallelFor splits [0, n) into contiguous chunks; the
// split depends only on n, the grain and the thread count, so results are deterministic for a
// given thread count, and kernels that reduce make their partial sums independent of it.
#pragma once

#include <cstdint>
#include <functional>

namespace hlox::rt {

class ThreadPool {
 public:
  // `threads` total workers including the calling thread (>= 1).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }
  // Calls fn(begin, end) over chunks covering [0, n); runs inline when n < grain or one
  // thread. Blocks until all chunks finish.
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Impl;
  Impl* impl_;
  int threads_;
};

}  // namespace hlox::rt
