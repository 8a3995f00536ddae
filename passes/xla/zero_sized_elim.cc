// zero-sized-elim (XLA's ZeroSizedHloElimination): an instruction whose array result has no
// elements computes nothing; it becomes an empty constant, and whatever fed only it goes dead.
// Never parameters, constants, side effects, random numbers or computations with control flow
// inside fusions.
#include "passes/passes.h"
#include "passes/site_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateZeroSizedElimination() {
  xla::Rule r;
  r.name = "zero_sized";
  r.match = [](const Instruction& i) {
    return i.shape().IsArray() && i.shape().ElementCount() == 0 && i.opcode() != Opcode::kParameter &&
           i.opcode() != Opcode::kConstant && !IsNondeterministicOrEffectful(i);
  };
  r.apply = [](Instruction& i) {
    return i.parent()->AddInstruction(Instruction::CreateConstant(Literal(i.shape())));
  };
  return xla::MakeRulePass("zero-sized-elim", {r});
}

}  // namespace hlox
