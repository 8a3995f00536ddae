// Host-speed references for the timing protocols: short fixed workloads timed at every sample
// boundary (outside the timed region) that measure how fast the host runs *right now*, next to
// the measured module. A shared guest cannot see the host's contention (the SMT sibling, memory
// bandwidth taken by other tenants, frequency), but a fixed workload slows down with it. Two
// kernels: an in-cache compute kernel (vector multiply-adds over 8 KiB, 0.08-0.2 ms) and a
// DRAM-streaming one (reads 4 MiB of a 128 MiB buffer, a different part each call, so the data
// always comes from DRAM; about 0.4 ms). A sample's nearby reference time is the mean of the
// two compute-reference runs bracketing it, or the faster of the two memory-reference runs
// (which have DRAM outliers of their own; docs/MEASUREMENTS.md has the comparison); its normalized
// cost is sample / nearby * quiet, quiet being the reference's calibrated time on a quiet host
// (or the fastest run this process has seen).
// The arithmetic is pure so tests drive it with synthetic times.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace hlox {

enum class HostReferenceKind { kNone, kCompute, kMemory, kMix };

// "none", "compute", "memory", "mix".
std::string HostReferenceName(HostReferenceKind kind);
// Parses a name above; false for anything else.
bool ParseHostReference(const std::string& name, HostReferenceKind* kind);

// The two reference kernels: fixed work, the same on every call.
void ComputeReferenceKernel();
void MemoryReferenceKernel();

// The quiet time of each kernel in this process: a fixed value when set (SetReferenceQuiet,
// e.g. from a calibration), else the fastest run recorded so far; 0 when unknown.
struct ReferenceQuiet {
  double compute = 0, memory = 0;
};
ReferenceQuiet CurrentReferenceQuiet();
// Fixes the quiet times (a value <= 0 returns that kernel to "fastest run seen").
void SetReferenceQuiet(const ReferenceQuiet& quiet);
// Whether any quiet time is fixed.
bool FixedReferenceQuiet();
// Runs each kernel `runs` times and records the runs (the fastest becomes the quiet time unless
// fixed); returns the fastest of these runs. For a process about to measure.
ReferenceQuiet CalibrateReferenceQuiet(int runs);

// Per sample i of `samples`: the smaller of the reference times at boundaries i and i+1 (their
// mean with `mean`; the one that exists when the other is missing; 0 when neither does).
std::vector<double> NearbyReference(const std::vector<double>& boundary_seconds, size_t samples,
                                    bool mean = false);

// The slowdown of each sample's host: (compute_i / quiet.compute)^w * (memory_i /
// quiet.memory)^(1-w) with w = 1 for kCompute, 0 for kMemory, `compute_weight` for kMix.
// Entries with an unknown (non-positive) time or quiet time get slowdown 1.
std::vector<double> HostSlowdown(HostReferenceKind kind, const std::vector<double>& compute,
                                 const std::vector<double>& memory, const ReferenceQuiet& quiet,
                                 double compute_weight = 0.5);

// samples[i] / slowdown[i]: each sample as it would have run on the quiet host.
std::vector<double> NormalizeSamples(const std::vector<double>& samples,
                                     const std::vector<double>& slowdown);

// Times the references at the sample boundaries of one measurement.
class HostReference {
 public:
  using Clock = std::function<double()>;
  // kNone: Boundary() does nothing. The kernels default to the two above; tests pass their own.
  HostReference(HostReferenceKind kind, const Clock& clock, std::function<void()> compute = {},
                std::function<void()> memory = {});
  bool active() const { return kind_ != HostReferenceKind::kNone; }
  // Times the kernels the kind needs (both for kMix): before the first sample and after each.
  void Boundary();
  const std::vector<double>& compute_seconds() const { return compute_; }
  const std::vector<double>& memory_seconds() const { return memory_; }

 private:
  HostReferenceKind kind_;
  const Clock& clock_;
  std::function<void()> compute_fn_, memory_fn_;
  bool builtin_compute_, builtin_memory_;
  std::vector<double> compute_, memory_;
};

}  // namespace hlox
