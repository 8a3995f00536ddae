// This machine's measured peaks for the roofline model: f32 GFLOP/s from an FMA loop and memory
// bandwidth from a STREAM-style triad, each for 1 thread and for N threads. `hlox calibrate`
// measures and stores them as JSON at $HLOX_CALIBRATION or ~/.cache/hlox/calibration.json; the
// roofline model loads that file, falling back to conservative defaults when it is absent.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlox {

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
// Writes `peaks` as JSON, creating parent folders.
absl::Status SavePeaks(const MachinePeaks& peaks, const std::string& path);
absl::StatusOr<MachinePeaks> LoadPeaks(const std::string& path);
// LoadPeaks(CalibrationPath()), or DefaultPeaks() when missing or unreadable. Read once per process.
const MachinePeaks& CachedPeaks();

std::string PeaksToJsonString(const MachinePeaks& peaks);

}  // namespace hlox
