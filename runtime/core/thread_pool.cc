// The runtime's thread pool: threads()-1 persistent workers plus the calling thread. A
// ParallelFor publishes one job (a chunk count and a function); workers and the caller claim
// chunks with an atomic counter. Chunk boundaries depend only on (n, grain, threads), so which
// thread runs a chunk never changes a result. Idle workers spin briefly, then sleep on a
// condition variable so they do not steal the other core for long.
#include "runtime/core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#define HLOX_CPU_RELAX() _mm_pause()
#else
#define HLOX_CPU_RELAX() ((void)0)
#endif

namespace hlox::rt {
namespace {
constexpr int kSpinIterations = 20000;  // about 240 us of pause (12 ns each here) before sleeping
thread_local bool t_in_parallel = false;  // nested ParallelFor runs inline
}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex dispatch_mu;  // one ParallelFor at a time; others run inline

  std::mutex mu;
  std::condition_variable cv_work;
  std::condition_variable cv_done;
  std::atomic<uint64_t> generation{0};
  std::atomic<int> sleeping{0};
  bool stop = false;

  // Current job.
  // Fields are atomics because a late worker may read them while the next job is published;
  // it only uses them after claiming a chunk (acquire on next_chunk), which orders the reads.
  std::atomic<const std::function<void(int64_t, int64_t)>*> fn{nullptr};
  std::atomic<int64_t> n{0};
  std::atomic<int64_t> chunks{0};
  std::atomic<int64_t> next_chunk{0};
  std::atomic<int64_t> done_chunks{0};
  std::atomic<int> active_workers{0};

  void RunChunks() {
    for (;;) {
      int64_t c = next_chunk.fetch_add(1, std::memory_order_acq_rel);
      int64_t nc = chunks.load(std::memory_order_relaxed);
      if (c >= nc) break;
      int64_t nn = n.load(std::memory_order_relaxed);
      (*fn.load(std::memory_order_relaxed))(nn * c / nc, nn * (c + 1) / nc);
      done_chunks.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  void WorkerLoop() {
    t_in_parallel = true;
    uint64_t seen = 0;
    for (;;) {
      uint64_t gen = generation.load(std::memory_order_acquire);
      int spins = 0;
      while (gen == seen && spins < kSpinIterations) {
        HLOX_CPU_RELAX();
        ++spins;
        gen = generation.load(std::memory_order_acquire);
      }
      if (gen == seen) {
        std::unique_lock<std::mutex> lock(mu);
        sleeping.fetch_add(1, std::memory_order_acq_rel);
        cv_work.wait(lock, [&] { return stop || generation.load(std::memory_order_acquire) != seen; });
        sleeping.fetch_sub(1, std::memory_order_acq_rel);
        if (stop) return;
      }
      // Count ourselves active before re-reading the generation: a caller waits for
      // active_workers == 0, so it never returns while we might still touch its job.
      active_workers.fetch_add(1, std::memory_order_acq_rel);
      seen = generation.load(std::memory_order_acquire);
      RunChunks();
      if (active_workers.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu);
        cv_done.notify_all();
      }
    }
  }
};

ThreadPool::ThreadPool(int threads) : impl_(new Impl), threads_(std::max(1, threads)) {
  for (int i = 1; i < threads_; ++i) impl_->workers.emplace_back([this] { impl_->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv_work.notify_all();
  for (auto& t : impl_->workers) t.join();
  delete impl_;
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (threads_ == 1 || n <= grain || t_in_parallel) {
    fn(0, n);
    return;
  }
  std::unique_lock<std::mutex> dispatch(impl_->dispatch_mu, std::try_to_lock);
  if (!dispatch.owns_lock()) {
    fn(0, n);
    return;
  }
  Impl& im = *impl_;
  // A few chunks per thread balance uneven chunks; the count is a function of n, grain, threads.
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, int64_t{threads_} * 4);
  im.fn.store(&fn, std::memory_order_relaxed);
  im.n.store(n, std::memory_order_relaxed);
  im.chunks.store(chunks, std::memory_order_relaxed);
  im.done_chunks.store(0, std::memory_order_relaxed);
  im.next_chunk.store(0, std::memory_order_release);
  im.generation.fetch_add(1, std::memory_order_acq_rel);
  if (im.sleeping.load(std::memory_order_acquire) > 0) {
    std::lock_guard<std::mutex> lock(im.mu);
    im.cv_work.notify_all();
  }
  t_in_parallel = true;
  im.RunChunks();
  t_in_parallel = false;
  // Wait for chunks other threads claimed, then for every worker to leave RunChunks (so the
  // next job's counters are not reset under a straggler).
  int spins = 0;
  while ((im.done_chunks.load(std::memory_order_acquire) < chunks ||
          im.active_workers.load(std::memory_order_acquire) > 0) &&
         spins < kSpinIterations) {
    HLOX_CPU_RELAX();
    ++spins;
  }
  if (im.done_chunks.load(std::memory_order_acquire) < chunks ||
      im.active_workers.load(std::memory_order_acquire) > 0) {
    std::unique_lock<std::mutex> lock(im.mu);
    im.cv_done.wait(lock, [&] {
      return im.done_chunks.load(std::memory_order_acquire) >= chunks &&
             im.active_workers.load(std::memory_order_acquire) == 0;
    });
  }
}

}  // namespace hlox::rt
