// Pad folding: a pad that pads nothing is its operand, and pad(pad(x)) with the same padding
// value and no interior padding on the outer pad is a single pad with summed edges.
#include <cmath>

#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox::simp {
namespace {

bool IsPad(const Instruction& i) {
  return i.opcode() == Opcode::kPad && i.operand_count() == 2 && i.shape().IsArray() &&
         static_cast<int64_t>(i.attrs().padding.size()) == i.shape().rank();
}

// pad(x, v, 0_0_0x...) -> x
bool MatchPadNoop(const Instruction& i, std::vector<const Instruction*>*) {
  if (!IsPad(i) || !CanReplaceWith(i, *i.operand(0))) return false;
  for (const PaddingDim& p : i.attrs().padding) {
    if (p.low != 0 || p.high != 0 || p.interior != 0) return false;
  }
  return true;
}
Instruction* ApplyPadNoop(Instruction& i) { return i.operand(0); }

bool SameValue(const Instruction& a, const Instruction& b) {
  if (&a == &b) return true;
  std::optional<double> x = UniformConstant(a), y = UniformConstant(b);
  return x && y && a.shape().element_type() == b.shape().element_type() && *x == *y &&
         std::signbit(*x) == std::signbit(*y);
}

// pad(pad(x, v, l1_h1_i1), v, l2_h2_0) -> pad(x, v, (l1+l2)_(h1+h2)_i1)   (no negative edges)
bool MatchPadPad(const Instruction& i, std::vector<const Instruction*>* inv) {
  if (!IsPad(i) || !IsPad(*i.operand(0))) return false;
  const Instruction& in = *i.operand(0);
  if (in.attrs().padding.size() != i.attrs().padding.size()) return false;
  if (!SameValue(*i.operand(1), *in.operand(1))) return false;
  for (size_t k = 0; k < i.attrs().padding.size(); ++k) {
    const PaddingDim& o = i.attrs().padding[k];
    const PaddingDim& n = in.attrs().padding[k];
    if (o.interior != 0 || o.low < 0 || o.high < 0 || n.low < 0 || n.high < 0) return false;
  }
  if (inv) inv->push_back(&in);
  return true;
}
Instruction* ApplyPadPad(Instruction& i) {
  Instruction& in = *i.operand(0);
  std::vector<PaddingDim> pads = in.attrs().padding;
  for (size_t k = 0; k < pads.size(); ++k) {
    pads[k].low += i.attrs().padding[k].low;
    pads[k].high += i.attrs().padding[k].high;
  }
  Instruction* n = AddNew(i, Opcode::kPad, i.shape(), {in.operand(0), in.operand(1)});
  n->attrs().padding = std::move(pads);
  return n;
}

}  // namespace

void AddPadRules(std::vector<SimpRule>* rules) {
  rules->push_back({"pad_noop", MatchPadNoop, ApplyPadNoop});
  rules->push_back({"pad_pad", MatchPadPad, ApplyPadPad});
}

}  // namespace hlox::simp
