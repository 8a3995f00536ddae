// dot-merger (XLA's DotMerger): dots that share one operand (say x) and whose other operands
// differ only along their single free dimension become one dot of x with those operands
// concatenated, and each old dot becomes a slice of the result: dot(x, wq), dot(x, wk),
// dot(x, wv) -> slices of dot(x, concat(wq, wk, wv)). One bigger GEMM packs x once and keeps the
// micro-kernels busier than three small ones, at the price of copying the other operands into
// the concatenation (and the slices, unless fusion takes them).
//
// A site is one group: every dot of a computation with the same shared operand on the same side,
// the same dimension numbers and element types, and other operands that agree in every dimension
// but the free one. Dots that depend on another member of the group (through their other
// operand) are left out, so the merged dot never needs its own result. The site lists the
// group's dots (first = anchor) and the shared operand; choices {keep, apply}; the default
// applies when each copied element is reused at least kMinReuse times.
#include <algorithm>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

// The single free dimension of the non-shared operand, or -1 when it has none or several.
int64_t SingleFreeDim(const Instruction& dot, int other_side) {
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  const std::vector<int64_t>& batch = other_side == 0 ? dn.lhs_batch : dn.rhs_batch;
  const std::vector<int64_t>& contr = other_side == 0 ? dn.lhs_contracting : dn.rhs_contracting;
  int64_t free = -1;
  for (int64_t d = 0; d < dot.operand(other_side)->shape().rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) != batch.end()) continue;
    if (std::find(contr.begin(), contr.end(), d) != contr.end()) continue;
    if (free >= 0) return -1;
    free = d;
  }
  return free;
}

bool Mergeable(const Instruction& dot, int shared_side) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2 || !dot.attrs().dot.has_value() ||
      !dot.shape().IsArray() || HasControlDeps(dot)) {
    return false;
  }
  const Shape& other = dot.operand(1 - shared_side)->shape();
  return other.IsArray() && SingleFreeDim(dot, 1 - shared_side) >= 0 &&
         simp::SameLayoutShape(dot.shape(), simp::ShapeLike(dot.shape(), dot.shape().element_type(), dot.shape().dims()));
}

// Whether `b` can be merged into a group led by `a` (same side shared).
bool Compatible(const Instruction& a, const Instruction& b, int shared_side) {
  if (!(*a.attrs().dot == *b.attrs().dot) || a.shape().element_type() != b.shape().element_type()) return false;
  const Shape& oa = a.operand(1 - shared_side)->shape();
  const Shape& ob = b.operand(1 - shared_side)->shape();
  if (oa.element_type() != ob.element_type() || oa.rank() != ob.rank()) return false;
  const int64_t f = SingleFreeDim(a, 1 - shared_side);
  for (int64_t d = 0; d < oa.rank(); ++d) {
    if (d != f && oa.dim(d) != ob.dim(d)) return false;
  }
  return true;
}

// True when `from` (transitively through operands, within its computation) reaches any of
// `targets`.
bool Reaches(const Instruction* from, const std::unordered_set<const Instruction*>& targets) {
  std::vector<const Instruction*> work{from};
  std::unordered_set<const Instruction*> seen;
  while (!work.empty()) {
    const Instruction* i = work.back();
    work.pop_back();
    if (targets.count(i)) return true;
    if (!seen.insert(i).second) continue;
    for (const Instruction* op : i->operands()) work.push_back(op);
  }
  return false;
}

// The groups of mergeable dots sharing `x` on `side`, in post order, each of two or more.
std::vector<std::vector<Instruction*>> Groups(const Instruction& x, int side) {
  std::vector<Instruction*> dots;
  for (Instruction* u : x.users()) {
    if (u->operand_count() == 2 && u->operand(side) == &x && u->operand(1 - side) != &x && Mergeable(*u, side)) {
      dots.push_back(u);
    }
  }
  std::vector<std::vector<Instruction*>> groups;
  std::vector<bool> used(dots.size(), false);
  for (size_t a = 0; a < dots.size(); ++a) {
    if (used[a]) continue;
    std::vector<Instruction*> g = {dots[a]};
    std::unordered_set<const Instruction*> members = {dots[a]};
    for (size_t b = a + 1; b < dots.size(); ++b) {
      if (used[b] || !Compatible(*dots[a], *dots[b], side)) continue;
      // Neither the newcomer's operand may depend on a member, nor a member's on the newcomer.
      if (Reaches(dots[b]->operand(1 - side), members)) continue;
      bool back = false;
      for (Instruction* m : g) back = back || Reaches(m->operand(1 - side), {dots[b]});
      if (back) continue;
      g.push_back(dots[b]);
      members.insert(dots[b]);
      used[b] = true;
    }
    if (g.size() >= 2) groups.push_back(std::move(g));
  }
  return groups;
}

