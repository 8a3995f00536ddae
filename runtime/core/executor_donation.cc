// In-place donation analysis (see core/executor_donation.h).
#include "runtime/core/executor_donation.h"

#include <cstdlib>
#include <cstring>
#include <unordered_set>

#include "ir/computation.h"

namespace hlox::rt {
namespace {

// Same element type and dims: the donor's bytes fit the output exactly, element for element.
bool SameArray(const Shape& a, const Shape& b) {
  return a.IsArray() && b.IsArray() && a.element_type() == b.element_type() && a.dims() == b.dims();
}

}  // namespace

bool ElementwiseToRoot(const Instruction* instr, const Shape& root) {
  std::vector<const Instruction*> stack = {instr};
  std::unordered_set<const Instruction*> seen;
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* u : i->users()) {
      if (!seen.insert(u).second) continue;
      if (!u->IsElementwise() || !u->shape().IsArray() || u->shape().dims() != root.dims()) return false;
      stack.push_back(u);
    }
  }
  return true;
}

std::vector<int> DonatableOperands(const Instruction& instr, KernelFn kernel) {
  std::vector<int> out;
  const Shape& shape = instr.shape();
  if (!shape.IsArray()) return out;
  const Computation* fused = nullptr;
  if (instr.opcode() == Opcode::kFusion) {
    if (instr.called_computations().size() != 1 || instr.called_computations()[0] == nullptr) return out;
    fused = instr.called_computations()[0];
    const Instruction* root = fused->root();
    if (root == nullptr || !SameArray(root->shape(), shape) || root->opcode() == Opcode::kParameter) return out;
  } else if (kernel != &ElementwiseKernel || instr.opcode() == Opcode::kCopy) {
    return out;
  }
  const int n = static_cast<int>(instr.operands().size());
  for (int k = 0; k < n; ++k) {
    if (!SameArray(instr.operand(k)->shape(), shape)) continue;
    if (fused != nullptr) {
      if (k >= fused->parameter_count()) continue;
      const Instruction* param = fused->parameter(k);
      if (param == nullptr || !SameArray(param->shape(), shape) || !ElementwiseToRoot(param, shape)) continue;
    }
    out.push_back(k);
  }
  return out;
}

bool DonationDefault() {
  const char* v = std::getenv("HLOX_NO_DONATE");
  return v == nullptr || std::strcmp(v, "1") != 0;
}

}  // namespace hlox::rt
