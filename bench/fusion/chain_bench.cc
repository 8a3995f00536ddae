// Bench: the 6-op chain exp(tanh(2x+1)*y)-z over 16M f32 (issue 3's fusion target).
// Its floors come from code hlox does not contain, measured in the same run and interleaved
// with the fused runs (buffers reused across repeats):
//   * the bandwidth floor: 4 arrays (3 read, 1 written) at the bandwidth of a plain triad loop
//     a = b + 3c over arrays of the same size (from the buffer pool, huge pages like the fused
//     loop's) (STREAM byte counting; a written with SSE non-temporal stores like the fused
//     loop's output, so no read-for-ownership goes uncounted);
//   * the compute floor: tanh then exp over an in-cache 4096-element block (nothing else) with
//     Eigen's array tanh() and exp() compiled for hlox's active instruction-set level
//     (eigen_floor.h; HLOX_ISA=avx2 on an AVX-512 host compares against the AVX2 build),
//     scaled to n;
//   * (a reference, not a floor) PyTorch's tanh then exp over n f32 at the same thread count
//     and instruction-set level (ATEN_CPU_CAPABILITY), and on one thread over a 64Ki block in
//     cache, run by /usr/bin/python3 once per thread count before its rounds (skipped when
//     torch does not import);
//   * the fused time (hlox's InstructionFusion output run by the executor, FusionKernel: the
//     register path, runtime/fused/vector.h, as generated code, runtime/fused/jit.h), the same
//     fused program forced onto the block loop (the path before the register path), the
//     register path without micro-blocks (every op over a whole 256-element sub-block before
//     the next: the register path before micro-blocks), the micro-blocks run through per-op
//     functions (the register path before generated code), and the unfused time (six
//     whole-tensor kernels), for 1 and 2 threads.
// Prints the host (CPU model, its instruction-set level and the active one, OPENBLAS_*), each
// figure and the ratio fused / max(floors) (goal <= 1.25), block loop / fused, sub-blocks /
// fused and unfused / fused. Because the host changes the core's vector throughput from round
// to round, it also prints, per thread count, min / median / max over the rounds of fused /
// max(floors of that round) and of fused / compute floor of that round, and (1 thread) the
// fused program over an L2-resident 64Ki elements, n / 64Ki runs a round: the loop's cost in
// core time with no memory streams.
// Usage: fusion_chain_bench [elements] [repeats] [fused]   ("fused": skip the unfused runs,
// for profiling the fused loop alone)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <immintrin.h>
#include <sys/resource.h>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

#include "bench/fusion/eigen_floor.h"
#include "common/cpu_isa.h"
#include "ir/parser.h"
#include "passes/passes.h"
#include "runtime/core/executor.h"
#include "runtime/core/thread_pool.h"
#include "runtime/fused/program.h"

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

// Best wall and process CPU time of the runs of one variant (CPU time is inflated less than
// wall time by a loaded machine when one thread runs: descheduled time is not counted).
struct BestOf {
  double wall = 1e30, cpu = 1e30;
  double off_cpu = 1e30;  // least wall - CPU time of a run (descheduled or stolen time)
  int64_t faults = 0, runs = 0;  // minor page faults over all runs
  std::vector<double> walls;     // every run's wall time, in order (one a round)
  template <typename F>
  void Time(F&& fn) {
    auto t0 = Clock::now();
    double c0 = CpuSeconds();
    const int64_t f0 = MinorFaults();
    fn();
    faults += MinorFaults() - f0;
    ++runs;
    const double c = CpuSeconds() - c0, w = Seconds(t0, Clock::now());
    cpu = std::min(cpu, c);
    wall = std::min(wall, w);
    walls.push_back(w);
    off_cpu = std::min(off_cpu, w - c);
  }
  static int64_t MinorFaults() {
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
  }
};

// Min, median and max of v (zeros when empty).
struct Spread {
  double min = 0, median = 0, max = 0;
  explicit Spread(std::vector<double> v) {
    if (v.empty()) return;
    std::sort(v.begin(), v.end());
    min = v.front(), median = v[v.size() / 2], max = v.back();
  }
};

