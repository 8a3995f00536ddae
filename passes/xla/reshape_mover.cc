// reshape-mover (XLA's ReshapeMover): an elementwise op whose operands are the same reshape or
// transpose ("rearrange") of equally shaped values, or operands that can take the inverse
// rearrange for free, computes on the un-rearranged values and is rearranged once afterwards:
//   add(transpose(a), transpose(b))        -> transpose(add(a, b))
//   mul(reshape(a), broadcast(scalar))     -> reshape(mul(a, broadcast'(scalar)))
// Sinking rearranges lets them meet and cancel (transpose(transpose(x)), reshape(reshape(x)))
// and takes them off the elementwise chain fusion wants to merge.
//
// Operands that take the inverse rearrange for free, as in XLA: constants (an inverse reshape or
// transpose of the constant is inserted; constant-fold folds it), broadcasts of a scalar, and for
// a transpose, broadcasts whose dimensions keep their order under it; rank-0 operands of an
// elementwise op stay as they are. Left alone: ops whose first rearrange is itself trivial (a
// rearrange of a constant), dynamic shapes, and rng operands (XLA allows a single-use rng;
// hlox's seeded rng fills by shape, so a reshaped rng draws other values).
//
// Sites: every candidate, rule `sink_rearrange`, {keep, apply}. Default as XLA: apply only to the
// candidates left after XLA's fixpoint, which drops every candidate reading a rearrange that
// also feeds a non-candidate (moving it would keep the old rearrange alive next to the new one).
// Layouts: hlox values are logical row-major arrays and only bitcast reads a layout, so the
// rewrite keeps the anchor's shape (layout included) and gives new intermediates the default
// layout.
#include <algorithm>
#include <set>

#include "common/status_macros.h"
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

bool IsRearrange(const Instruction& i) {
  return (i.opcode() == Opcode::kReshape || i.opcode() == Opcode::kTranspose) && i.operand_count() == 1 &&
         IsStaticArray(i.shape()) && IsStaticArray(i.operand(0)->shape());
}

bool IsNopRearrange(const Instruction& r) {
  return r.opcode() == Opcode::kReshape ? r.shape().dims() == r.operand(0)->shape().dims()
                                        : simp::IsIdentityPermutation(r.dimensions());
}

bool Equivalent(const Instruction& a, const Instruction& b) {
  if (a.opcode() != b.opcode() || a.shape().dims() != b.shape().dims()) return false;
  return a.opcode() == Opcode::kTranspose ? a.dimensions() == b.dimensions()
                                          : a.operand(0)->shape().dims() == b.operand(0)->shape().dims();
}

// Where broadcast `dims` (dimensions of a transpose's result) land in the transpose's operand:
// result dimension d is operand dimension perm[d].
std::vector<int64_t> MovedBcastDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(perm[d]);
  return out;
}

// True when `x` can take the inverse of `r` for free.
bool CanTriviallyRearrange(const Instruction& x, const Instruction& r) {
  if (IsNopRearrange(r)) return true;
  if (!IsStaticArray(x.shape())) return false;
  if (x.opcode() == Opcode::kConstant) return x.has_literal();
  if (x.opcode() != Opcode::kBroadcast || x.operand_count() != 1) return false;
  const std::vector<int64_t>& d = x.dimensions();
  if (!std::is_sorted(d.begin(), d.end())) return false;
  if (x.operand(0)->shape().rank() == 0) return true;
  if (r.opcode() != Opcode::kTranspose) return false;
  const std::vector<int64_t> moved = MovedBcastDims(d, r.dimensions());
  return std::is_sorted(moved.begin(), moved.end());
}

// The first operand that is a rearrange of something not trivially rearrangeable, or nullptr.
const Instruction* FirstNontrivialRearrange(const Instruction& e) {
  for (const Instruction* op : e.operands()) {
    if (IsRearrange(*op) && !CanTriviallyRearrange(*op->operand(0), *op)) return op;
  }
  return nullptr;
}

