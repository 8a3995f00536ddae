// Evaluating one candidate: run the pipeline with its decisions, validate the outputs against
// the unoptimized module on seeded inputs, measure it with the timing protocol, and fill a
// ResultRecord. Used by `hlox eval`, the worker and the embedded mode alike.
#pragma once

#include <cstdint>
#include <string>

#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

struct TimingProtocol {
  int warmups = 2;
  int min_samples = 5;
  int max_samples = 50;
  double target_rel_spread = 0.02;  // stop when MAD/median falls under this
  double time_cap_seconds = 2.0;    // stop measuring after this long
  double min_sample_seconds = 1e-3; // batch calls until one sample takes at least this
  std::string ToString() const;
};

struct EvalOptions {
  uint64_t seed = 0;
  int threads = 1;
  bool validate = true;
  bool measure = true;
  TimingProtocol protocol;
  std::string worker_id, hardware_class;
};

// Never fails: every problem becomes a status in the record (INVALID_DECISIONS, RUN_ERROR,
// WRONG_OUTPUT, ...). `original` is the unoptimized module; its reference outputs are cached
// per (module hash, seed).
ResultRecord EvaluateCandidate(const Module& original, const std::string& pipeline,
                               const PipelineDecisions& decisions, const EvalOptions& options);

}  // namespace hlox