// Tanh then exp over an in-cache 4096-element block with the Eigen floor of one level,
// `iters` times. Two passes, because Eigen's composed expression x.tanh().exp() (one pass, in
// registers) ran slower: 3.3 against 2.2 TSC cycles an element at AVX2 on AMD EPYC (Zen 3).
struct ComputeFloor {
  static constexpr int64_t kBlock = 4096;
  const bench::EigenFloor& eigen;
  std::vector<float> x = std::vector<float>(kBlock), y = std::vector<float>(kBlock);
  float sink = 0;
  explicit ComputeFloor(const bench::EigenFloor& e) : eigen(e) {
    for (int64_t i = 0; i < kBlock; ++i) x[i] = -2.f + 4.f * static_cast<float>(i) / kBlock;
  }
  void Run(int64_t iters) {
    for (int64_t i = 0; i < iters; ++i) {
      eigen.tanh(x.data(), y.data(), kBlock);
      eigen.exp(y.data(), x.data(), kBlock);
      sink += x[i % kBlock];  // x = exp(tanh(x)) stays in [1/e, e]: no rescaling pass needed
    }
  }
};

// The value of environment variable `name`, or "unset".
const char* EnvOr(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "unset";
}

// PyTorch's name (ATEN_CPU_CAPABILITY) for the kernels of `level`.
const char* AtenCapability(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return "default";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
  }
  return "default";
}

