// dot-dimension-sorter (XLA's DotDimensionSorter): a dot whose contracting dimensions are
// listed out of order gets them sorted by the lhs dimension (rhs reordered with them), so the
// kernel sees the canonical order. The contraction is the same set of products; only the
// grouping of a multi-dimensional k-sum can change rounding.
#include <algorithm>
#include <numeric>

#include "passes/passes.h"
#include "passes/xla/rule_pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateDotDimensionSorter() {
  xla::Rule r;
  r.name = "unsorted_contracting";
  r.match = [](const Instruction& i) {
    if (i.opcode() != Opcode::kDot || !i.attrs().dot.has_value()) return false;
    const DotDimensionNumbers& dn = *i.attrs().dot;
    return dn.lhs_contracting.size() == dn.rhs_contracting.size() &&
           !std::is_sorted(dn.lhs_contracting.begin(), dn.lhs_contracting.end());
  };
  r.apply = [](Instruction& i) {
    DotDimensionNumbers dn = *i.attrs().dot;
    std::vector<size_t> order(dn.lhs_contracting.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return dn.lhs_contracting[a] < dn.lhs_contracting[b]; });
    DotDimensionNumbers sorted = dn;
    for (size_t k = 0; k < order.size(); ++k) {
      sorted.lhs_contracting[k] = dn.lhs_contracting[order[k]];
      sorted.rhs_contracting[k] = dn.rhs_contracting[order[k]];
    }
    std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), {i.operand(0), i.operand(1)});
    c->set_name("");
    c->attrs().dot = sorted;
    return i.parent()->AddInstruction(std::move(c));
  };
  return xla::MakeRulePass("dot-dimension-sorter", {r});
}

}  // namespace hlox
