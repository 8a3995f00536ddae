// slice-sinker (XLA's SliceSinker): elementwise ops of one kind that each read the same slice of
// the same sources become one op over the whole sources, and each old op becomes a slice of it:
//   add(slice(a, s1), slice(b, s1)), add(slice(a, s2), slice(b, s2))
//     -> slice(add(a, b), s1), slice(add(a, b), s2)
// One big op replaces many small ones (one loop, one kernel launch), and the slices can fuse
// into their consumers or cancel against a later concatenate.
//
// A site is one group: starting from an elementwise op whose operands are slices with one slice
// configuration of equally shaped sources, every other op of the same opcode, attributes and
// result type over slices (again one configuration per op) of the same sources, found through
// the first source's slices. The site lists the group (first = anchor). Choices {keep, apply};
// the default is XLA's: apply when the ops together cover at least as many elements as a source
// has, so the op over the whole sources does no more work than the group did.
// Left alone: dynamic shapes, rank-0 results, effectful or random ops.
// Layouts: hlox values are logical row-major arrays and only bitcast reads a layout, so the
// rewrite keeps the anchor's shape (layout included) and gives new intermediates the default
// layout.
#include <set>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

bool IsPlainSlice(const Instruction& s) {
  return s.opcode() == Opcode::kSlice && s.operand_count() == 1 && IsStaticArray(s.shape()) &&
         IsStaticArray(s.operand(0)->shape());
}

// True when `e` is an elementwise op over slices with one configuration of same-dims sources.
bool OnSlices(const Instruction& e) {
  if (!e.IsElementwise() || e.operand_count() == 0 || !IsStaticArray(e.shape()) || e.shape().rank() == 0 ||
      IsNondeterministicOrEffectful(e) || HasControlDeps(e) || !e.called_computations().empty()) {
    return false;
  }
  const Instruction& s0 = *e.operand(0);
  if (!IsPlainSlice(s0)) return false;
  for (const Instruction* op : e.operands()) {
    if (!IsPlainSlice(*op) || op->attrs().slice != s0.attrs().slice ||
        op->operand(0)->shape().dims() != s0.operand(0)->shape().dims()) {
      return false;
    }
  }
  return true;
}

// True when `u` computes what `e` computes, on other slices of the same sources.
bool SimilarOnSlices(const Instruction& e, const Instruction& u) {
  if (&u == &e || u.opcode() != e.opcode() || u.operand_count() != e.operand_count() || !OnSlices(u) ||
      u.shape().element_type() != e.shape().element_type() || u.attrs().comparison != e.attrs().comparison ||
      u.attrs().comparison_type != e.attrs().comparison_type ||
      u.attrs().exponent_bits != e.attrs().exponent_bits || u.attrs().mantissa_bits != e.attrs().mantissa_bits) {
    return false;
  }
  for (int64_t k = 0; k < e.operand_count(); ++k) {
    if (u.operand(k)->operand(0) != e.operand(k)->operand(0)) return false;
  }
  return true;
}

// The group led by `e`: e, then the similar ops reached through the first source's slices.
std::vector<Instruction*> Group(Instruction& e) {
  std::vector<Instruction*> group = {&e};
  std::set<const Instruction*> seen = {&e};
  for (Instruction* s : e.operand(0)->operand(0)->users()) {
    if (!IsPlainSlice(*s)) continue;
    for (Instruction* u : s->users()) {
      if (seen.count(u) || !SimilarOnSlices(e, *u)) continue;
      seen.insert(u);
      group.push_back(u);
    }
  }
  return group;
}

// XLA's profitability test: the group's results cover at least a source's element count.
bool Covers(const std::vector<Instruction*>& group) {
  int64_t sliced = 0;
  for (const Instruction* u : group) sliced += u->shape().ElementCount();
  return sliced >= group[0]->operand(0)->operand(0)->shape().ElementCount();
}

class SliceSinker : public Pass {
 public:
  std::string_view name() const override { return "slice-sinker"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      std::set<const Instruction*> grouped;
      for (Instruction* e : comp->PostOrder()) {
        if (grouped.count(e) || !OnSlices(*e)) continue;
        std::vector<Instruction*> g = Group(*e);
        if (g.size() < 2) continue;
        grouped.insert(g.begin(), g.end());
        std::vector<const Instruction*> others(g.begin() + 1, g.end());
        sites.push_back(MakeSite("sink_slices", *e, others, {"keep", "apply"}, Covers(g) ? 1 : 0));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction& e = *instrs[0];
      if (!OnSlices(e) || Group(e) != instrs) return SiteOutcome::kStale;
      std::vector<Instruction*> sources;
      for (Instruction* op : e.operands()) sources.push_back(op->operand(0));
      const Shape whole = simp::ShapeLike(e.shape(), e.shape().element_type(), sources[0]->shape().dims());
      std::unique_ptr<Instruction> clone = e.CloneWithOperands(whole, sources);
      clone->set_name("");
      Instruction* full = e.parent()->AddInstruction(std::move(clone));
      for (Instruction* u : instrs) {
        Instruction* slice = simp::AddNew(*u, Opcode::kSlice, u->shape(), {full});
        slice->attrs().slice = u->operand(0)->attrs().slice;
        u->ReplaceAllUsesWith(slice);
        RemoveDeadChain(u, &index);
      }
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateSliceSinker() { return std::make_unique<SliceSinker>(); }

}  // namespace hlox
