// This machine's measured peaks for the roofline model: f32 GFLOP/s from an FMA loop and memory
// bandwidth from a STREAM-style triad, each for 1 thread and for N threads. `hlox calibrate`
// measures and stores them as JSON at $HLOX_CALIBRATION or ~/.cache/hlox/calibration.json; the
// roofline model loads that file, falling back to conservative defaults when it is absent.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace hlox {

// Kinds of kernel the roofline charges a fixed cost for (kernel_model.h KernelKindOf).
enum class KernelKind : uint8_t {
  kElementwise,     // plain unary/binary/compare/select/convert... (not transcendental)
  kTranscendental,  // plain exp, log, tanh, logistic, erf, pow, sqrt, rsqrt, ...
  kBroadcast,       // broadcast, iota
  kCopy,            // copy, transpose, reshape, reverse
  kReduce,          // reduce, reduce-window
  kSliceConcat,     // slice, concatenate, pad
  kDynamicSlice,    // dynamic-slice, dynamic-update-slice, gather, scatter
  kDot,             // dot, convolution
  kFusionRegister,  // a fusion on the register path (fused_flops.h FusedPathOf)
  kFusionBlock,     // a fusion on the block loop (elementwise outputs)
  kFusionReduce,    // a fusion on the block loop with a reduce output
  kOther,           // everything else (sort, rng, custom calls, ...)
};
inline constexpr int kNumKernelKinds = 12;
// Short name ("elementwise", "fusion_register", ...): the calibration JSON's keys.
const char* KernelKindName(KernelKind kind);

// Measured cost of one kernel of a kind in this runtime, in cache: time = fixed + per_element x
// output elements (per FLOP for kDot); a fusion adds, per fused op beyond the first, node_us
// (the fused loop's per-node set-up, which dominates on tiny tensors) + node_ns_per_element x
// elements. Fusion kinds have these figures per element class of the fused ops
// (ElementClassOf): the plain fields for f32/f64 ops, the int_ and half_ ones for integer/pred
// and bf16/f16 ops; a fusion is charged the mix of its ops' classes, plus move_node_us per
// fused data-movement op (slice, concatenate, pad, dynamic-slice, gather, reverse, transpose).
struct KernelKindCost {
  double fixed_us = 0;
  double ns_per_element = 0;
  double node_us = 0;  // fusion kinds only, from here on
  double int_ns_per_element = 0, int_node_us = 0;
  double half_ns_per_element = 0, half_node_us = 0;
  double node_ns_per_element = 0, int_node_ns_per_element = 0, half_node_ns_per_element = 0;
  double move_node_us = 0;
};
// Element classes a fused op computes in, with their own costs on the fused loop.
enum class ElementClass : uint8_t { kFloat, kInteger, kHalf };
using KernelKindCosts = std::array<KernelKindCost, kNumKernelKinds>;
// Figures measured once on the development machine (see calibrate.cc): what a calibration file
// without "kernel_kinds" (or missing a kind) takes.
KernelKindCosts DefaultKernelKindCosts();

struct MachinePeaks {
  double gflops_1 = 8;          // f32 GFLOP/s, one thread
  double gflops_n = 8;          // f32 GFLOP/s, threads_n threads
  double bandwidth_gbs_1 = 4;   // GB/s (1e9 bytes), one thread
  double bandwidth_gbs_n = 4;   // GB/s, threads_n threads
  int threads_n = 1;
  // Roofline overheads: microseconds per kernel launched (dispatch, output allocation) and
  // more per fusion kernel (program lookup, evaluator set-up). Not measured by MeasurePeaks
  // (the cost core does not run the runtime); a calibration file may set them. The defaults
  // are a least-squares fit of measured time over 240 candidates of 10 small corpus modules
  // on a 2-vCPU Xeon guest (0.3-0.4 us per kernel, 0.4-0.8 us more per fusion; chains of 64
  // tiny kernels give 0.1-0.5 and 0.3-0.8).
  double kernel_overhead_us = 0.3;
  double fusion_overhead_us = 0.6;
  // Per-kind kernel costs (`hlox calibrate` measures them in the runtime; the roofline's
  // OverheadRule::kPerKind uses them instead of the two flat overheads above).
  KernelKindCosts kinds = DefaultKernelKindCosts();
  std::string kinds_source = "defaults";  // "defaults" or "measured"
  std::string host, cpu;
  std::string source = "defaults";  // "defaults", "measured" or the file it was loaded from

  // Peaks for `threads` threads: linear between the 1-thread and threads_n figures, flat beyond.
  double GflopsFor(int threads) const;
  double BandwidthGbsFor(int threads) const;
};

// Conservative figures for an unknown machine (source "defaults").
MachinePeaks DefaultPeaks();

// Measures the peaks with `threads` threads for the N-thread figures; each test runs for about
// `seconds_per_test` and keeps the best of several repetitions.
MachinePeaks MeasurePeaks(int threads, double seconds_per_test = 0.3);

// $HLOX_CALIBRATION if set, else $HOME/.cache/hlox/calibration.json.
std::string CalibrationPath();
// The calibration files' I/O (peaks, host-reference quiet times, verdicts): `text` written to a
// temporary file then renamed over `path` (a reader sees the old file or the new one), parent
// folders created; and the JSON object a file holds: NotFound without the file,
// InvalidArgument when it is not a JSON object (`what` names the kind of file in the message).
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);
absl::StatusOr<nlohmann::json> ReadJsonObjectFile(const std::string& path, const std::string& what);
// Writes `peaks` as JSON, creating parent folders.
absl::Status SavePeaks(const MachinePeaks& peaks, const std::string& path);
absl::StatusOr<MachinePeaks> LoadPeaks(const std::string& path);
// LoadPeaks(CalibrationPath()), or DefaultPeaks() when missing or unreadable. Read once per process.
const MachinePeaks& CachedPeaks();

std::string PeaksToJsonString(const MachinePeaks& peaks);

}  // namespace hlox
