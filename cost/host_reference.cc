// Host-speed references: the two kernels, the process-wide quiet times and the normalization
// arithmetic.
#include "cost/host_reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>

#include "cost/timing.h"

namespace hlox {

namespace {

// Fastest run of each built-in kernel in this process, and fixed quiet times (0: none).
std::atomic<double> g_fastest_compute{0}, g_fastest_memory{0};
std::atomic<double> g_fixed_compute{0}, g_fixed_memory{0};

void RecordFastest(std::atomic<double>& fastest, double seconds) {
  double cur = fastest.load(std::memory_order_relaxed);
  while (seconds > 0 && (cur == 0 || seconds < cur) &&
         !fastest.compare_exchange_weak(cur, seconds, std::memory_order_relaxed)) {
  }
}

// 128 MiB (well above the last-level cache of the machines measured) read 4 MiB at a time, a
// different chunk each call: 32 calls between two reads of the same chunk.
constexpr size_t kMemoryBufferFloats = size_t{32} << 20;
constexpr size_t kMemoryChunkFloats = size_t{1} << 20;

float* MemoryBuffer() {
  static std::once_flag once;
  static std::unique_ptr<float[]> buffer;
  std::call_once(once, [] {
    buffer.reset(new float[kMemoryBufferFloats]);
    for (size_t i = 0; i < kMemoryBufferFloats; ++i) buffer[i] = static_cast<float>(i & 15);
  });
  return buffer.get();
}

}  // namespace

std::string HostReferenceName(HostReferenceKind kind) {
  switch (kind) {
    case HostReferenceKind::kNone: return "none";
    case HostReferenceKind::kCompute: return "compute";
    case HostReferenceKind::kMemory: return "memory";
    case HostReferenceKind::kMix: return "mix";
  }
  return "none";
}

bool ParseHostReference(const std::string& name, HostReferenceKind* kind) {
  for (HostReferenceKind k : {HostReferenceKind::kNone, HostReferenceKind::kCompute,
                              HostReferenceKind::kMemory, HostReferenceKind::kMix}) {
    if (name == HostReferenceName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

void ComputeReferenceKernel() {
  // 2048 floats (8 KiB, L1) updated 1600 times by independent multiply-adds: vectorized,
  // throughput-bound. The empty asm keeps the array's contents observable.
  constexpr int kN = 2048, kPasses = 1600;
  alignas(64) static thread_local float a[kN];
  for (int i = 0; i < kN; ++i) a[i] = static_cast<float>(i & 7) * 0.125f;
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int i = 0; i < kN; ++i) a[i] = a[i] * 0.999f + 0.001f;
  }
  asm volatile("" : : "r"(a) : "memory");
}

void MemoryReferenceKernel() {
  static std::atomic<size_t> next_chunk{0};
  const float* buf = MemoryBuffer();
  const size_t chunks = kMemoryBufferFloats / kMemoryChunkFloats;
  const size_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed) % chunks;
  const float* p = buf + chunk * kMemoryChunkFloats;
  // Eight independent sums so the adds vectorize and the loads, not the adds, set the pace.
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < kMemoryChunkFloats; i += 8) {
    for (int k = 0; k < 8; ++k) s[k] += p[i + k];
  }
  float total = 0;
  for (float v : s) total += v;
  asm volatile("" : : "r"(total) : "memory");
}

ReferenceQuiet CurrentReferenceQuiet() {
  ReferenceQuiet q;
  q.compute = g_fixed_compute.load(std::memory_order_relaxed);
  q.memory = g_fixed_memory.load(std::memory_order_relaxed);
  if (!(q.compute > 0)) q.compute = g_fastest_compute.load(std::memory_order_relaxed);
  if (!(q.memory > 0)) q.memory = g_fastest_memory.load(std::memory_order_relaxed);
  return q;
}

void SetReferenceQuiet(const ReferenceQuiet& quiet) {
  g_fixed_compute.store(quiet.compute > 0 ? quiet.compute : 0, std::memory_order_relaxed);
  g_fixed_memory.store(quiet.memory > 0 ? quiet.memory : 0, std::memory_order_relaxed);
}

bool FixedReferenceQuiet() {
  return g_fixed_compute.load(std::memory_order_relaxed) > 0 ||
         g_fixed_memory.load(std::memory_order_relaxed) > 0;
}

