// Pass-ordering actions and episodes.
#include "passes/pass_order.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/module_util.h"
#include "passes/pipeline.h"

namespace hlox {

std::vector<std::string> PassOrderMenu() {
  std::vector<std::string> menu = PassLabels();
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
  std::vector<std::string> menu = PassOrderMenu();
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
    const std::string& item = menu[action];
    constexpr std::string_view kAll = ":all";
    bool all = item.size() > kAll.size() && item.compare(item.size() - kAll.size(), kAll.size(), kAll) == 0;
    std::string label = all ? item.substr(0, item.size() - kAll.size()) : item;
    HLOX_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePassByLabel(label));
    if (all) {
      HLOX_ASSIGN_OR_RETURN(std::vector<DecisionSite> sites, pass->FindSites(*step.module));
      HLOX_RETURN_IF_ERROR(pass->Apply(*step.module, sites, ApplyAllDecisions(sites)).status());
    } else {
      HLOX_RETURN_IF_ERROR(pass->Run(*step.module).status());
    }
  }
  step.op_count = OpCount(*step.module);
  step.reward = static_cast<double>(before - step.op_count);
  return step;
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