// Free rows of the shared operand (product of its free dims) below which merging is not the
// default: each copied element of the other operands is then used fewer than this many times.
constexpr int64_t kMinReuse = 64;

int64_t SharedFreeExtent(const Instruction& dot, int shared_side) {
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  const std::vector<int64_t>& batch = shared_side == 0 ? dn.lhs_batch : dn.rhs_batch;
  const std::vector<int64_t>& contr = shared_side == 0 ? dn.lhs_contracting : dn.rhs_contracting;
  const Shape& x = dot.operand(shared_side)->shape();
  int64_t extent = 1;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contr.begin(), contr.end(), d) == contr.end()) {
      extent *= x.dim(d);
    }
  }
  return extent;
}

class DotMerger : public Pass {
 public:
  std::string_view name() const override { return "dot-merger"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      for (const Instruction* x : comp->PostOrder()) {
        for (int side = 0; side < 2; ++side) {
          for (const std::vector<Instruction*>& g : Groups(*x, side)) {
            std::vector<const Instruction*> others(g.begin() + 1, g.end());
            others.push_back(x);
            // The concatenation copies every other operand on each run; the merged GEMM reuses
            // each copied element once per free row of x. Like XLA's size limit, merge by
            // default only when that reuse is large (a decode step's m = 1 projections copy
            // as much as they compute).
            const int default_choice = SharedFreeExtent(*g[0], side) >= kMinReuse ? 1 : 0;
            DecisionSite s = MakeSite(side == 0 ? "shared_lhs" : "shared_rhs", *g[0], others, {"keep", "apply"},
                                      default_choice);
            sites.push_back(std::move(s));
          }
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite& site, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      const int side = site.rule == "shared_lhs" ? 0 : 1;
      Instruction* x = instrs.back();
      std::vector<Instruction*> group(instrs.begin(), instrs.end() - 1);
      // Still one group of the current module (earlier sites may have merged or changed some).
      bool found = false;
      for (const std::vector<Instruction*>& g : Groups(*x, side)) found = found || g == group;
      if (!found) return SiteOutcome::kStale;
      const Instruction& first = *group[0];
      const int64_t f = SingleFreeDim(first, 1 - side);
      const Shape& o0 = first.operand(1 - side)->shape();
      std::vector<Instruction*> parts;
      std::vector<int64_t> widths;
      int64_t total = 0;
      for (Instruction* d : group) {
        parts.push_back(d->operand(1 - side));
        widths.push_back(d->operand(1 - side)->shape().dim(f));
        total += widths.back();
      }
      std::vector<int64_t> cdims = o0.dims();
      cdims[f] = total;
      Instruction* cat =
          simp::AddNew(first, Opcode::kConcatenate, simp::ShapeLike(o0, o0.element_type(), cdims), parts);
      cat->attrs().dimensions = {f};
      // The free dimension's place in the result: after the batch dims (lhs free) or last.
      const DotDimensionNumbers& dn = *first.attrs().dot;
      const int64_t out_dim = side == 1 ? static_cast<int64_t>(dn.lhs_batch.size()) : first.shape().rank() - 1;
      std::vector<int64_t> mdims = first.shape().dims();
      mdims[out_dim] = total;
      std::vector<Instruction*> ops = {first.operand(0), first.operand(1)};
      ops[1 - side] = cat;
      std::unique_ptr<Instruction> merged_owner =
          first.CloneWithOperands(simp::ShapeLike(first.shape(), first.shape().element_type(), mdims), ops);
      merged_owner->set_name("");
      Instruction* merged = first.parent()->AddInstruction(std::move(merged_owner));
      int64_t offset = 0;
      for (size_t k = 0; k < group.size(); ++k) {
        Instruction* d = group[k];
        Instruction* slice = simp::AddNew(*d, Opcode::kSlice, d->shape(), {merged});
        for (int64_t dim = 0; dim < d->shape().rank(); ++dim) {
          const bool cut = dim == out_dim;
          slice->attrs().slice.push_back(
              SliceDim{cut ? offset : 0, cut ? offset + widths[k] : d->shape().dim(dim), 1});
        }
        offset += widths[k];
        d->ReplaceAllUsesWith(slice);
        RemoveDeadChain(d, &index);
      }
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDotMerger() { return std::make_unique<DotMerger>(); }

}  // namespace hlox
