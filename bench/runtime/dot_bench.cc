// Dot f32 benchmark: hlox's GEMM (runtime/dot.h) against OpenBLAS cblas_sgemm at square sizes
// 128..2048 with 1 and 2 threads, GFLOP/s and the ratio hlox/OpenBLAS, both measured in this
// run. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE force OpenBLAS onto a slower kernel: the bench
// prints their setting and re-executes itself with them unset so the baseline is the real one.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/dot.h"
#include "runtime/thread_pool.h"

#ifdef HLOX_HAVE_OPENBLAS
#include <openblas-pthread/cblas.h>
#endif

namespace {

template <typename F>
double BestSeconds(F f, double budget_s) {
  f();  // warm-up
  double best = 1e30, spent = 0;
  int reps = 0;
  while ((spent < budget_s || reps < 3) && reps < 50) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, s);
    spent += s;
    ++reps;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  const char* l2 = std::getenv("OPENBLAS_L2_SIZE");
  std::printf("environment: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s\n", core ? core : "(unset)", l2 ? l2 : "(unset)");
  if ((core || l2) && !std::getenv("HLOX_BENCH_REEXEC")) {
    std::printf("note: the OpenBLAS baseline must be measured with both unset; re-executing without them\n");
    std::fflush(stdout);
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("OPENBLAS_L2_SIZE");
    setenv("HLOX_BENCH_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("execv");
  }
  std::vector<int> sizes = {128, 256, 512, 1024, 2048};
  if (argc > 1) sizes = {std::atoi(argv[1])};
  std::printf("%6s %7s %12s %12s %8s\n", "n", "threads", "hlox GF/s", "openblas GF/s", "ratio");
  for (int threads : {1, 2}) {
    hlox::rt::ThreadPool pool(threads);
    for (int n : sizes) {
      std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
        b[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
      }
      double flops = 2.0 * n * n * n;
      double budget = 0.3;
      double t_h = BestSeconds([&] {
        hlox::rt::Sgemm(false, false, n, n, n, a.data(), n, b.data(), n, c.data(), n, false, &pool);
      }, budget);
      double gh = flops / t_h / 1e9, gb = 0;
#ifdef HLOX_HAVE_OPENBLAS
      openblas_set_num_threads(threads);
      double t_b = BestSeconds([&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      }, budget);
      gb = flops / t_b / 1e9;
#endif
      std::printf("%6d %7d %12.1f %12.1f %8.3f\n", n, threads, gh, gb, gb > 0 ? gh / gb : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
