// Evaluating one candidate: run the pipeline with its decisions, validate the outputs against
// the unoptimized module on seeded inputs, measure it with the timing protocol, and fill a
// ResultRecord. Used by `hlox eval`, the worker and the embedded mode alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "cost/eval_options.h"
#include "cost/result.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

// Never fails: every problem becomes a status in the record (INVALID_DECISIONS, RUN_ERROR,
// WRONG_OUTPUT, ...). `original` is the unoptimized module; its reference outputs are cached
// per (module hash, seed).
ResultRecord EvaluateCandidate(const Module& original, const std::string& pipeline,
                               const PipelineDecisions& decisions, const EvalOptions& options);

// The same for a module rewritten outside hlox's pipelines (`hlox eval --candidate`: XLA's
// optimized dump of the same program, a hand-written rewrite): verify, validate against
// `original`, measure, analyse. The record's pipeline is left empty for the caller to fill.
ResultRecord EvaluateOptimized(const Module& original, const Module& optimized,
                               const EvalOptions& options);

struct PairedResult;  // cost/paired.h
// Paired measurement of two modules with the same entry signature (e.g. the default pipeline's
// output and a search's best) on the same seeded inputs: ratio candidate/baseline with its
// interval (cost/paired.h), over options.protocol.paired_instances executor instances per side.
// `after_candidate`, when given, runs after every candidate call, timed with it (the verdict
// calibration's planted work). Build or run errors are returned; no validation is done here.
absl::StatusOr<PairedResult> MeasurePairedModules(const Module& baseline, const Module& candidate,
                                                  const EvalOptions& options,
                                                  const std::function<void()>& after_candidate = {});

// A paired job (a search's verdict measured where the search's jobs run): the candidate
// (`pipeline`, `decisions`) is built and validated against `original` as EvaluateCandidate does
// (not measured alone), the baseline (`baseline_pipeline`, `baseline_decisions`) built, and the
// two measured with MeasurePairedModules under options.protocol and options.seed. Never fails:
// INVALID_DECISIONS, WRONG_OUTPUT or RUN_ERROR (a baseline problem says "baseline: ...") in the
// record; OK records carry `paired`.
ResultRecord EvaluatePairedCandidate(const Module& original, const std::string& pipeline,
                                     const PipelineDecisions& decisions,
                                     const std::string& baseline_pipeline,
                                     const PipelineDecisions& baseline_decisions,
                                     const EvalOptions& options);

}  // namespace hlox
