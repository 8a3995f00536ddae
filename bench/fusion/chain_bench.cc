// Bench: the 6-op chain exp(tanh(2x+1)*y)-z over 16M f32 (issue 3's fusion target).
// Measures, in the same run and with buffers reused across repeats:
//   * the bandwidth floor: 4 arrays (3 read, 1 written) at the bandwidth of a triad loop
//     a = b + s*c over arrays of the same size (STREAM byte counting);
//   * the compute floor: tanh+exp over an in-cache 4096-element block with the functions the
//     fused loop uses (Eigen's vectorized tanh, runtime/vmath.h's ExpF32), scaled to 16M;
//   * the fused time (hlox's InstructionFusion output run by the executor, FusionKernel) and
//     the unfused time (six whole-tensor kernels), for 1 and 2 threads.
// Prints each figure and the ratio fused / max(floors) (goal <= 1.25) and unfused / fused.
// Usage: fusion_chain_bench [elements] [repeats] [fused]   ("fused": skip the unfused runs,
// for profiling the fused loop alone)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

// GCC 12 reports false maybe-uninitialized warnings inside Eigen's AVX-512 tanh.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

#include "ir/parser.h"
#include "passes/passes.h"
#include "runtime/executor.h"
#include "runtime/fused_program.h"
#include "runtime/thread_pool.h"
#include "runtime/vmath.h"

namespace hlox {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string ChainModule(int64_t n) {
  constexpr char kText[] = R"(HloModule chain
ENTRY main {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  z = f32$S parameter(2)
  two = f32[] constant(2)
  one = f32[] constant(1)
  b2 = f32$S broadcast(two), dimensions={}
  b1 = f32$S broadcast(one), dimensions={}
  m = f32$S multiply(b2, x)
  a = f32$S add(m, b1)
  t = f32$S tanh(a)
  ty = f32$S multiply(t, y)
  e = f32$S exponential(ty)
  ROOT r = f32$S subtract(e, z)
}
)";
  return absl::StrReplaceAll(kText, {{"$S", absl::StrCat("[", n, "]")}});
}

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Best wall time of `reps` runs of fn; *cpu (optional) gets the best process CPU time, which
// a loaded machine inflates less than wall time when one thread runs (descheduled time is
// not counted).
template <typename F>
double Best(int reps, F&& fn, double* cpu = nullptr) {
  double best = 1e30, best_cpu = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    double c0 = CpuSeconds();
    fn();
    best_cpu = std::min(best_cpu, CpuSeconds() - c0);
    best = std::min(best, Seconds(t0, Clock::now()));
  }
  if (cpu) *cpu = best_cpu;
  return best;
}

double TriadSeconds(int64_t n, int threads, int reps, double* cpu) {
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  rt::ThreadPool pool(threads);
  auto run = [&] {
    pool.ParallelFor(n, 1 << 16, [&](int64_t lo, int64_t hi) {
      float* pa = a.data();
      const float* pb = b.data();
      const float* pc = c.data();
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    });
  };
  run();
  return Best(reps, run, cpu);
}

// Best of `reps` passes of tanh then exp over an in-cache block, scaled to n elements; *cpu
// gets the same in process CPU time.
double ComputeFloorSeconds(int64_t n, int reps, double* cpu) {
  constexpr int64_t kBlock = 4096;
  std::vector<float> x(kBlock), y(kBlock);
  for (int64_t i = 0; i < kBlock; ++i) x[i] = -2.f + 4.f * static_cast<float>(i) / kBlock;
  const int64_t iters = std::max<int64_t>(1, n / kBlock);
  float sink = 0;
  double s = Best(reps, [&] {
    for (int64_t i = 0; i < iters; ++i) {
      Eigen::Map<Eigen::ArrayXf>(y.data(), kBlock) = Eigen::Map<const Eigen::ArrayXf>(x.data(), kBlock).tanh();
      rt::vmath::ExpF32(y.data(), x.data(), kBlock);
      sink += x[i % kBlock];
      for (float& v : x) v *= 1e-3f;
    }
  }, cpu);
  if (sink == 12345.f) std::printf(" ");
  const double scale = static_cast<double>(n) / static_cast<double>(iters * kBlock);
  *cpu *= scale;
  return s * scale;
}

