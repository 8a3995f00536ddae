// Pass-ordering mode, after the XLA pass-ordering gyms: an agent picks the next pass from a
// fixed menu (every pass run once with its default policy; every pass whose default keeps some
// of its {keep, apply} sites also in an aggressive variant "<label>:all" that takes choice 1 at
// every site, so expansions and rewrites that are off by default can be chosen, and XLA's menu
// offers fusion passes of different reach; and "stop"); the reward of a step is the reduction
// in OpCount() (passes/module_util.h) that the pass achieved.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

// The action menu: PassLabels() in order (but scratchpad-tiling, a decision of the scratchpad
// objective only), then "<label>:all" for every PassInfos() entry with
// all_variant, in that order, then "stop" (the last action).
std::vector<std::string> PassOrderMenu();

struct PassOrderStep {
  std::unique_ptr<Module> module;  // the module after the action (a copy; input untouched)
  double reward = 0;               // op_count(before) - op_count(after)
  int64_t op_count = 0;            // of the new module
  bool done = false;               // true after "stop"
};

// The "seq:" pipeline (passes/pipeline.h) that runs menu items `sequence` in order ("stop"
// items are left out; an empty sequence is "none"). RunPipeline of it gives the module that
// PassOrderApply of the same items gives.
std::string PassSequencePipeline(const std::vector<std::string>& sequence);

// Applies menu action `action` to a copy of `module`. Out-of-range actions: InvalidArgument.
absl::StatusOr<PassOrderStep> PassOrderApply(const Module& module, int action);

// Runs menu item `item` ("<label>", or "<label>:all": choice 1 at every site; not "stop") on
// `module` in place. Unknown items: InvalidArgument.
absl::StatusOr<ApplyReport> ApplyPassOrderItem(Module& module, const std::string& item);

// The default pipeline written as menu items: each fixpoint stage repeated until an iteration
// changes nothing (at most its cap), as the pipeline itself runs it, so applying the items in
// order gives exactly the default pipeline's module.
absl::StatusOr<std::vector<std::string>> DefaultPassSequence(const Module& module);

// A stateful episode over one module, with an optional step cap (done when reached).
// `sequence` (menu items) without the items that do not matter: each item, last to first, is
// dropped when the sequence without it still builds the same printed module. The result builds
// exactly what `sequence` builds; searches report it so that an order is readable.
absl::StatusOr<std::vector<std::string>> EssentialPassSequence(const Module& module,
                                                               std::vector<std::string> sequence);

// Pass ordering as decision sites: the one pass of the "order" pipeline (label "pass-order",
// passes/pass_order_slots.cc). Its sites are the slots of a pass sequence: the default
// sequence's items, each preceded by a free slot, and a free slot at the end (2n+1 for n
// items). A slot's choices are "skip" (choice 0) and every menu item but "stop"; an item slot
// defaults to its item, a free slot to "skip", so the default vector runs exactly the default
// pipeline. Any agent that searches decision vectors then searches orders: deleting, replacing
// and inserting passes anywhere, measured by the fleet like any other candidate.
std::unique_ptr<Pass> CreatePassOrderSlots();

class PassOrderEnv {
 public:
  explicit PassOrderEnv(const Module& module, int max_steps = 64);
  // Restarts from the original module.
  void Reset();
  // Takes one action; the episode's module advances. After done, every step is an error.
  absl::StatusOr<PassOrderStep> Step(int action);
  const Module& module() const { return *current_; }
  int64_t op_count() const;
  const std::vector<int>& history() const { return history_; }
  bool done() const { return done_; }

 private:
  std::unique_ptr<Module> original_, current_;
  int max_steps_;
  std::vector<int> history_;
  bool done_ = false;
};

}  // namespace hlox
