// Internal: what the scratchpad traffic model and its simulator share (scratchpad.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/statusor.h"
#include "cost/kernel_model.h"
#include "cost/loop_nest.h"
#include "cost/scratchpad.h"

namespace hlox::sp {

// The kernel view the model and the simulator share: BuildKernelModel's, with the result of an
// in-place dynamic-update-slice renamed to its operand's tensor (the runtime updates that
// buffer), so the updated tensor keeps the operand's lines, residency and lifetime.
KernelModel ScratchpadKernels(const Computation& computation);

// When each tensor of a computation dies: after the last kernel that reads it (or the one that
// writes it, when none reads it), unless the computation returns it.
struct TensorLifetimes {
  std::unordered_map<TensorId, int64_t, TensorIdHash> last_use;
  std::unordered_set<TensorId, TensorIdHash> outputs;
  bool DeadAfter(const TensorId& t, int64_t kernel) const;
  // The tensors that die after each kernel (indexed by kernel), each listed once.
  std::vector<std::vector<TensorId>> DeathsByKernel(size_t kernels) const;
};
TensorLifetimes Lifetimes(const KernelModel& m);

// ---- Staging groups ----
// Staging (the seed system's "all operators together"): consecutive kernels marked
// "hlox_sp_stage":"join" run as one group, interleaved over a loop they share, a few indices of
// it at a time (PlanStageGroups says when a join is sound and fits). The model moves each tensor
// a group touches once (its lines over the whole group): a step's data fits in half the
// scratchpad, so what the next step reuses is still resident; tensors written and dead inside
// the group never move. Across groups a group is one kernel (it fits when all its tensors do;
// else it streams, leaving its last steps' share). The simulator replays, per group step, each
// member's steps for it and then drops the rows of the group's internal tensors that the step
// finished. A group's traffic is charged to its last member.

// A tensor that the kernels of a staging group touch.
struct StagedTensor {
  TensorId tensor;
  bool written = false;    // a member writes it
  bool internal = false;   // written in the group and dead after it: it never leaves the scratchpad
  int64_t row_bytes = 0;   // internal and laid out in rows of the group loop: bytes per index
  double lines = 0;        // lines over the whole group
  double step_lines = 0;   // lines of one group step (the first)
};

// Consecutive kernels [first, first + count) of a computation's kernel model run as one unit:
// a single kernel (count 1; control flow has no nest), or several interleaved over one shared
// loop, its `tile` indices at a time (each member's nest has that loop outermost with that tile).
struct StageGroup {
  size_t first = 0, count = 1;
  std::vector<LoopNest> nests;
  int64_t extent = 1, tile = 1;
  std::vector<StagedTensor> tensors;  // a group of several: every tensor its members touch
  size_t last() const { return first + count - 1; }
  int64_t Trips() const { return (extent + tile - 1) / tile; }
};

// Groups the kernels of `m`: a kernel marked "hlox_sp_stage":"join" joins the group of the
// kernel before it when every tensor passed between members is laid out in rows of one shared
// loop in both (the writer's and the reader's outermost dimension of more than one index,
// indexed by that loop alone), every member's writes are in such rows or do not depend on the
// loop, no member is control flow or has an opaque access, and one step of the group (the
// largest power-of-two tile of the loop that qualifies, or the whole loop) touches at most half
// the scratchpad; otherwise the kernel starts a group of its own.
std::vector<StageGroup> PlanStageGroups(const KernelModel& m, const TensorLifetimes& life, const ScratchpadTarget& t);
// The tiling a member of a group of several reports: "<its tiling> staged <i>/<members> by
// <tile>/<extent>".
std::string StagedTiling(const StageGroup& g, size_t member);

// Traffic of a control-flow kernel's bodies: a while's called computations times its trip
// count, a conditional's costliest branch, a call's computations; each costed by `body`.
using BodyCost = std::function<absl::StatusOr<TrafficReport>(const Computation&, const ScratchpadTarget&)>;
absl::StatusOr<TrafficReport> ControlFlowTraffic(const Instruction& instr, const ScratchpadTarget& target,
                                                 const BodyCost& body);

// Adds a kernel's traffic to the report, with its time on the target: max(FLOPs / peak,
// traffic / bandwidth).
void AddKernel(TrafficReport& report, const Instruction& instr, KernelTraffic kernel, const ScratchpadTarget& target);
// Adds the write-backs of the computation's results at its end, as the "(end)" entry.
void AddEnd(TrafficReport& report, double write_bytes, const ScratchpadTarget& target);

}  // namespace hlox::sp
