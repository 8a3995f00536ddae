// Dot f32 benchmark: hlox's GEMM (runtime/gemm/dot_general.h) against OpenBLAS cblas_sgemm at square sizes
// 128..2048 and a few non-square model shapes (some with transposed B), 1 and 2 threads: GFLOP/s
// and the ratio hlox/OpenBLAS, both measured in this run in alternating blocks (best-of,
// HLOX_BENCH_BUDGET seconds per shape, default 1; HLOX_BENCH_CLOCK=thread times 1-thread rows on
// CPU time, for loaded machines). Under HLOX_ISA=avx2 (generic) on a CPU with a higher level,
// the baseline is OpenBLAS's Haswell (Nehalem) kernel family, the same instruction set. Args: `n` (square), `m n k [t|a|at]` (t: B transposed, a: A
// transposed), or `encoder` (the dots of bench/models' encoder_layer_train at batch 8 x 128). OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE force OpenBLAS onto a slower kernel: the bench
// prints their setting and re-executes itself with them unset so the baseline is the real one.
// HLOX_BENCH_ROUNDS=R switches to the interleaved 2-thread table: per shape, R rounds, each
// timing hlox and OpenBLAS at 1 and at 2 threads once (wall clock, call by call, order rotated,
// pauses between calls, see InterleavedRow); it prints each side's best 2-thread GFLOP/s, the best and the
// median per-round hlox/OpenBLAS ratio, and each library's own 2-thread speedup over 1 thread.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "common/cpu_isa.h"
#include "runtime/core/thread_pool.h"
#include "runtime/gemm/dot_general.h"

#include <openblas-pthread/cblas.h>

namespace {

struct Shape {
  int m, n, k;
  bool tb;          // B stored [n, k]
  bool ta = false;  // A stored [k, m]
};

// Seconds on the wall clock, or (thread_cpu) on this thread's CPU-time clock, which leaves out
// time the thread spent descheduled on a loaded machine (meaningful for 1 thread only).
double Seconds(bool thread_cpu) {
  if (!thread_cpu) return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Best-of seconds for two functions timed alternately so machine load hits both alike. On the
// wall clock they alternate in blocks (f, g, f, g; each about budget_s / 4 after an untimed
// call), so one library's idle threads, still spinning after its calls, stay out of the other's
// timings; on the thread CPU-time clock (1 thread, nothing spins) they alternate call by call.
template <typename F, typename G>
std::pair<double, double> BestAlternating(F f, G g, double budget_s, bool thread_cpu) {
  double best[2] = {1e30, 1e30}, spent = 0;
  auto timed = [&](auto& fn, double& best_fn) {
    double t0 = Seconds(thread_cpu);
    fn();
    double s = Seconds(thread_cpu) - t0;
    best_fn = std::min(best_fn, s);
    spent += s;
  };
  f();
  g();
  if (thread_cpu) {
    for (int reps = 0; (spent < budget_s || reps < 5) && reps < 400; ++reps) {
      timed(f, best[0]);
      timed(g, best[1]);
    }
    return {best[0], best[1]};
  }
  auto block = [&](auto& fn, double& best_fn) {
    fn();
    double end = spent + budget_s / 4;
    for (int reps = 0; (spent < end || reps < 3) && reps < 100; ++reps) timed(fn, best_fn);
  };
  for (int round = 0; round < 2; ++round) {
    block(f, best[0]);
    block(g, best[1]);
  }
  return {best[0], best[1]};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Interleaved 1- and 2-thread rounds (see the top comment). fns: hlox 1t, OpenBLAS 1t, hlox 2t,
// OpenBLAS 2t; prints one table row. Each timed call follows untimed calls of the same function
// for at least HLOX_BENCH_WARM_US (default 300), which wake that library's workers as the ops
// before a dot in a graph would (HLOX_BENCH_COLD=1: none, so each call starts with its workers
// asleep), and is followed by a pause long enough for that library's idle workers to stop
// spinning, so neither library's spinning worker competes with the other's calls: 1 ms after
// hlox (its worker spins about 240 us), HLOX_BENCH_OB_SETTLE_MS (default 120) after OpenBLAS at 2
// threads (its pthread server spins with sched_yield for 2^28 cycles, about 0.1 s here).
template <typename F>
void InterleavedRow(const Shape& s, F* fns[4], int rounds) {
  std::vector<double> t[4];
  auto env = [](const char* name, double dflt) { return std::getenv(name) ? std::atof(std::getenv(name)) : dflt; };
  bool cold = env("HLOX_BENCH_COLD", 0) != 0;
  double warm_s = 1e-6 * env("HLOX_BENCH_WARM_US", 300);
  useconds_t settle_us[4] = {1000, 1000, 1000, static_cast<useconds_t>(1000 * env("HLOX_BENCH_OB_SETTLE_MS", 120))};
  for (int f = 0; f < 4; ++f) (*fns[f])();  // warm-up, untimed
  usleep(settle_us[3]);
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 4; ++i) {
      int f = (i + r) % 4;
      for (double w0 = Seconds(false); !cold && Seconds(false) - w0 < warm_s;) (*fns[f])();
      double t0 = Seconds(false);
      (*fns[f])();
      t[f].push_back(Seconds(false) - t0);
      usleep(settle_us[f]);
    }
  }
  std::vector<double> ratio, sh, sb;
  for (int r = 0; r < rounds; ++r) {
    ratio.push_back(t[3][r] / t[2][r]);
    sh.push_back(t[0][r] / t[2][r]);
    sb.push_back(t[1][r] / t[3][r]);
  }
  double best[4];
  for (int f = 0; f < 4; ++f) best[f] = *std::min_element(t[f].begin(), t[f].end());
  double gf = 2.0 * s.m * s.n * s.k / 1e9;
  std::printf("%5d %5d %5d %3s %8.1f %8.1f %6.3f %6.3f %7.2f %7.2f %7.2f %7.2f\n", s.m, s.n, s.k,
              s.ta ? (s.tb ? "AT" : "A") : s.tb ? "T" : "N", gf / best[2], gf / best[3], best[3] / best[2],
              Median(ratio), best[0] / best[2], Median(sh), best[1] / best[3], Median(sb));
  std::fflush(stdout);
}

}  // namespace

