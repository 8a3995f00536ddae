// The semantics-preservation check behind the corpus property test: run every pass (and the
// default pipeline) with seeded random decision vectors, verify each result, and compare its
// outputs with the original module's on seeded inputs. Executions are the expensive part, so a
// result that prints exactly like the original is not executed (same module, same outputs) and
// results are cached by printed text within one module. Executions run one at a time, each
// freed before the next; a module whose planned peak exceeds the memory budget is not executed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"
#include "runtime/core/executor.h"

namespace hlox::testing {

// "" when `got` equals `want` leaf by leaf under the evaluator's validation rule (CompareLeaf in
// cost/validate.h: dtype tolerances plus a leaf-scaled noise floor); else where they differ.
std::string CompareValues(const rt::Value& want, const rt::Value& got);

// Runs the entry computation of `module` on `inputs` with `threads` workers (rng seed 7).
absl::StatusOr<rt::Value> ExecuteModule(const Module& module, const std::vector<rt::Value>& inputs,
                                        int threads);

struct PropertyOptions {
  int seeds_per_pipeline = 3;
  int threads = 2;
  bool execute = true;  // false: verify and replay only (runtime-limited modules)
  std::vector<std::string> only_pipelines;  // non-empty: run just these (for reproducing a failure)
  // A module whose analytical peak (cost/peak_memory.h) exceeds this is not executed (reported
  // in memory_skips), so a check does not start what cannot fit. 0: MemAvailable when
  // the check starts (after the buffer pool is trimmed); HLOX_PROPERTY_MAX_PEAK_GB overrides.
  int64_t max_planned_bytes = 0;
};

// What one module's check did and found.
struct PropertyResult {
  int pipelines_run = 0;   // (pipeline, seed) pairs
  int unchanged = 0;       // results printing exactly like the original (verified, not executed)
  int executions = 0;      // distinct rewritten modules executed
  int cache_hits = 0;      // results equal to an earlier one, reusing its verdict
  int memory_skips = 0;    // rewritten modules not executed: planned peak over the memory budget
  bool executed = false;   // the reference ran (false: runtime-limited, verify-only)
  std::string runtime_note;  // why the reference did not run
  double reference_seconds = 0, pass_seconds = 0, exec_seconds = 0, total_seconds = 0;
  int64_t peak_rss_bytes = 0;  // the process's peak resident bytes (VmHWM) when the check ended
  std::vector<std::string> failures;  // one line each: "<pipeline> seed <s>: <what>"
};

// Checks `module` under every "only:<label>" pipeline and "default", seeds 1..seeds_per_pipeline.
// Never stops at the first failure: every (pipeline, seed) pair is tried and reported.
PropertyResult CheckModuleProperty(const Module& module, const PropertyOptions& options);

// One summary line for logs: pipelines, unchanged, executions, cache hits, seconds.
std::string FormatPropertyResult(const std::string& name, const PropertyResult& result);

}  // namespace hlox::testing
