// Calibration: an FMA loop for peak f32 GFLOP/s (at the active instruction-set level: the peak
// the runtime's kernels can reach) and a triad for bandwidth, single and multi-threaded; JSON
// storage of the figures.
#include "cost/calibrate.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <immintrin.h>

#include "absl/strings/str_cat.h"
#include "common/cpu_isa.h"
#include "cost/provenance.h"
#include "cost/timing.h"
#include "nlohmann/json.hpp"

namespace hlox {
namespace {

constexpr int kAcc = 12;  // independent accumulators, enough to hide FMA latency

// `iters` rounds of kAcc vector multiply-adds at the instruction-set level the kernels use
// (fused on AVX2 and AVX-512, a multiply and an add on the generic level's SSE); each returns a
// value so nothing is optimized out. The AVX ones are compiled for their level (target pragma)
// and called only when it is active.
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
// GCC 12 reports false uninitialized warnings inside the AVX-512 intrinsics.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
float FmaKernelAvx512(int64_t iters) {
  __m512 acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = _mm512_set1_ps(0.001f * static_cast<float>(j));
  __m512 a = _mm512_set1_ps(0.999999f);
  const __m512 b = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kAcc; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
    asm volatile("" : "+v"(a));  // keep the loop from being folded
  }
  float r = 0;
  for (int j = 0; j < kAcc; ++j) r += _mm512_reduce_add_ps(acc[j]);
  return r;
}

float FmaKernelAvx2(int64_t iters) {
  __m256 acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = _mm256_set1_ps(0.001f * static_cast<float>(j));
  __m256 a = _mm256_set1_ps(0.999999f);
  const __m256 b = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kAcc; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
    asm volatile("" : "+x"(a));
  }
  __m256 s = acc[0];
  for (int j = 1; j < kAcc; ++j) s = _mm256_add_ps(s, acc[j]);
  alignas(32) float f[8];
  _mm256_store_ps(f, s);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#pragma GCC diagnostic pop
#pragma GCC pop_options

float FmaKernelGeneric(int64_t iters) {
  __m128 acc[kAcc];
  for (int j = 0; j < kAcc; ++j) acc[j] = _mm_set1_ps(0.001f * static_cast<float>(j));
  __m128 a = _mm_set1_ps(0.999999f);
  const __m128 b = _mm_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
    for (int j = 0; j < kAcc; ++j) acc[j] = _mm_add_ps(_mm_mul_ps(acc[j], a), b);
    asm volatile("" : "+x"(a));
  }
  __m128 s = acc[0];
  for (int j = 1; j < kAcc; ++j) s = _mm_add_ps(s, acc[j]);
  alignas(16) float f[4];
  _mm_store_ps(f, s);
  return f[0] + f[1] + f[2] + f[3];
}

// The active level's kernel and the f32 flops of one of its rounds.
struct FmaKernelOf {
  float (*run)(int64_t iters);
  double flops_per_iter;
};
FmaKernelOf ActiveFmaKernel() {
  switch (ActiveIsa()) {
    case IsaLevel::kAvx512: return {FmaKernelAvx512, kAcc * 16 * 2.0};
    case IsaLevel::kAvx2: return {FmaKernelAvx2, kAcc * 8 * 2.0};
    case IsaLevel::kGeneric: break;
  }
  return {FmaKernelGeneric, kAcc * 4 * 2.0};
}

// Runs fn(thread_index) on `threads` threads at once and returns the wall time.
template <typename F>
double TimeParallel(int threads, F fn) {
  double t0 = SteadySeconds();
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(fn, t);
  fn(0);
  for (auto& th : pool) th.join();
  return SteadySeconds() - t0;
}

double MeasureGflops(int threads, double seconds) {
  const FmaKernelOf kernel = ActiveFmaKernel();
  auto FmaKernel = kernel.run;
  const double kFlopsPerIter = kernel.flops_per_iter;
  // Size the iteration count from a short probe.
  int64_t iters = 1 << 16;
  double t = 0;
  volatile float sink = 0;
  while ((t = TimeParallel(1, [&](int) { sink = sink + FmaKernel(iters); })) < seconds / 8) {
    iters *= 2;
  }
  iters = static_cast<int64_t>(static_cast<double>(iters) * (seconds / 4) / std::max(t, 1e-9)) + 1;
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) {
    std::vector<float> out(threads);
    double w = TimeParallel(threads, [&](int i) { out[i] = FmaKernel(iters); });
    for (float f : out) sink = sink + f;
    best = std::max(best, kFlopsPerIter * static_cast<double>(iters) * threads / w / 1e9);
  }
  return best;
}

double MeasureTriad(int threads, double seconds) {
  const int64_t n = int64_t{1} << 23;  // 3 arrays x 32 MiB: far beyond the last-level cache
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  auto triad = [&](int t, int tn) {
    int64_t lo = n * t / tn, hi = n * (t + 1) / tn;
    const float s = 1.0001f;
    for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  };
  double one = TimeParallel(threads, [&](int t) { triad(t, threads); });
  int reps = std::clamp(static_cast<int>(seconds / std::max(one, 1e-6)), 3, 50);
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    double w = TimeParallel(threads, [&](int t) { triad(t, threads); });
    best = std::max(best, 3.0 * 4.0 * static_cast<double>(n) / w / 1e9);
  }
  volatile float sink = a[n / 2];
  (void)sink;
  return best;
}