bool IsCandidate(const Instruction& e) {
  if (!e.IsElementwise() || e.operand_count() == 0 || !IsStaticArray(e.shape()) || e.shape().rank() == 0 ||
      IsNondeterministicOrEffectful(e) || HasControlDeps(e)) {
    return false;
  }
  const Instruction* r = FirstNontrivialRearrange(e);
  if (r == nullptr) return false;
  for (const Instruction* op : e.operands()) {
    if (op->shape().IsArray() && op->shape().rank() == 0) continue;  // implicit scalar operand
    if (IsRearrange(*op) ? !Equivalent(*op, *r) : !CanTriviallyRearrange(*op, *r)) return false;
  }
  return true;
}

// `x` shaped for the un-rearranged computation (the inverse of `r` applied to it).
Instruction* InverseRearrange(const Instruction& e, const Instruction& r, Instruction* x) {
  const Shape& in = r.operand(0)->shape();
  const Shape s = simp::ShapeLike(x->shape(), x->shape().element_type(), in.dims());
  if (x->shape().rank() == 0) return x;
  if (IsRearrange(*x) && Equivalent(*x, r)) return x->operand(0);
  if (x->opcode() == Opcode::kBroadcast && x->operand(0)->shape().rank() == 0) {
    Instruction* b = simp::AddNew(e, Opcode::kBroadcast, s, {x->operand(0)});
    b->attrs().dimensions = {};
    return b;
  }
  if (x->opcode() == Opcode::kBroadcast && r.opcode() == Opcode::kTranspose) {
    Instruction* b = simp::AddNew(e, Opcode::kBroadcast, s, {x->operand(0)});
    b->attrs().dimensions = MovedBcastDims(x->dimensions(), r.dimensions());
    return b;
  }
  if (IsNopRearrange(r)) return x;
  // A constant: the inverse rearrange as an instruction, for constant-fold to fold.
  Instruction* inv = simp::AddNew(e, r.opcode(), s, {x});
  if (r.opcode() == Opcode::kTranspose) inv->attrs().dimensions = simp::InversePermutation(r.dimensions());
  return inv;
}

class ReshapeMover : public Pass {
 public:
  std::string_view name() const override { return "reshape-mover"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      std::vector<const Instruction*> order;
      std::set<const Instruction*> candidates;
      for (const Instruction* i : comp->PostOrder()) {
        if (!IsCandidate(*i)) continue;
        order.push_back(i);
        candidates.insert(i);
      }
      // XLA's fixpoint: a rearrange operand with a user outside the set takes all its users out.
      std::set<const Instruction*> kept = candidates;
      for (bool removed = true; removed && !kept.empty();) {
        removed = false;
        std::set<const Instruction*> rearranges;
        for (const Instruction* c : kept) {
          for (const Instruction* op : c->operands()) {
            if (IsRearrange(*op)) rearranges.insert(op);
          }
        }
        for (const Instruction* r : rearranges) {
          const bool outside = std::any_of(r->users().begin(), r->users().end(),
                                           [&](const Instruction* u) { return kept.count(u) == 0; });
          if (!outside) continue;
          for (const Instruction* u : r->users()) removed = kept.erase(u) > 0 || removed;
        }
      }
      for (const Instruction* i : order) {
        sites.push_back(MakeSite("sink_rearrange", *i, {}, {"keep", "apply"}, kept.count(i) ? 1 : 0));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* e = instrs[0];
      if (!IsCandidate(*e)) return SiteOutcome::kStale;
      const Instruction& r = *FirstNontrivialRearrange(*e);
      std::vector<Instruction*> ops;
      for (Instruction* op : e->operands()) ops.push_back(InverseRearrange(*e, r, op));
      const Shape inner =
          simp::ShapeLike(e->shape(), e->shape().element_type(), r.operand(0)->shape().dims());
      std::unique_ptr<Instruction> clone = e->CloneWithOperands(inner, ops);
      clone->set_name("");
      Instruction* moved = e->parent()->AddInstruction(std::move(clone));
      Instruction* out = simp::AddNew(*e, r.opcode(), e->shape(), {moved});
      if (r.opcode() == Opcode::kTranspose) out->attrs().dimensions = r.dimensions();
      HLOX_RETURN_IF_ERROR(ReplaceAnchor(e, out, &index));
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateReshapeMover() { return std::make_unique<ReshapeMover>(); }

}  // namespace hlox