// The OpenBLAS kernel family of the same instruction set as hlox's active level when HLOX_ISA
// forces a level below the CPU's (so hlox's AVX2 GEMM meets OpenBLAS's AVX2 GEMM, not its AVX-512
// one); nullptr (OpenBLAS picks for the CPU) otherwise.
const char* MatchingOpenBlasCore() {
  if (hlox::ActiveIsa() == hlox::CpuIsa()) return nullptr;
  switch (hlox::ActiveIsa()) {
    case hlox::IsaLevel::kGeneric: return "Nehalem";  // SSE4.2, as the generic level's baseline
    case hlox::IsaLevel::kAvx2: return "Haswell";
    case hlox::IsaLevel::kAvx512: return nullptr;
  }
  return nullptr;
}

int main(int argc, char** argv) {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  const char* l2 = std::getenv("OPENBLAS_L2_SIZE");
  const char* want = MatchingOpenBlasCore();
  std::printf("environment: OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s; hlox level %s of %s\n", core ? core : "(unset)",
              l2 ? l2 : "(unset)", std::string(hlox::IsaName(hlox::ActiveIsa())).c_str(),
              std::string(hlox::IsaName(hlox::CpuIsa())).c_str());
  const bool core_right = want ? (core && std::strcmp(core, want) == 0) : core == nullptr;
  if ((!core_right || l2) && !std::getenv("HLOX_BENCH_REEXEC")) {
    if (want) {
      std::printf("note: HLOX_ISA forces a level below the CPU's; the OpenBLAS baseline runs its kernel of the same "
                  "instruction set (OPENBLAS_CORETYPE=%s, OPENBLAS_L2_SIZE unset); re-executing\n", want);
      setenv("OPENBLAS_CORETYPE", want, 1);
    } else {
      std::printf("note: the OpenBLAS baseline must be measured with both unset; re-executing without them\n");
      unsetenv("OPENBLAS_CORETYPE");
    }
    std::fflush(stdout);
    unsetenv("OPENBLAS_L2_SIZE");
    setenv("HLOX_BENCH_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("execv");
  }
  std::printf("OpenBLAS kernels: %s\n", openblas_get_corename());
  // Square sizes, then shapes from real models (projection / MLP layers, transposed weights).
  std::vector<Shape> shapes = {{128, 128, 128, false},   {256, 256, 256, false},   {512, 512, 512, false},
                               {1024, 1024, 1024, false}, {2048, 2048, 2048, false}, {256, 1024, 1024, false},
                               {2048, 512, 512, false},   {128, 4096, 1024, false}, {512, 512, 512, true},
                               {1024, 1024, 1024, true},  {2048, 512, 512, true}};
  if (argc > 3) {
    const char* tr = argc > 4 ? argv[4] : "";
    shapes = {{std::atoi(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]), std::strchr(tr, 't') != nullptr,
               std::strchr(tr, 'a') != nullptr}};
  } else if (argc > 1 && std::strcmp(argv[1], "encoder") == 0) {
    // Forward (B transposed: x W^T), input gradient (plain), weight gradient (A transposed).
    shapes = {{1024, 1536, 512, true},  {1024, 2048, 512, true},   {1024, 512, 2048, true},
              {1024, 2048, 512, false}, {1024, 512, 2048, false},  {1024, 512, 512, false},
              {1536, 512, 1024, false, true}, {512, 2048, 1024, false, true}, {2048, 512, 1024, false, true},
              {128, 128, 64, true},     {128, 64, 128, false}};
  } else if (argc > 1) shapes = {{std::atoi(argv[1]), std::atoi(argv[1]), std::atoi(argv[1]), false}};
  double budget = std::getenv("HLOX_BENCH_BUDGET") ? std::atof(std::getenv("HLOX_BENCH_BUDGET")) : 1.0;
  const char* clock_env = std::getenv("HLOX_BENCH_CLOCK");
  bool thread_cpu = clock_env != nullptr && std::strcmp(clock_env, "thread") == 0;
  std::printf("clock: %s\n", thread_cpu ? "thread CPU time for 1 thread (HLOX_BENCH_CLOCK=thread), wall for 2"
                                        : "wall (HLOX_BENCH_CLOCK=thread: 1-thread rows on thread CPU time)");
  int rounds = std::getenv("HLOX_BENCH_ROUNDS") ? std::atoi(std::getenv("HLOX_BENCH_ROUNDS")) : 0;
  if (rounds > 0) {
    std::printf("interleaved, %d rounds, wall clock; 2t GF/s best-of; ratio hlox/OpenBLAS (best, median of rounds);\n"
                "scaling = own 1-thread time / own 2-thread time (best-of, median of rounds)\n", rounds);
    std::printf("%5s %5s %5s %3s %8s %8s %6s %6s %7s %7s %7s %7s\n", "m", "n", "k", "tB", "hlox2t", "blas2t",
                "best", "median", "hx best", "hx med", "ob best", "ob med");
    hlox::rt::ThreadPool pool1(1), pool2(2);
    for (const Shape& s : shapes) {
      std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n), c(size_t(s.m) * s.n);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
      int ldb = s.tb ? s.k : s.n, lda = s.ta ? s.m : s.k;
      auto hlox_on = [&](hlox::rt::ThreadPool* pool) {
        hlox::rt::Sgemm(s.ta, s.tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(), s.n, false, pool);
      };
      auto blas_on = [&](int threads) {
        openblas_set_num_threads(threads);
        cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k,
                    1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
      };
      std::function<void()> h1 = [&] { hlox_on(&pool1); }, b1 = [&] { blas_on(1); };
      std::function<void()> h2 = [&] { hlox_on(&pool2); }, b2 = [&] { blas_on(2); };
      std::function<void()>* fns[4] = {&h1, &b1, &h2, &b2};
      InterleavedRow(s, fns, rounds);
    }
    return 0;
  }
  std::printf("%5s %5s %5s %3s %7s %10s %13s %7s %9s\n", "m", "n", "k", "tB", "threads", "hlox GF/s", "openblas GF/s",
              "ratio", "max diff");
  for (int threads : {1, 2}) {
    hlox::rt::ThreadPool pool(threads);
    for (const Shape& s : shapes) {
      std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n), c(size_t(s.m) * s.n);
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
      for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 104729) % 1000) / 1000.0f - 0.5f;
      int ldb = s.tb ? s.k : s.n, lda = s.ta ? s.m : s.k;
      auto run_hlox = [&] {
        hlox::rt::Sgemm(s.ta, s.tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(), s.n, false, &pool);
      };
      auto run_blas = [&] {
        cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k,
                    1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
      };
      openblas_set_num_threads(threads);
      auto [t_h, t_b] = BestAlternating(run_hlox, run_blas, budget, thread_cpu && threads == 1);
      double flops = 2.0 * s.m * s.n * s.k;
      double gh = flops / t_h / 1e9, gb = 0;
      gb = flops / t_b / 1e9;
      // Sanity: both results agree (max |difference|, inputs in [-0.5, 0.5)).
      run_blas();
      std::vector<float> c_blas = c;
      run_hlox();
      double diff = 0;
      for (size_t i = 0; i < c.size(); ++i) diff = std::max(diff, double(std::fabs(c[i] - c_blas[i])));
      std::printf("%5d %5d %5d %3s %7d %10.1f %13.1f %7.3f %9.1e\n", s.m, s.n, s.k, s.ta ? (s.tb ? "AT" : "A") : s.tb ? "T" : "N", threads, gh, gb,
                  gb > 0 ? gh / gb : 0.0, gb > 0 ? diff : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
