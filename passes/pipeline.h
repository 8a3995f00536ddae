// Named pipelines (sequences of passes, fixpoint groups with an iteration cap) and running them
// with per-invocation decisions. Invocation keys are "<pass>#<k>", k counting that pass's runs.
#pragma once

#include <memory>
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

// Names of the built-in pipelines ("none", "default", "fusion-only", ...).
std::vector<std::string> PipelineNames();
// Runs pipeline `name` on a clone of `module`; invocations named in `decisions` use them,
// the rest their default policy. Unknown pipeline: InvalidArgument. Bad decisions:
// InvalidDecisionsError. Decisions for invocations that never ran are an error too.
absl::StatusOr<std::unique_ptr<Module>> RunPipeline(const Module& module, const std::string& name,
                                                    const PipelineDecisions& decisions,
                                                    PipelineReport* report = nullptr);

}  // namespace hlox
