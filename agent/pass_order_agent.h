// Pass ordering, the XLA pass-ordering gym's task: choose the next pass from a menu until
// "stop". A REINFORCE agent with a per-step softmax policy (one logit per step position and
// action) and a moving-average baseline learns sequences that shrink the op count; the best
// sequence seen is kept. Started from the default (the usual case), the first episode replays
// the default pipeline as a pass sequence and the policy starts biased towards it, so the
// agent explores around the default order instead of from scratch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass_order.h"  // DefaultPassSequence

namespace hlox {

struct PassOrderOptions {
  int episodes = 100;            // the evaluation budget: one episode = one evaluated sequence
  int max_steps = 12;
  double learning_rate = 0.5;
  uint64_t seed = 0;
  bool start_default = true;     // seed the policy with the default pass sequence
  double default_bias = 2.0;     // logit added to the default sequence's action per step
};

struct PassOrderResult {
  std::vector<std::string> best_sequence;
  int64_t initial_ops = 0;       // the unoptimized module
  int64_t best_ops = 0;          // after the best sequence
  int64_t default_ops = 0;       // after the default pipeline (the baseline to beat)
  std::vector<int64_t> best_so_far;  // best op count after each episode
  std::vector<std::string> default_sequence;  // the default pipeline as menu actions
};

// Runs the agent on `module`. Errors come from the passes (a pass failing on the module).
absl::StatusOr<PassOrderResult> SearchPassOrder(const Module& module, const PassOrderOptions& options);

}  // namespace hlox
