// Running a pipeline: each step builds its pass, finds sites, picks the given decisions for its
// invocation key (or the default policy) and applies them; fixpoint stages repeat until nothing
// changes or the cap. Also stops early at the next undecided decision point for `hlox sites`, or
// lists every decision point of a run for the sites job.
#include "passes/pipeline.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/status_macros.h"

namespace hlox {
namespace {

// Runs `spec` on `module` in place. With `stop` set, returns at the first invocation that has
// sites and no decisions, filling *stop (module left as before that invocation).
// With `policy` set, invocations with sites that `decisions` does not name ask it, and the
// answers are added to *policy_used. With `points` set, every invocation with sites is added.
absl::Status RunSpec(Module& module, const PipelineSpec& spec, const PipelineDecisions& decisions,
                     PipelineReport* report, std::optional<DecisionPoint>* stop,
                     const DecisionPolicy* policy = nullptr, PipelineDecisions* policy_used = nullptr,
                     std::vector<DecisionPointSites>* points = nullptr) {
  std::map<std::string, int> counts;
  std::set<std::string> used;
  for (const PipelineStage& stage : spec.stages) {
    for (int iter = 0; iter < stage.max_iterations; ++iter) {
      bool changed = false;
      for (const PipelineStep& step : stage.steps) {
        std::string key = absl::StrCat(step.label, "#", counts[step.label]++);
        HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePassByLabel(step.label));
        HLOX_ASSIGN_OR_RETURN(std::vector<DecisionSite> sites, pass->FindSites(module));
        auto given = decisions.find(key);
        if (stop != nullptr && given == decisions.end() && !sites.empty()) {
          *stop = DecisionPoint{key, std::move(sites), module.Clone()};
          return absl::OkStatus();
        }
        if (points != nullptr && !sites.empty()) {
          points->push_back({key, step.label, given != decisions.end(), sites});
        }
        DecisionVector d;
        if (given != decisions.end()) {
          d = given->second;
          used.insert(key);
        } else if (policy != nullptr && !sites.empty()) {
          d = (*policy)(key, module, sites);
          if (policy_used) (*policy_used)[key] = d;
        } else {
          d = step.apply_all ? ApplyAllDecisions(sites) : DefaultDecisions(sites);
        }
        absl::StatusOr<ApplyReport> r = pass->Apply(module, sites, d);
        if (!r.ok()) {
          if (IsInvalidDecisions(r.status())) {
            std::string msg(r.status().message());
            constexpr std::string_view kPrefix = "invalid decisions: ";
            if (msg.rfind(kPrefix, 0) == 0) msg = msg.substr(kPrefix.size());
            return InvalidDecisionsError(absl::StrCat(key, ": ", msg));
          }
          return absl::Status(r.status().code(), absl::StrCat(key, ": ", r.status().message()));
        }
        log::passes().debug("{}: {} sites, {} applied, {} stale", key, sites.size(), r->applied,
                            r->stale.size());
        changed |= r->changed();
        if (report) {
          report->invocations.push_back({key, static_cast<int64_t>(sites.size()), *std::move(r)});
        }
      }
      if (!changed) break;
    }
  }
  for (const auto& [key, vec] : decisions) {
    if (!used.count(key)) {
      std::vector<std::string> ran;
      for (const auto& [label, n] : counts) ran.push_back(absl::StrCat(label, "#0..", n - 1));
      return InvalidDecisionsError(absl::StrCat("unknown invocation key '", key, "' (pipeline ", spec.name,
                                                " ran ", absl::StrJoin(ran, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> RunPipeline(const Module& module, const std::string& name,
                                                    const PipelineDecisions& decisions,
                                                    PipelineReport* report) {
  HLOX_ASSIGN_OR_RETURN(PipelineSpec spec, GetPipeline(name));
  std::unique_ptr<Module> out = module.Clone();
  HLOX_RETURN_IF_ERROR(RunSpec(*out, spec, decisions, report, nullptr));
  return out;
}

absl::StatusOr<std::unique_ptr<Module>> RunPipelineWithPolicy(const Module& module, const std::string& name,
                                                              const DecisionPolicy& policy,
                                                              PipelineDecisions* used, PipelineReport* report) {
  HLOX_ASSIGN_OR_RETURN(PipelineSpec spec, GetPipeline(name));
  std::unique_ptr<Module> out = module.Clone();
  PipelineDecisions local;
  HLOX_RETURN_IF_ERROR(RunSpec(*out, spec, {}, report, nullptr, &policy, used ? used : &local));
  return out;
}

absl::StatusOr<std::optional<DecisionPoint>> NextDecisionPoint(const Module& module, const std::string& name,
                                                               const PipelineDecisions& decisions) {
  HLOX_ASSIGN_OR_RETURN(PipelineSpec spec, GetPipeline(name));
  std::unique_ptr<Module> work = module.Clone();
  std::optional<DecisionPoint> point;
  absl::Status s = RunSpec(*work, spec, decisions, nullptr, &point);
  if (!s.ok()) return s;
  return point;
}

absl::StatusOr<std::vector<DecisionPointSites>> ListDecisionPoints(const Module& module,
                                                                   const std::string& name,
                                                                   const PipelineDecisions& decisions) {
  HLOX_ASSIGN_OR_RETURN(PipelineSpec spec, GetPipeline(name));
  std::unique_ptr<Module> work = module.Clone();
  std::vector<DecisionPointSites> points;
  HLOX_RETURN_IF_ERROR(RunSpec(*work, spec, decisions, nullptr, nullptr, nullptr, nullptr, &points));
  return points;
}

}  // namespace hlox