// The calibration JSON's keys for the KernelKindCost fields.
const std::pair<const char*, double KernelKindCost::*> kKindFields[] = {
    {"fixed_us", &KernelKindCost::fixed_us},
    {"ns_per_element", &KernelKindCost::ns_per_element},
    {"node_us", &KernelKindCost::node_us},
    {"int_ns_per_element", &KernelKindCost::int_ns_per_element},
    {"int_node_us", &KernelKindCost::int_node_us},
    {"half_ns_per_element", &KernelKindCost::half_ns_per_element},
    {"half_node_us", &KernelKindCost::half_node_us},
    {"node_ns_per_element", &KernelKindCost::node_ns_per_element},
    {"int_node_ns_per_element", &KernelKindCost::int_node_ns_per_element},
    {"half_node_ns_per_element", &KernelKindCost::half_node_ns_per_element},
    {"move_node_us", &KernelKindCost::move_node_us},
};

}  // namespace

double MachinePeaks::GflopsFor(int threads) const {
  if (threads <= 1 || threads_n <= 1) return gflops_1;
  if (threads >= threads_n) return gflops_n;
  double f = static_cast<double>(threads - 1) / (threads_n - 1);
  return gflops_1 + f * (gflops_n - gflops_1);
}

double MachinePeaks::BandwidthGbsFor(int threads) const {
  if (threads <= 1 || threads_n <= 1) return bandwidth_gbs_1;
  if (threads >= threads_n) return bandwidth_gbs_n;
  double f = static_cast<double>(threads - 1) / (threads_n - 1);
  return bandwidth_gbs_1 + f * (bandwidth_gbs_n - bandwidth_gbs_1);
}

const char* KernelKindName(KernelKind kind) {
  static const char* const kNames[kNumKernelKinds] = {
      "elementwise", "transcendental", "broadcast",       "copy",         "reduce",        "slice_concat",
      "dynamic_slice", "dot",          "fusion_register", "fusion_block", "fusion_reduce", "other"};
  const int k = static_cast<int>(kind);
  return k >= 0 && k < kNumKernelKinds ? kNames[k] : "other";
}

KernelKindCosts DefaultKernelKindCosts() {
  // `hlox calibrate --kernel-seconds 3` on the development guest (2-vCPU Xeon @ 2.8 GHz, 1
  // thread, 2026-11-21 22:45-23:10 UTC, load 6-11 from other builds; rounded between runs).
  KernelKindCosts c;
  auto set = [&](KernelKind k, double fixed_us, double ns_per_element, double node_us = 0) {
    c[static_cast<int>(k)] = {fixed_us, ns_per_element, node_us, ns_per_element, node_us,
                              ns_per_element, node_us, 0, 0, 0, 0};
  };
  // Fusion kinds' per-node figures (f32 node_us and node_ns_per_element from 16- and
  // 1024-element chains), integer (u32 adds) and bf16 (adds, clamps) figures: three
  // calibrations, 2026-11-21 23:42 UTC, load 7-7.5 (register-path fusions have no integer ops).
  struct Class { double ns, node_us, node_ns; };
  auto set_classes = [&](KernelKind k, double node_us, double node_ns, Class in, Class half) {
    KernelKindCost& e = c[static_cast<int>(k)];
    e.node_us = node_us, e.node_ns_per_element = node_ns;
    e.int_ns_per_element = in.ns, e.int_node_us = in.node_us, e.int_node_ns_per_element = in.node_ns;
    e.half_ns_per_element = half.ns, e.half_node_us = half.node_us, e.half_node_ns_per_element = half.node_ns;
    e.move_node_us = 0.12;  // u32[16] slices + concatenate against adds, 23:50 UTC
  };
  set(KernelKind::kElementwise, 0.25, 0.12);
  set(KernelKind::kTranscendental, 0.33, 0.25);
  set(KernelKind::kBroadcast, 0.5, 0.06);
  set(KernelKind::kCopy, 0.5, 0.7);
  set(KernelKind::kReduce, 0.37, 0.35);
  set(KernelKind::kSliceConcat, 0.45, 0.065);
  set(KernelKind::kDynamicSlice, 0.4, 0.07);
  set(KernelKind::kDot, 0.85, 0.035);  // per FLOP
  set(KernelKind::kFusionRegister, 0.7, 0.15);  // f32 adds; per-node figures below
  set(KernelKind::kFusionBlock, 0.55, 0.17);     // f32 clamps
  set(KernelKind::kFusionReduce, 0.8, 1.0);
  set(KernelKind::kOther, 0.4, 0);  // not measured: about a plain kernel's
  set_classes(KernelKind::kFusionRegister, 0.034, 0.04, {0.15, 0.034, 0.04}, {0.37, 0.025, 0.18});
  set_classes(KernelKind::kFusionBlock, 0.055, 0.11, {2.7, 0.07, 0.4}, {0.6, 0.05, 0.12});
  set_classes(KernelKind::kFusionReduce, 0.054, 0.14, {5.8, 0.053, 0.35}, {1.9, 0.065, 0.33});
  return c;
}

