// A decision-exposing pass made of one or more rewrite rules that each replace a single
// instruction (the site's anchor) by a new value, the shape most of XLA's target-independent
// passes have: every match is a site {keep, apply}; applying it builds the replacement in the
// anchor's computation, redirects the anchor's uses and removes what became dead. The passes in
// this folder are written as tables of such rules (docs/DECISIONS.md, "XLA's passes").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace hlox::xla {

struct Rule {
  std::string name;  // the site's rule
  // True when the rule rewrites `i` (checked again at apply time: a false then is a stale site).
  std::function<bool(const Instruction& i)> match;
  // Builds the replacement of `i` (same shape) in i's computation; nullptr = cannot (stale).
  std::function<Instruction*(Instruction& i)> apply;
  int default_choice = 1;  // 1: apply (XLA's behaviour), 0: keep
};

struct RulePassOptions {
  bool in_fusion_bodies = false;  // also rewrite inside fused computations
};

// A pass named `name` whose sites are every match of `rules` (first matching rule per
// instruction), computations in post order, instructions in post order.
std::unique_ptr<Pass> MakeRulePass(std::string name, std::vector<Rule> rules, RulePassOptions options = {});

}  // namespace hlox::xla
