// Internal: what the scratchpad traffic model and its simulator share (scratchpad.h).
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/statusor.h"
#include "cost/kernel_model.h"
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