MachinePeaks DefaultPeaks() { return MachinePeaks{}; }

MachinePeaks MeasurePeaks(int threads, double seconds_per_test) {
  threads = std::max(1, threads);
  MachinePeaks p;
  p.threads_n = threads;
  p.gflops_1 = MeasureGflops(1, seconds_per_test);
  p.bandwidth_gbs_1 = MeasureTriad(1, seconds_per_test);
  p.gflops_n = threads > 1 ? MeasureGflops(threads, seconds_per_test) : p.gflops_1;
  p.bandwidth_gbs_n = threads > 1 ? MeasureTriad(threads, seconds_per_test) : p.bandwidth_gbs_1;
  p.host = HostName();
  p.cpu = CpuModelName();
  p.source = "measured";
  return p;
}

std::string CalibrationPath() {
  if (const char* env = std::getenv("HLOX_CALIBRATION"); env && *env) return env;
  const char* home = std::getenv("HOME");
  return absl::StrCat(home && *home ? home : "/tmp", "/.cache/hlox/calibration.json");
}

std::string PeaksToJsonString(const MachinePeaks& p) {
  nlohmann::json kinds = nlohmann::json::object();
  for (int k = 0; k < kNumKernelKinds; ++k) {
    nlohmann::json& e = kinds[KernelKindName(static_cast<KernelKind>(k))];
    for (const auto& [key, field] : kKindFields) e[key] = p.kinds[k].*field;
  }
  nlohmann::json j{{"gflops_1", p.gflops_1},
                   {"gflops_n", p.gflops_n},
                   {"bandwidth_gbs_1", p.bandwidth_gbs_1},
                   {"bandwidth_gbs_n", p.bandwidth_gbs_n},
                   {"threads_n", p.threads_n},
                   {"kernel_overhead_us", p.kernel_overhead_us},
                   {"fusion_overhead_us", p.fusion_overhead_us},
                   {"kernel_kinds", kinds},
                   {"kernel_kinds_source", p.kinds_source},
                   {"host", p.host},
                   {"cpu", p.cpu},
                   {"source", p.source}};
  return j.dump(2);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  std::error_code ec;
  const std::filesystem::path fp(path);
  if (fp.has_parent_path()) std::filesystem::create_directories(fp.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::filesystem::rename(tmp, path, ec);  // atomic replace
  if (ec) return absl::InternalError(absl::StrCat("cannot rename to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ReadJsonObjectFile(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no ", what, " file ", path));
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a ", what, " JSON object"));
  }
  return j;
}

absl::Status SavePeaks(const MachinePeaks& peaks, const std::string& path) {
  return WriteFileAtomically(path, PeaksToJsonString(peaks) + "\n");
}

absl::StatusOr<MachinePeaks> LoadPeaks(const std::string& path) {
  absl::StatusOr<nlohmann::json> read = ReadJsonObjectFile(path, "calibration");
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  MachinePeaks p;
  try {
    p.gflops_1 = j.at("gflops_1").get<double>();
    p.gflops_n = j.at("gflops_n").get<double>();
    p.bandwidth_gbs_1 = j.at("bandwidth_gbs_1").get<double>();
    p.bandwidth_gbs_n = j.at("bandwidth_gbs_n").get<double>();
    p.threads_n = j.value("threads_n", 1);
    p.kernel_overhead_us = std::max(0.0, j.value("kernel_overhead_us", p.kernel_overhead_us));
    p.fusion_overhead_us = std::max(0.0, j.value("fusion_overhead_us", p.fusion_overhead_us));
    // Per-kind costs (absent in files written before 2026-11-21 23:00: defaults, kind by kind).
    if (auto it = j.find("kernel_kinds"); it != j.end() && it->is_object()) {
      for (int k = 0; k < kNumKernelKinds; ++k) {
        auto e = it->find(KernelKindName(static_cast<KernelKind>(k)));
        if (e == it->end() || !e->is_object()) continue;
        KernelKindCost& c = p.kinds[k];  // a field absent (older files): its default
        for (const auto& [key, field] : kKindFields) {
          c.*field = std::max(0.0, e->value(key, c.*field));
        }
      }
      p.kinds_source = j.value("kernel_kinds_source", "measured");
    }
    p.host = j.value("host", "");
    p.cpu = j.value("cpu", "");
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  if (!(p.gflops_1 > 0 && p.gflops_n > 0 && p.bandwidth_gbs_1 > 0 && p.bandwidth_gbs_n > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": peaks must be positive"));
  }
  p.source = path;
  return p;
}

const MachinePeaks& CachedPeaks() {
  static const MachinePeaks peaks = [] {
    auto p = LoadPeaks(CalibrationPath());
    return p.ok() ? *p : DefaultPeaks();
  }();
  return peaks;
}

}  // namespace hlox
