// What an evaluation is asked to do: the timing protocol (how samples are taken and when
// sampling stops) and the options of one candidate's evaluation. Plain data, in the cost
// library's core, so statistics, verdicts and records name them without the evaluator.
#pragma once

#include <cstdint>
#include <string>

#include "cost/host_reference.h"
#include "cost/scratchpad.h"

namespace hlox {

struct TimingProtocol {
  int warmups = 2;
  int min_samples = 5;
  int max_samples = 100;
  // Stop once the median is known this precisely: its estimated relative standard error,
  // 1.858 * MAD / (median * sqrt(n)) (see MedianRelativeError), falls under this.
  double target_rel_error = 0.004;
  double time_cap_seconds = 2.0;    // stop measuring after this long
  double min_sample_seconds = 1e-3; // batch calls until one sample takes at least this
  // Interference guard (cost/interference.h): a sample whose bracketing probe ran more than
  // this much slower than the fastest probe is left out. Off (0) by default: on the 2-vCPU
  // guests measured so far it did not make repeated medians agree (docs/MEASUREMENTS.md).
  double interference_threshold = 0;
  double interference_cap_factor = 3;  // sampling may exceed the time cap this much for it
  // Scheduler guard (cost/sched_guard.h): a sample during which steal + run-queue wait exceeded
  // this fraction of its duration is left out, under the same rules as the probe guard's. Off
  // (0) by default: it narrowed the spread bench's spread only modestly (docs/MEASUREMENTS.md).
  double sched_threshold = 0;
  bool sched_record = true;  // read the counters at sample boundaries for the record's totals
  // Host-speed reference (cost/host_reference.h) timed at every sample boundary; the record
  // then also holds the normalized cost. kMix weighs the compute reference by this.
  HostReferenceKind host_reference = HostReferenceKind::kNone;
  double reference_compute_weight = 0.5;
  // Paired measurements of modules (MeasurePairedModules): executor instances per side, built
  // in a random order and rotated (cost/paired.h), so the verdict is about the modules and not
  // about where one executor's plan landed. Fewer when the module's constants would not fit.
  int paired_instances = 8;
  std::string ToString() const;
};

struct EvalOptions {
  uint64_t seed = 0;
  int threads = 1;
  bool validate = true;
  bool measure = true;
  TimingProtocol protocol;
  std::string worker_id, hardware_class;
  double tolerance_scale = 1.0;                  // multiplies the validation tolerances
  // The accelerator the scratchpad traffic figure is counted for ($HLOX_SCRATCHPAD_TARGET).
  ScratchpadTarget scratchpad = CachedScratchpadTarget();
  // Per-job memory budget (cost/evaluate_memory.h): a candidate whose planned peak exceeds it
  // ends RESOURCE_EXHAUSTED before anything runs, and an allocation that fails is reported so.
  // 0 = no budget.
  int64_t memory_budget_bytes = 0;
};

}  // namespace hlox
