// Pass-ordering actions and episodes.
#include "passes/pass_order.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/printer.h"
#include "passes/module_util.h"
#include "passes/pipeline.h"

namespace hlox {

std::vector<std::string> PassOrderMenu() {
  // Every pass but the scratchpad objective's tiling, which changes nothing the CPU runs (and
  // would shift the menu indices of the ":all" variants in existing decision files).
  std::vector<std::string> menu;
  for (const std::string& label : PassLabels()) {
    if (label != "scratchpad-tiling") menu.push_back(label);
  }
  for (const PassInfo& info : PassInfos()) {
    if (info.all_variant) menu.push_back(info.label + ":all");
  }
  menu.push_back("stop");
  return menu;
}

std::string PassSequencePipeline(const std::vector<std::string>& sequence) {
  std::string out;
  for (const std::string& item : sequence) {
    if (item == "stop") continue;
    out += out.empty() ? "seq:" : ",";
    out += item;
  }
  return out.empty() ? "none" : out;
}

absl::StatusOr<PassOrderStep> PassOrderApply(const Module& module, int action) {
  const std::vector<std::string> menu = PassOrderMenu();
  if (action < 0 || action >= static_cast<int>(menu.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("pass-order action ", action, " out of range [0, ", menu.size(), ")"));
  }
  PassOrderStep step;
  int64_t before = OpCount(module);
  step.module = module.Clone();
  if (menu[action] == "stop") {
    step.done = true;
  } else {
    HLOX_RETURN_IF_ERROR(ApplyPassOrderItem(*step.module, menu[action]).status());
  }
  step.op_count = OpCount(*step.module);
  step.reward = static_cast<double>(before - step.op_count);
  return step;
}

absl::StatusOr<ApplyReport> ApplyPassOrderItem(Module& module, const std::string& item) {
  constexpr std::string_view kAll = ":all";
  const bool all = item.size() > kAll.size() && item.compare(item.size() - kAll.size(), kAll.size(), kAll) == 0;
  const std::string label = all ? item.substr(0, item.size() - kAll.size()) : item;
  HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePassByLabel(label));
  HLOX_ASSIGN_OR_RETURN(std::vector<DecisionSite> sites, pass->FindSites(module));
  return pass->Apply(module, sites, all ? ApplyAllDecisions(sites) : DefaultDecisions(sites));
}

absl::StatusOr<std::vector<std::string>> DefaultPassSequence(const Module& module) {
  HLOX_ASSIGN_OR_RETURN(PipelineSpec spec, GetPipeline("default"));
  std::vector<std::string> seq;
  std::unique_ptr<Module> m = module.Clone();
  for (const PipelineStage& stage : spec.stages) {
    for (int it = 0; it < stage.max_iterations; ++it) {
      bool changed = false;
      for (const PipelineStep& step : stage.steps) {
        std::string item = step.apply_all ? step.label + ":all" : step.label;
        HLOX_ASSIGN_OR_RETURN(ApplyReport report, ApplyPassOrderItem(*m, item));
        changed |= report.changed();
        seq.push_back(std::move(item));
      }
      if (!changed) break;
    }
  }
  return seq;
}

absl::StatusOr<std::vector<std::string>> EssentialPassSequence(const Module& module,
                                                               std::vector<std::string> sequence) {
  auto build = [&module](const std::vector<std::string>& items) -> absl::StatusOr<std::string> {
    std::unique_ptr<Module> m = module.Clone();
    for (const std::string& item : items) {
      if (item != "stop") HLOX_RETURN_IF_ERROR(ApplyPassOrderItem(*m, item).status());
    }
    return PrintModule(*m);
  };
  HLOX_ASSIGN_OR_RETURN(const std::string target, build(sequence));
  for (size_t i = sequence.size(); i-- > 0;) {
    std::vector<std::string> without = sequence;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    absl::StatusOr<std::string> text = build(without);
    if (text.ok() && *text == target) sequence = std::move(without);
  }
  return sequence;
}

PassOrderEnv::PassOrderEnv(const Module& module, int max_steps)
    : original_(module.Clone()), current_(module.Clone()), max_steps_(max_steps) {}

void PassOrderEnv::Reset() {
  current_ = original_->Clone();
  history_.clear();
  done_ = false;
}

absl::StatusOr<PassOrderStep> PassOrderEnv::Step(int action) {
  if (done_) return absl::FailedPreconditionError("pass-order episode is done; call Reset()");
  HLOX_ASSIGN_OR_RETURN(PassOrderStep step, PassOrderApply(*current_, action));
  history_.push_back(action);
  if (static_cast<int>(history_.size()) >= max_steps_) step.done = true;
  done_ = step.done;
  current_ = step.module->Clone();
  return step;
}

int64_t PassOrderEnv::op_count() const { return OpCount(*current_); }

}  // namespace hlox
