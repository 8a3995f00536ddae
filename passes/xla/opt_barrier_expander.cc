// opt-barrier-expander (XLA's OptimizationBarrierExpander): opt-barrier(x) -> x. The barrier
// only stops optimizations from moving work across it; hlox's passes do not schedule across
// instructions, so removing it changes no result (it may let later passes rewrite more).
#include "passes/passes.h"
#include "passes/xla/rule_pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateOptBarrierExpander() {
  xla::Rule r;
  r.name = "opt_barrier";
  r.match = [](const Instruction& i) {
    return i.opcode() == Opcode::kOptimizationBarrier && i.operand_count() == 1 &&
           i.operand(0)->shape() == i.shape();
  };
  r.apply = [](Instruction& i) { return i.operand(0); };
  return xla::MakeRulePass("opt-barrier-expander", {r});
}

}  // namespace hlox
