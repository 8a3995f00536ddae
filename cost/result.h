// The result record every part of hlox uses for one evaluated candidate: its status, the
// measured cost distribution, analytical costs and provenance. docs/RESULTS.md describes each
// field of its JSON form.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hlox {

enum class JobStatus : uint8_t {
  kOk,
  kWrongOutput,
  kInvalidDecisions,
  kRunError,
  kTimeout,
  kPoison,
  kCancelled,
  kResourceExhausted,  // over the worker's per-job memory budget (planned or at run time)
};
std::string_view JobStatusName(JobStatus s);  // "OK", "WRONG_OUTPUT", ...
std::optional<JobStatus> ParseJobStatus(std::string_view s);

// A measured cost: all samples and their summary, in seconds per call.
struct CostDistribution {
  double median = 0;           // seconds
  double mad = 0;              // median absolute deviation, seconds
  double ci_low = 0, ci_high = 0;  // bootstrap 95% interval of the median
  double mean = 0, min = 0;
  int64_t calls_per_sample = 1;
  std::vector<double> samples; // seconds per call, one entry per undisturbed sample
  int64_t disturbed = 0;       // samples left out by the interference guards
  // Interference the kernel reported during the samples (cost/sched_guard.h), seconds:
  double steal_seconds = 0;    // hypervisor steal charged to the measuring thread
  double run_wait_seconds = 0; // run-queue wait of the process's threads
  double sampled_seconds = 0;  // wall time the samples spanned (boundary to boundary)
  bool unstable = false;       // time cap reached before the spread target
  // Host-speed normalization (cost/host_reference.h), empty `reference` when none ran: each
  // kept sample divided by its host slowdown (nearby reference time / quiet time).
  std::string reference;       // "compute", "memory" or "mix"
  double reference_quiet_compute = 0, reference_quiet_memory = 0;  // quiet times, seconds
  double reference_slowdown = 0;   // median over kept samples of the host slowdown
  double normalized_median = 0, normalized_mad = 0;  // of the normalized samples, seconds
  double normalized_ci_low = 0, normalized_ci_high = 0;  // bootstrap 95% interval
  std::vector<double> reference_compute, reference_memory;  // nearby times per kept sample
};

// Costs computed without running anything.
struct AnalyticalCost {
  int64_t op_count = 0;        // instructions in the entry and called computations (no params/constants)
  double flops = 0;
  double bytes_moved = 0;      // DRAM traffic under the module's fusion
  double roofline_seconds = 0; // max(flops/peak, bytes/bandwidth) summed per kernel
  int64_t scratchpad_bytes = 0;          // scratchpad size of the target the traffic was counted for
  double scratchpad_traffic_bytes = 0;   // DRAM<->scratchpad bytes (cost/scratchpad.h)
  double scratchpad_seconds = 0;         // time on that target: max(compute, traffic / bandwidth) per kernel
  int64_t peak_memory_bytes = 0;
};

struct Provenance {
  std::string host, cpu;       // host name, CPU model name
  std::string isa;             // instruction-set level the kernels ran at (IsaName)
  int cores = 0, threads = 0;
  std::string hlox_version;
  std::string build_id;        // build that measured it (common/build_info.h AnnouncedBuildId)
  std::string worker_id, hardware_class;
  std::string protocol;        // timing protocol parameters, as text
  uint64_t seed = 0;
};

// Where a candidate's outputs first differed from the reference.
struct Mismatch {
  int64_t output = 0;          // leaf index
  int64_t index = 0;           // flat element index
  double expected = 0, actual = 0;
  std::string detail;
};

// The answer of a paired job (a search's verdict measured by a worker): the candidate against a
// baseline in interleaved rounds. cost/paired.h turns it into a PairedResult and back.
struct PairedFigures {
  double ratio = 1;                // median over rounds of candidate/baseline (< 1: faster)
  double ci_low = 1, ci_high = 1;  // 95% interval of that ratio
  bool unstable = false;           // too few rounds kept: no verdict (cost/verdict.h)
  int64_t instance_count = 1;      // executor instances per side
  int64_t calls_per_sample = 1;    // calls per side per round
  int64_t rounds = 0;              // rounds kept
  std::vector<double> ratios;      // one per kept round, in measurement order
  double baseline_median = 0, candidate_median = 0;  // seconds per call
};

struct ResultRecord {
  JobStatus status = JobStatus::kOk;
  std::string message;         // error text for non-OK statuses
  // The module's identity: ModuleHash (cost/module_hash.h) of the ORIGINAL module, its canonical
  // text without metadata, so records of one program join whatever path evaluated it. Empty only
  // when nobody parsed the module (a job that failed before any worker read it).
  std::string module_hash;
  // The fleet's address of the module: proto::TextHash of the exact text a job sent (empty for
  // in-process evaluations). Two texts of one module (other names, metadata) differ here only.
  std::string text_hash;
  std::string pipeline;
  CostDistribution cost;       // empty unless measured
  AnalyticalCost analytical;
  Provenance provenance;
  std::optional<Mismatch> mismatch;
  int64_t instruction_count = 0;  // of the optimized module
  double eval_seconds = 0;     // wall time of the whole evaluation
  // A "sites" job's answer (docs/PROTOCOL.md "Job kinds"): a JSON array of the decision points,
  // ListDecisionPoints as DecisionPointsToJson writes it (passes/). Empty for other jobs.
  std::string sites;
  std::optional<PairedFigures> paired;  // a paired job's measurement (status OK only)
};

}  // namespace hlox