ReferenceQuiet CalibrateReferenceQuiet(int runs) {
  static const HostReference::Clock clock = SteadySeconds;
  HostReference ref(HostReferenceKind::kMix, clock);
  for (int i = 0; i < std::max(1, runs); ++i) ref.Boundary();
  ReferenceQuiet q;
  q.compute = *std::min_element(ref.compute_seconds().begin(), ref.compute_seconds().end());
  q.memory = *std::min_element(ref.memory_seconds().begin(), ref.memory_seconds().end());
  return q;
}

std::vector<double> NearbyReference(const std::vector<double>& boundary, size_t samples,
                                    bool mean) {
  std::vector<double> out(samples, 0);
  for (size_t i = 0; i < samples; ++i) {
    const bool a = i < boundary.size(), b = i + 1 < boundary.size();
    if (a && b) {
      out[i] = mean ? 0.5 * (boundary[i] + boundary[i + 1])
                    : std::min(boundary[i], boundary[i + 1]);
    } else if (a || b) {
      out[i] = a ? boundary[i] : boundary[i + 1];
    }
  }
  return out;
}

std::vector<double> HostSlowdown(HostReferenceKind kind, const std::vector<double>& compute,
                                 const std::vector<double>& memory, const ReferenceQuiet& quiet,
                                 double compute_weight) {
  double w = kind == HostReferenceKind::kCompute ? 1.0
             : kind == HostReferenceKind::kMemory ? 0.0
                                                  : std::clamp(compute_weight, 0.0, 1.0);
  if (kind == HostReferenceKind::kNone) w = -1;
  const size_t n = std::max(compute.size(), memory.size());
  std::vector<double> out(n, 1.0);
  if (w < 0) return out;
  auto ratio = [](const std::vector<double>& v, size_t i, double q) {
    return i < v.size() && v[i] > 0 && q > 0 ? v[i] / q : 0.0;
  };
  for (size_t i = 0; i < n; ++i) {
    const double c = ratio(compute, i, quiet.compute), m = ratio(memory, i, quiet.memory);
    if ((w > 0 && !(c > 0)) || (w < 1 && !(m > 0))) continue;  // unknown: leave at 1
    out[i] = (w > 0 ? std::pow(c, w) : 1.0) * (w < 1 ? std::pow(m, 1 - w) : 1.0);
  }
  return out;
}

std::vector<double> NormalizeSamples(const std::vector<double>& samples,
                                     const std::vector<double>& slowdown) {
  std::vector<double> out(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const double f = i < slowdown.size() && slowdown[i] > 0 ? slowdown[i] : 1.0;
    out[i] = samples[i] / f;
  }
  return out;
}

HostReference::HostReference(HostReferenceKind kind, const Clock& clock,
                             std::function<void()> compute, std::function<void()> memory)
    : kind_(kind),
      clock_(clock),
      compute_fn_(std::move(compute)),
      memory_fn_(std::move(memory)),
      builtin_compute_(!compute_fn_),
      builtin_memory_(!memory_fn_) {
  if (builtin_compute_) compute_fn_ = ComputeReferenceKernel;
  if (builtin_memory_) memory_fn_ = MemoryReferenceKernel;
  // Touch the DRAM buffer now, outside any timed boundary.
  if (builtin_memory_ &&
      (kind_ == HostReferenceKind::kMemory || kind_ == HostReferenceKind::kMix)) {
    MemoryBuffer();
  }
}

void HostReference::Boundary() {
  const bool compute = kind_ == HostReferenceKind::kCompute || kind_ == HostReferenceKind::kMix;
  const bool memory = kind_ == HostReferenceKind::kMemory || kind_ == HostReferenceKind::kMix;
  if (compute) {
    double t0 = clock_();
    compute_fn_();
    compute_.push_back(clock_() - t0);
    if (builtin_compute_) RecordFastest(g_fastest_compute, compute_.back());
  }
  if (memory) {
    double t0 = clock_();
    memory_fn_();
    memory_.push_back(clock_() - t0);
    if (builtin_memory_) RecordFastest(g_fastest_memory, memory_.back());
  }
}

}  // namespace hlox
