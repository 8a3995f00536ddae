// broadcast-canonicalizer (XLA's BroadcastCanonicalizer): a broadcast whose dimensions are not
// increasing becomes a transpose of its operand into increasing order, then a broadcast with
// sorted dimensions; later passes and the fused loops then see only order-keeping broadcasts.
#include <algorithm>
#include <numeric>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateBroadcastCanonicalizer() {
  xla::Rule r;
  r.name = "unsorted_broadcast";
  r.match = [](const Instruction& i) {
    const std::vector<int64_t>& d = i.dimensions();
    return i.opcode() == Opcode::kBroadcast && i.operand_count() == 1 && i.shape().IsArray() &&
           i.operand(0)->shape().IsArray() && static_cast<int64_t>(d.size()) == i.operand(0)->shape().rank() &&
           !std::is_sorted(d.begin(), d.end());
  };
  r.apply = [](Instruction& i) {
    const std::vector<int64_t>& d = i.dimensions();
    // perm[k]: the operand dimension that lands on the k-th smallest result dimension.
    std::vector<int64_t> perm(d.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return d[a] < d[b]; });
    Instruction* t = simp::AddTranspose(i, i.operand(0), perm);
    Instruction* b = simp::AddNew(i, Opcode::kBroadcast, i.shape(), {t});
    b->attrs().dimensions = simp::PermutedDims(d, perm);
    return b;
  };
  return xla::MakeRulePass("broadcast-canonicalizer", {r});
}

}  // namespace hlox
