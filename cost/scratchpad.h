// DRAM<->scratchpad traffic of a computation on an accelerator with a software-managed
// scratchpad (the memory-access minimisation setting), from the kernels' tiled loop nests
// (cost/loop_nest.h), two ways that must agree:
//
// The analytical model (ScratchpadTraffic), per kernel, for a scratchpad of S bytes moved in
// lines of L bytes, walking the loops from the outermost (NestWalk in scratchpad.cc):
// - an access's data comes back across the iterations of a loop when the bytes touched between
//   two uses fit in S: one iteration of the loop when the access depends on a loop inside it,
//   else one tile step (it is then touched on every step). When it comes back, the access moves
//   its distinct lines over the loop's whole range (neighbouring tiles' shared lines and
//   convolution halos included); when not, the sum over the loop's iterations, full tiles and
//   the edge tile each with its own shape and the data recomputed inside;
// - lines are counted in closed form (loop_nest.h ApproxBoxLines), tile offsets within a line
//   included;
// - results: every visit ends in a write-back and every visit after the first reads the
//   partial results back; the first write of a line needs no read;
// - across kernels, whole tensors in least-recently-used order: a kernel whose data fits leaves
//   its tensors resident (the resident set kept within S, least recently used out first, dirty
//   ones written back); one that streams leaves its last steps' share of each (by the tensors'
//   shares of one step's data) and pushes out everything else; resident inputs are found only
//   by a kernel that fits (a streaming one walks its inputs from the start and LRU pushes the
//   producer's resident tail out first); tensors dead after a kernel are dropped without a
//   write-back; an in-place dynamic-update-slice keeps its operand's lines; the computation's
//   results end in DRAM; parameters and constants start there; control flow writes back what it
//   reads and costs its bodies (cold, times the trip count); its results are in DRAM.
//
// The simulator (SimulateScratchpadTraffic) replays the same nests step by step, every line
// each step touches, on a fully associative least-recently-used scratchpad of S / L lines with
// dirty bits, under the same rules at kernel and computation boundaries. The model has to
// match it (tests/cost/scratchpad_test.cc, `hlox scratchpad --simulate`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hlox {

// The accelerator the traffic is counted for: a small JSON file users can edit (targets/
// scratchpad/*.json: {"name", "scratchpad_bytes", "line_bytes", "dram_gbs", "tflops"}).
struct ScratchpadTarget {
  std::string name = "inferentia2-core";
  int64_t scratchpad_bytes = int64_t{24} << 20;  // on-chip SRAM
  int64_t line_bytes = 512;                      // transfer granularity
  double dram_gbs = 410;                         // DRAM bandwidth, GB/s (1e9 bytes)
  double tflops = 95;                            // multiply-add throughput, TFLOP/s
  std::string ToString() const;
};
// The built-in target (targets/scratchpad/inferentia2-core.json holds the same figures).
ScratchpadTarget DefaultScratchpadTarget();
absl::StatusOr<ScratchpadTarget> LoadScratchpadTarget(const std::string& path);
// $HLOX_SCRATCHPAD_TARGET when set (a file), else the built-in target; the file is read again
// only when the variable changes. An unreadable file is reported on stderr and the built-in
// target used.
ScratchpadTarget CachedScratchpadTarget();

struct KernelTraffic {
  std::string name;       // the kernel's instruction
  std::string tiling;     // its nest's tiling
  std::string tiles;      // its nest's loops (loop_nest.h DescribeTiles)
  double read_bytes = 0;  // DRAM -> scratchpad
  double write_bytes = 0; // scratchpad -> DRAM
  double Total() const { return read_bytes + write_bytes; }
};

struct TrafficReport {
  double read_bytes = 0, write_bytes = 0;
  double flops = 0;
  std::vector<KernelTraffic> kernels;  // the entry's kernels in schedule order; control flow
                                       // and the computation's boundary (write-backs at the end,
                                       // evictions between kernels) are charged to kernels too
  double Total() const { return read_bytes + write_bytes; }
  // Time on the target: max(compute, traffic / bandwidth) per kernel, summed.
  double seconds = 0;
};

// The analytical model of `computation` on `target`.
TrafficReport ScratchpadTraffic(const Computation& computation, const ScratchpadTarget& target);
// The simulator; stops with ResourceExhausted once it has replayed more than `max_touches`
// line touches (large modules take long).
absl::StatusOr<TrafficReport> SimulateScratchpadTraffic(const Computation& computation,
                                                        const ScratchpadTarget& target,
                                                        int64_t max_touches = int64_t{2} << 30);

}  // namespace hlox
