// The simplifier's rule table: every family's rules in one fixed order. The order decides the
// order of sites on one instruction, so it is part of the site-id contract.
#include "passes/simplify/rule.h"

namespace hlox::simp {

const std::vector<SimpRule>& AllRules() {
  static const std::vector<SimpRule>* rules = [] {
    auto* r = new std::vector<SimpRule>();
    AddArithmeticRules(r);
    AddLogicRules(r);
    AddSelectRules(r);
    AddShapeRules(r);
    AddConvertRules(r);
    AddSliceRules(r);
    AddConcatRules(r);
    AddPadRules(r);
    AddDotRules(r);
    AddReduceRules(r);
    AddPowerRules(r);
    AddClampRules(r);
    return r;
  }();
  return *rules;
}

}  // namespace hlox::simp