int Main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t{1} << 24);
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool fused_only = argc > 3 && std::string(argv[3]) == "fused";
  const char* ct = std::getenv("OPENBLAS_CORETYPE");
  std::printf("fusion_chain_bench: n=%lld f32, best of %d (OPENBLAS_CORETYPE=%s; no BLAS used)\n",
              static_cast<long long>(n), reps, ct ? ct : "unset");
  auto unfused = ParseModule(ChainModule(n));
  if (!unfused.ok()) {
    std::fprintf(stderr, "%s\n", std::string(unfused.status().message()).c_str());
    return 1;
  }
  std::unique_ptr<Module> fused = (*unfused)->Clone();
  auto rep = CreateInstructionFusion()->Run(*fused);
  if (!rep.ok()) return 1;
  std::vector<rt::Value> args = rt::MakeSeededInputs(**unfused, 1);
  const double bytes = 4.0 * 4.0 * static_cast<double>(n);
  double compute_cpu = 0;
  const double compute_floor = ComputeFloorSeconds(n, reps, &compute_cpu);
  std::printf("compute floor (tanh+exp in cache, 1 thread): %.2f ms\n", compute_floor * 1e3);
  for (int threads : {1, 2}) {
    double triad_cpu = 0;
    double triad = TriadSeconds(n, threads, reps, &triad_cpu);
    double bw = 3.0 * 4.0 * static_cast<double>(n) / triad;
    double bw_floor = bytes / bw;
    double cfloor = compute_floor / threads;
    double floor = std::max(bw_floor, cfloor);
    double times[2] = {0, 0}, cpu[2] = {0, 0};
    for (int k = 0; k < (fused_only ? 1 : 2); ++k) {
      const Module& m = k == 0 ? *fused : **unfused;
      auto exec = rt::Executor::Create(m, rt::ExecOptions{threads, 1});
      if (!exec.ok()) return 1;
      auto warm = (*exec)->Run(args);
      if (!warm.ok()) {
        std::fprintf(stderr, "%s\n", std::string(warm.status().message()).c_str());
        return 1;
      }
      times[k] = Best(reps, [&] { auto out = (*exec)->Run(args); }, &cpu[k]);
    }
    std::printf("threads=%d triad %.1f GB/s | floors: bandwidth %.2f ms, compute %.2f ms | "
                "fused %.2f ms (%.2fx floor) | unfused %.2f ms (%.2fx fused)\n",
                threads, bw / 1e9, bw_floor * 1e3, cfloor * 1e3, times[0] * 1e3, times[0] / floor,
                times[1] * 1e3, times[1] / times[0]);
    if (threads == 1) {  // the same figures in CPU time (robust to a loaded machine)
      double cbw_floor = bytes / (3.0 * 4.0 * static_cast<double>(n) / triad_cpu);
      double cfloor_cpu = std::max(cbw_floor, compute_cpu);
      std::printf("threads=1 cpu-time: floors: bandwidth %.2f ms, compute %.2f ms | fused %.2f ms "
                  "(%.2fx floor) | unfused %.2f ms\n",
                  cbw_floor * 1e3, compute_cpu * 1e3, cpu[0] * 1e3, cpu[0] / cfloor_cpu, cpu[1] * 1e3);
    }
  }
  auto st = rt::GetFusionKernelStats();
  std::printf("fusion kernel: %lld fused runs, %lld fallbacks\n", static_cast<long long>(st.fused_runs),
              static_cast<long long>(st.fallback_runs));
  return 0;
}

}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
