// Named pipelines (sequences of passes, fixpoint groups with an iteration cap) and running them
// with per-invocation decisions. Invocation keys are "<pass>#<k>", k counting that pass's runs.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

struct PipelineReport {
  struct Invocation {
    std::string key;          // "simplify#0"
    int64_t sites = 0;
    ApplyReport report;
  };
  std::vector<Invocation> invocations;
};

// One pass run inside a pipeline. `label` names it in invocation keys ("cse" -> "cse#0").
struct PipelineStep {
  std::string label;
  // With no decisions given: false = the pass's default policy, true = choice 1 at every site
  // that has one (e.g. "all-fuse" fuses everything).
  bool apply_all = false;
};
// Steps run in order; with max_iterations > 1 the stage repeats until no step changes the
// module or the cap is reached.
struct PipelineStage {
  std::vector<PipelineStep> steps;
  int max_iterations = 1;
};
struct PipelineSpec {
  std::string name;
  std::vector<PipelineStage> stages;
};

// Names of the built-in pipelines ("none", "default", "fusion-only", ...). Besides these,
// "only:<pass>" runs one pass once (labels from PassLabels()), and "seq:<item>,<item>,..." runs
// a pass sequence once in order, an item being a label or "<label>:all" (choice 1 at every site
// by default, as the pass-order menu's aggressive variants): the pass-order agent's sequences
// as a pipeline a worker can build (PassSequencePipeline in passes/pass_order.h).
std::vector<std::string> PipelineNames();
// The definition of pipeline `name`; InvalidArgument when unknown.
absl::StatusOr<PipelineSpec> GetPipeline(const std::string& name);
// Labels of every pass a pipeline step can name ("inline", "simplify", "cse", ...).
std::vector<std::string> PassLabels();
// What a pass label does, for `hlox passes` and the docs: a one-line description and the rules
// (site kinds) its sites carry. Every label in PassLabels() has one.
struct PassInfo {
  std::string label;
  std::string description;
  std::vector<std::string> site_kinds;
  // True when the sites are {keep, apply} decisions and the default policy keeps some of them:
  // the pass-order menu then also offers "<label>:all" (choice 1 at every site).
  bool all_variant = false;
};
std::vector<PassInfo> PassInfos();
// A fresh pass for `label`; InvalidArgument when unknown.
absl::StatusOr<std::unique_ptr<Pass>> CreatePassByLabel(const std::string& label);

// Runs pipeline `name` on a clone of `module`; invocations named in `decisions` use them,
// the rest their default policy. Unknown pipeline: InvalidArgument. Bad decisions:
// InvalidDecisionsError. Decisions for invocations that never ran are an error too.
absl::StatusOr<std::unique_ptr<Module>> RunPipeline(const Module& module, const std::string& name,
                                                    const PipelineDecisions& decisions,
                                                    PipelineReport* report = nullptr);

// Chooses the decisions of one invocation given its key, the module before it and its sites.
using DecisionPolicy = std::function<DecisionVector(const std::string& key, const Module& module,
                                                    const std::vector<DecisionSite>& sites)>;
// Runs pipeline `name` on a clone of `module`, asking `policy` for every invocation that has
// sites. The decisions used are stored in *used (if given), so RunPipeline(module, name,
// *used) reproduces the result exactly.
absl::StatusOr<std::unique_ptr<Module>> RunPipelineWithPolicy(const Module& module, const std::string& name,
                                                              const DecisionPolicy& policy,
                                                              PipelineDecisions* used = nullptr,
                                                              PipelineReport* report = nullptr);

// The next decision point of a pipeline run: the first invocation that has sites and no entry
// in `decisions`, with the module as it is just before that invocation.
struct DecisionPoint {
  std::string key;
  std::vector<DecisionSite> sites;
  std::unique_ptr<Module> module;
};
// Runs `name` with `decisions` up to the next decision point; nullopt when the run finishes
// without one (every invocation with sites was decided).
absl::StatusOr<std::optional<DecisionPoint>> NextDecisionPoint(const Module& module, const std::string& name,
                                                               const PipelineDecisions& decisions);

// One decision point of a whole pipeline run, as ListDecisionPoints reports it.
struct DecisionPointSites {
  std::string key;                  // invocation key, "fusion#0"
  std::string pass;                 // the step's pass label, "fusion"
  bool decided = false;             // `decisions` named this invocation
  std::vector<DecisionSite> sites;  // in order: a decision vector has one choice per site
};
// Every invocation that has sites in a run of `name` with `decisions`, in run order; undecided
// invocations take the choices the pipeline makes without decisions, so the points after the
// first undecided one (the NextDecisionPoint) are those that run reaches. Errors as RunPipeline
// (InvalidDecisionsError for decisions that do not fit).
absl::StatusOr<std::vector<DecisionPointSites>> ListDecisionPoints(const Module& module,
                                                                   const std::string& name,
                                                                   const PipelineDecisions& decisions);

}  // namespace hlox
