// Bench: the core-time cost of hlox's f32 vector math (runtime/math/vmath.h: ExpF32, TanhF32,
// LogisticF32, LogF32, and tanh then exp, the chain bench's compute floor), at every
// instruction-set level up to the active one (common/cpu_isa.h: the CPU's, or lower with
// HLOX_ISA), next to the same functions from Eigen built for that level (eigen_floor.h: code
// hlox does not contain). Each variant maps a 4096-float block to another, both in L1, over
// independent elements (throughput, not latency). Figures are TSC cycles per element (the TSC
// ticks at the CPU's nominal clock, not the core's current one), best of interleaved rounds:
// every variant once a round, so a slow stretch of the host hits all of them alike (robust to
// a loaded machine only as far as some round runs undisturbed).
// Usage: fusion_kernel_bench [rounds]
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/fusion/eigen_floor.h"
#include "common/cpu_isa.h"
#include "runtime/math/vmath.h"

namespace hlox {
namespace {

constexpr int64_t kBlock = 4096;
constexpr int kCallsPerTiming = 10;

using ArrayFn = void (*)(const float* a, float* o, int64_t n);

// One function of one level from one implementation: o = second(first(a)) (second may be
// null), timed over the block.
struct Variant {
  IsaLevel level;
  const char* name;
  ArrayFn hlox_first, hlox_second, eigen_first, eigen_second;
  bool positive;  // takes inputs in (0, 4] (log) instead of [-2, 2]
  double hlox_best = 1e30, eigen_best = 1e30;
};

// TSC cycles per element of one timing of first then second over the block.
double Time(ArrayFn first, ArrayFn second, const float* in, float* out) {
  const uint64_t t0 = __rdtsc();
  for (int k = 0; k < kCallsPerTiming; ++k) {
    first(in, out, kBlock);
    if (second != nullptr) second(out, out, kBlock);
  }
  const uint64_t t1 = __rdtsc();
  return static_cast<double>(t1 - t0) / (kCallsPerTiming * kBlock);
}

int Main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 200;
  const IsaLevel top = ActiveIsa();
  std::vector<Variant> vs;
  for (int l = 0; l <= static_cast<int>(top); ++l) {
    const IsaLevel level = static_cast<IsaLevel>(l);
    const bench::EigenFloor& e = bench::EigenFloorFor(level);
    vs.push_back({level, "exp", &rt::vmath::ExpF32, nullptr, e.exp, nullptr, false});
    vs.push_back({level, "tanh", &rt::vmath::TanhF32, nullptr, e.tanh, nullptr, false});
    vs.push_back({level, "logistic", &rt::vmath::LogisticF32, nullptr, e.logistic, nullptr, false});
    vs.push_back({level, "log", &rt::vmath::LogF32, nullptr, e.log, nullptr, true});
    vs.push_back({level, "tanh then exp", &rt::vmath::TanhF32, &rt::vmath::ExpF32, e.tanh, e.exp, false});
  }
  std::vector<float> in(kBlock), positive(kBlock), out(kBlock);
  for (int64_t i = 0; i < kBlock; ++i) {
    in[i] = -2.f + 4.f * static_cast<float>(i) / kBlock;
    positive[i] = 4.f * static_cast<float>(i + 1) / kBlock;
  }
  for (int r = 0; r < rounds; ++r) {
    for (int l = 0; l <= static_cast<int>(top); ++l) {
      ScopedIsa isa(static_cast<IsaLevel>(l));  // the level runtime/math/vmath.h dispatches to
      for (Variant& v : vs) {
        if (static_cast<int>(v.level) != l) continue;
        const float* a = v.positive ? positive.data() : in.data();
        v.hlox_best = std::min(v.hlox_best, Time(v.hlox_first, v.hlox_second, a, out.data()));
        v.eigen_best = std::min(v.eigen_best, Time(v.eigen_first, v.eigen_second, a, out.data()));
      }
    }
  }
  std::printf("fusion_kernel_bench: TSC cycles per f32 element in L1 (%lld-element block), best of %d "
              "interleaved rounds\nhost: %s, cpu isa %s, levels up to %s (HLOX_ISA=%s)\n",
              static_cast<long long>(kBlock), rounds, CpuModelName().c_str(), std::string(IsaName(CpuIsa())).c_str(),
              std::string(IsaName(top)).c_str(), std::getenv("HLOX_ISA") ? std::getenv("HLOX_ISA") : "unset");
  std::printf("  %-8s %-14s %7s %7s %11s  eigen built with\n", "level", "function", "hlox", "eigen", "hlox/eigen");
  for (const Variant& v : vs) {
    const char* flags = bench::EigenFloorFor(v.level).flags;
    std::printf("  %-8s %-14s %7.3f %7.3f %11.2f  %s\n", std::string(IsaName(v.level)).c_str(), v.name, v.hlox_best,
                v.eigen_best, v.hlox_best / v.eigen_best, *flags ? flags : "(the build's baseline flags)");
  }
  return 0;
}

}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
