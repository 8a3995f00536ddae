// The algebraic simplifier's rule objects. A rule is a small named pair of functions: `match`
// (pure: does the rewrite apply at this instruction, and which inner instructions does it look
// through) and `apply` (builds the replacement in the instruction's computation). Rules are
// grouped in one file per family (rules_<family>.cc); rule_table.cc lists them all in a fixed
// order, which is the order sites are reported in for one instruction.
#pragma once

#include <string_view>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace hlox::simp {

struct SimpRule {
  std::string_view name;  // site rule name, e.g. "add_zero"
  // True when the rule applies at `instr`. `involved` receives the inner instructions the
  // pattern looks through (not the anchor, not plain leaf operands); may be null.
  bool (*match)(const Instruction& instr, std::vector<const Instruction*>* involved);
  // Rewrites: returns the value replacing `instr` (an existing or newly added instruction with
  // instr's dimensions and element type), or nullptr when it cannot. Requires match() true.
  Instruction* (*apply)(Instruction& instr);
  // False for rewrites that can change results beyond rounding (e.g. overflow to inf); they
  // are offered as sites but the default policy keeps them.
  bool exact = true;
};

// Every rule, in table order (rule_table.cc).
const std::vector<SimpRule>& AllRules();

// The families, each defined in its own file.
void AddArithmeticRules(std::vector<SimpRule>* rules);   // rules_arith.cc
void AddLogicRules(std::vector<SimpRule>* rules);        // rules_logic.cc
void AddSelectRules(std::vector<SimpRule>* rules);       // rules_select.cc
void AddShapeRules(std::vector<SimpRule>* rules);        // rules_shape.cc
void AddConvertRules(std::vector<SimpRule>* rules);      // rules_convert.cc
void AddSliceRules(std::vector<SimpRule>* rules);        // rules_slice.cc
void AddConcatRules(std::vector<SimpRule>* rules);       // rules_concat.cc
void AddPadRules(std::vector<SimpRule>* rules);          // rules_pad.cc
void AddDotRules(std::vector<SimpRule>* rules);          // rules_dot.cc
void AddReduceRules(std::vector<SimpRule>* rules);       // rules_reduce.cc
void AddPowerRules(std::vector<SimpRule>* rules);        // rules_power.cc
void AddClampRules(std::vector<SimpRule>* rules);        // rules_clamp.cc

}  // namespace hlox::simp