// PyTorch's tanh then exp, best of `reps`: over n f32 in memory with `threads` threads, and on
// one thread over a 64Ki block in cache n / 64Ki times; a line to print (it says so when torch
// does not run). The OPENBLAS_* variables are unset for it, and ATEN_CPU_CAPABILITY holds it
// to the active instruction-set level.
std::string TorchReference(int64_t n, int threads, int reps) {
  constexpr char kScript[] =
      "import sys, time, torch\n"
      "n, t, reps = map(int, sys.argv[1:4]); blk = 1 << 16\n"
      "x = torch.rand(n) * 4 - 2; y = torch.empty(n); xs = x[:blk].clone(); ys = torch.empty(blk)\n"
      "big = small = 1e30\n"
      "for r in range(reps):\n"
      "  torch.set_num_threads(t); t0 = time.perf_counter()\n"
      "  torch.tanh(x, out=y); torch.exp(y, out=y); big = min(big, time.perf_counter() - t0)\n"
      "  torch.set_num_threads(1); t0 = time.perf_counter()\n"
      "  for k in range(max(1, n // blk)): torch.tanh(xs, out=ys); torch.exp(ys, out=ys)\n"
      "  small = min(small, (time.perf_counter() - t0) * n / (max(1, n // blk) * blk))\n"
      "print(torch.__version__, big * 1e3, small * 1e3)\n";
  const char* capability = AtenCapability(ActiveIsa());
  const std::string cmd = absl::StrCat("env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ATEN_CPU_CAPABILITY=", capability,
                                       " /usr/bin/python3 -c '", kScript, "' ", n, " ", threads, " ", reps,
                                       " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  char version[64] = {};
  double big = 0, small = 0;
  const bool ok = p != nullptr && std::fscanf(p, "%63s %lf %lf", version, &big, &small) == 3;
  if (p != nullptr) pclose(p);
  if (!ok) return absl::StrCat("threads=", threads, " PyTorch reference: not run (/usr/bin/python3 with torch failed)");
  char line[320];
  std::snprintf(line, sizeof line, "threads=%d PyTorch %s reference (ATEN_CPU_CAPABILITY=%s, best of %d, not "
                "interleaved): tanh then exp over n in memory %.2f ms | 1 thread over a 64Ki block in cache, scaled "
                "to n, %.2f ms", threads, version, capability, reps, big, small);
  return line;
}

int Main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t{1} << 24);
  int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const bool fused_only = argc > 3 && std::string(argv[3]) == "fused";
  const IsaLevel level = ActiveIsa();
  const bench::EigenFloor& eigen = bench::EigenFloorFor(level);
  std::printf("fusion_chain_bench: n=%lld f32, best of %d interleaved\nhost: %s, cpu isa %s, active %s "
              "(HLOX_ISA=%s); OPENBLAS_CORETYPE=%s OPENBLAS_L2_SIZE=%s (no BLAS used; unset for PyTorch)\n"
              "compute floor: Eigen tanh then exp built for %s (%s)\n",
              static_cast<long long>(n), reps, CpuModelName().c_str(), std::string(IsaName(CpuIsa())).c_str(),
              std::string(IsaName(level)).c_str(), EnvOr("HLOX_ISA"), EnvOr("OPENBLAS_CORETYPE"),
              EnvOr("OPENBLAS_L2_SIZE"), std::string(IsaName(level)).c_str(),
              *eigen.flags ? eigen.flags : "the build's baseline flags");
  auto unfused = ParseModule(ChainModule(n));
  if (!unfused.ok()) {
    std::fprintf(stderr, "%s\n", std::string(unfused.status().message()).c_str());
    return 1;
  }
  std::unique_ptr<Module> fused = (*unfused)->Clone();
  auto rep = CreateInstructionFusion()->Run(*fused);
  if (!rep.ok()) return 1;
  std::vector<rt::Value> args = rt::MakeSeededInputs(**unfused, 1);
  // The fused computation compiled on its own, to time it on the block loop.
  std::unique_ptr<rt::FusedProgram> program;
  for (const auto& c : fused->computations()) {
    if (c.get() == fused->entry()) continue;
    auto p = rt::FusedProgram::Compile(*c, 1);
    if (p.ok()) program = std::move(*p);
  }
  if (program == nullptr) return 1;
  std::vector<const rt::Value*> arg_ptrs;
  for (const rt::Value& v : args) arg_ptrs.push_back(&v);
  // The same fused program over an L2-resident size, run n / kSmall times a measurement: the
  // loop's cost in core time alone (no memory streams), against the compute floor.
  constexpr int64_t kSmall = 1 << 16;
  std::unique_ptr<rt::FusedProgram> small_program;
  std::unique_ptr<Module> small_module;
  std::vector<rt::Value> small_args;
  std::vector<const rt::Value*> small_ptrs;
  if (auto sm = ParseModule(ChainModule(kSmall)); sm.ok() && n > kSmall) {
    small_module = std::move(*sm);
    if (CreateInstructionFusion()->Run(*small_module).ok()) {
      for (const auto& c : small_module->computations()) {
        if (c.get() == small_module->entry()) continue;
        if (auto p = rt::FusedProgram::Compile(*c, 1); p.ok()) small_program = std::move(*p);
      }
      small_args = rt::MakeSeededInputs(*small_module, 1);
      for (const rt::Value& v : small_args) small_ptrs.push_back(&v);
    }
  }
  const double bytes = 4.0 * 4.0 * static_cast<double>(n);
  // The triad's arrays come from the runtime's buffer pool, like the fused loop's inputs and
  // output: 2 MiB-aligned with transparent huge pages, so both walk memory with the same TLB
  // reach.
  rt::BufferPtr triad_buf[3] = {rt::ScratchBuffer(4 * n), rt::ScratchBuffer(4 * n), rt::ScratchBuffer(4 * n)};
  float* const tabc[3] = {reinterpret_cast<float*>(triad_buf[0]->data()), reinterpret_cast<float*>(triad_buf[1]->data()),
                          reinterpret_cast<float*>(triad_buf[2]->data())};
  for (int k = 0; k < 3; ++k) std::fill_n(tabc[k], n, static_cast<float>(k));
  ComputeFloor cf(eigen);
  const int64_t cf_iters = std::max<int64_t>(1, n / ComputeFloor::kBlock);
  const double cf_scale = static_cast<double>(n) / static_cast<double>(cf_iters * ComputeFloor::kBlock);
  for (int threads : {1, 2}) {
    rt::ThreadPool pool(threads);
    // The triad's output is written with non-temporal stores, as the fused loop writes its
    // output, so the bytes it moves are the 12 it counts (an ordinary store also reads each
    // output line first, moving 16 bytes an element and understating the bandwidth by 4/3).
    auto triad = [&] {
      pool.ParallelFor(n, 1 << 16, [&](int64_t lo, int64_t hi) {
        float* pa = tabc[0];
        const float* pb = tabc[1];
        const float* pc = tabc[2];
        int64_t i = lo;
        for (; i < hi && (reinterpret_cast<uintptr_t>(pa + i) & 15) != 0; ++i) pa[i] = pb[i] + 3.0f * pc[i];
        const __m128 three = _mm_set1_ps(3.0f);  // SSE, in the portable baseline
        for (; i + 4 <= hi; i += 4) {
          _mm_stream_ps(pa + i, _mm_add_ps(_mm_loadu_ps(pb + i), _mm_mul_ps(three, _mm_loadu_ps(pc + i))));
        }
        _mm_sfence();
        for (; i < hi; ++i) pa[i] = pb[i] + 3.0f * pc[i];
      });
    };
    // The same triad with ordinary stores (the floor before non-temporal stores were used: its
    // uncounted read-for-ownership made that floor 4/3 too lenient), for comparison.
    auto triad_rfo = [&] {
      pool.ParallelFor(n, 1 << 16, [&](int64_t lo, int64_t hi) {
        float* pa = tabc[0];
        const float* pb = tabc[1];
        const float* pc = tabc[2];
        for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + 3.0f * pc[i];
      });
    };
    std::printf("%s\n", TorchReference(n, threads, reps).c_str());
    auto fused_exec = rt::Executor::Create(*fused, rt::ExecOptions{threads, 1});
    auto unfused_exec = rt::Executor::Create(**unfused, rt::ExecOptions{threads, 1});
    if (!fused_exec.ok() || !unfused_exec.ok()) return 1;
    rt::FusedRunOptions block_opt, sub_opt, micro_opt;
    block_opt.vector_path = false;
    sub_opt.micro_blocks = false;
    micro_opt.jit = false;
    for (auto* e : {&*fused_exec, &*unfused_exec}) {
      auto warm = (**e).Run(args);
      if (!warm.ok()) {
        std::fprintf(stderr, "%s\n", std::string(warm.status().message()).c_str());
        return 1;
      }
    }
    if (!program->Run(arg_ptrs, &pool, block_opt).ok()) return 1;
    triad();
    // Every variant once per round, best of `reps` rounds.
    // The ordinary-store triad runs in rounds of its own first: the dirty lines it leaves in the
    // caches would slow whichever variant ran after it.
    BestOf t_triad, t_triad_rfo, t_compute, t_fused, t_block, t_sub, t_micro, t_unfused, t_core;
    for (int r = 0; r < reps; ++r) t_triad_rfo.Time(triad_rfo);
    for (int r = 0; r < reps; ++r) {
      t_triad.Time(triad);
      t_compute.Time([&] { cf.Run(cf_iters); });  // one thread, also in 2-thread rounds
      if (threads == 1 && small_program != nullptr) {
        t_core.Time([&] {
          for (int64_t k = 0; k < n / kSmall; ++k) auto out = small_program->Run(small_ptrs, nullptr, rt::FusedRunOptions{});
        });
      }
      t_fused.Time([&] { auto out = (*fused_exec)->Run(args); });
      t_block.Time([&] { auto out = program->Run(arg_ptrs, &pool, block_opt); });
      t_sub.Time([&] { auto out = program->Run(arg_ptrs, &pool, sub_opt); });
      t_micro.Time([&] { auto out = program->Run(arg_ptrs, &pool, micro_opt); });
      if (!fused_only) t_unfused.Time([&] { auto out = (*unfused_exec)->Run(args); });
    }
    // Per round: fused / max(floors) with both floors measured in that round (the compute
    // floor is one thread's in every round; the host can slow it by half from one run to the
    // next), and fused / compute floor (the loop's cost in core time).
    std::vector<double> round_compute;
    for (double w : t_compute.walls) round_compute.push_back(w * cf_scale * 1e3);
    static double compute_wall = 0, compute_cpu = 0;  // measured with threads=1
    if (threads == 1) {
      compute_wall = t_compute.wall * cf_scale;
      compute_cpu = t_compute.cpu * cf_scale;
      std::printf("compute floor (Eigen tanh then exp in cache, 1 thread): %.2f ms (cpu %.2f ms)\n",
                  compute_wall * 1e3, compute_cpu * 1e3);
    }
    const double bw = 3.0 * 4.0 * static_cast<double>(n) / t_triad.wall;
    const double bw_floor = bytes / bw;
    const double cfloor = compute_wall / threads;
    const double floor = std::max(bw_floor, cfloor);
    const double fused_ms = t_fused.wall;
    const double unfused_ms = fused_only ? 0 : t_unfused.wall;
    std::printf("threads=%d triad %.1f GB/s | floors: bandwidth %.2f ms, compute %.2f ms | "
                "fused %.2f ms (%.2fx floor) | block loop %.2f ms (%.2fx fused) | sub-blocks %.2f ms "
                "(%.2fx floor, %.2fx fused) | unfused %.2f ms (%.2fx fused)\n",
                threads, bw / 1e9, bw_floor * 1e3, cfloor * 1e3, fused_ms * 1e3, fused_ms / floor,
                t_block.wall * 1e3, t_block.wall / fused_ms, t_sub.wall * 1e3, t_sub.wall / floor,
                t_sub.wall / fused_ms, unfused_ms * 1e3, unfused_ms / fused_ms);
    std::printf("threads=%d micro-blocks through op functions (the register path before generated code) %.2f ms "
                "(%.2fx floor, %.2fx fused)\n", threads, t_micro.wall * 1e3, t_micro.wall / floor,
                t_micro.wall / fused_ms);
    const Spread comp(round_compute);
    if (threads == 1 && !t_core.walls.empty()) {
      std::vector<double> in_cache;
      for (size_t r = 0; r < t_core.walls.size(); ++r) in_cache.push_back(t_core.walls[r] / (t_compute.walls[r] * cf_scale));
      const Spread ic(in_cache);
      std::printf("threads=1 fused loop in L2 (%lld elements, %lld runs a round, no memory streams: its cost in core "
                  "time): best %.2f ms, / compute floor of the round min %.2f median %.2f max %.2f\n",
                  static_cast<long long>(kSmall), static_cast<long long>(n / kSmall), t_core.wall * 1e3, ic.min,
                  ic.median, ic.max);
    }
    std::vector<double> round_ratio, round_core;
    for (size_t r = 0; r < t_fused.walls.size(); ++r) {
      const double c = t_compute.walls[r] * cf_scale;
      round_ratio.push_back(t_fused.walls[r] / std::max(4.0 / 3.0 * t_triad.walls[r], c / threads));
      round_core.push_back(t_fused.walls[r] / (c / threads));
    }
    const Spread ratio(round_ratio), core(round_core);
    std::printf("threads=%d per round (%zu): fused / max(floors of the round) min %.2f median %.2f max %.2f | "
                "fused / compute floor min %.2f median %.2f max %.2f | compute floor (1 thread) min %.2f "
                "median %.2f max %.2f ms\n",
                threads, round_ratio.size(), ratio.min, ratio.median, ratio.max, core.min, core.median, core.max,
                comp.min, comp.median, comp.max);
    std::printf("threads=%d ordinary-store triad %.1f GB/s (STREAM count): its floor %.2f ms, fused %.2fx "
                "that floor\n", threads, 12.0 * static_cast<double>(n) / t_triad_rfo.wall / 1e9,
                bytes / (12.0 * static_cast<double>(n) / t_triad_rfo.wall) * 1e3,
                fused_ms / std::max(bytes / (12.0 * static_cast<double>(n) / t_triad_rfo.wall), cfloor));
    std::printf("threads=%d page faults in %d runs: fused %lld, block loop %lld, sub-blocks %lld, unfused %lld\n",
                threads, reps, static_cast<long long>(t_fused.faults), static_cast<long long>(t_block.faults),
                static_cast<long long>(t_sub.faults),
                static_cast<long long>(fused_only ? 0 : t_unfused.faults));
    if (threads == 1) {  // the same figures in CPU time (robust to a loaded machine)
      std::printf("threads=1 off-CPU time (least wall - CPU time of a run: descheduled or stolen): triad %.2f ms, "
                  "fused %.2f ms, compute floor %.2f ms\n", t_triad.off_cpu * 1e3, t_fused.off_cpu * 1e3,
                  t_compute.off_cpu * cf_scale * 1e3);
      const double cbw_floor = bytes / (3.0 * 4.0 * static_cast<double>(n) / t_triad.cpu);
      const double cfloor_cpu = std::max(cbw_floor, compute_cpu);
      std::printf("threads=1 cpu-time: floors: bandwidth %.2f ms, compute %.2f ms | fused %.2f ms "
                  "(%.2fx floor) | block loop %.2f ms | sub-blocks %.2f ms (%.2fx floor) | unfused %.2f ms\n",
                  cbw_floor * 1e3, compute_cpu * 1e3, t_fused.cpu * 1e3, t_fused.cpu / cfloor_cpu,
                  t_block.cpu * 1e3, t_sub.cpu * 1e3, t_sub.cpu / cfloor_cpu, fused_only ? 0.0 : t_unfused.cpu * 1e3);
    }
  }
  if (cf.sink == 12345.f) std::printf(" ");
  auto st = rt::GetFusionKernelStats();
  std::printf("fusion kernel: %lld fused runs, %lld fallbacks\n", static_cast<long long>(st.fused_runs),
              static_cast<long long>(st.fallback_runs));
  return 0;
}


}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
