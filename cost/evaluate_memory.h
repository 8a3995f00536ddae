// A job's memory budget: the planned peak of evaluating a module (rt::PlannedPeakBytes of the
// modules it runs, plus the executor's own overhead) and the RESOURCE_EXHAUSTED verdict when
// that exceeds the budget a worker gives each job. The worker checks the unoptimized module
// before it runs anything; EvaluateCandidate checks the rewritten one before it builds its
// executor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/module.h"

namespace hlox {

// Bytes an evaluation holds beyond the planned buffers: executor plans, thread-pool stacks,
// fused-loop scratch, the record. A fixed allowance, measured on the corpus (docs/PROTOCOL.md).
inline constexpr int64_t kExecutorOverheadBytes = int64_t{64} << 20;

// The planned peak of evaluating `candidate` (null: `original` itself) against the reference
// outputs of `original`: the larger of the reference run's plan and the candidate's plan
// plus the reference outputs it is compared with, plus kExecutorOverheadBytes. Saturates.
int64_t PlannedJobBytes(const Module& original, const Module* candidate);

// The default per-job budget on this machine: the memory a job may take without crowding the
// rest of the host. MemAvailable (else MemTotal; the cgroup v2 limit when smaller) less a
// headroom of an eighth of it, at least 512 MiB, and never under 256 MiB. A worker runs one
// job at a time, so the share is the whole of it.
int64_t DefaultJobMemoryBytes();

// "64.0 GiB", "5.6 GiB", "512.0 MiB", "12.0 KiB", "100 B": binary units, one decimal.
std::string FormatBytes(int64_t bytes);

// The refusal when `planned` exceeds `budget` (> 0): "planned peak 64.0 GiB exceeds this
// worker's job budget 5.6 GiB"; nullopt when it fits or there is no budget.
std::optional<std::string> OverBudgetMessage(int64_t planned, int64_t budget);

// The message of a job whose allocation failed under a budget of `budget` bytes (0: none).
std::string OutOfMemoryMessage(int64_t budget);

}  // namespace hlox
