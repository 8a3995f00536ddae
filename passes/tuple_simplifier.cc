// Tuple simplification as decisions. Two rules:
//   gte_of_tuple:  get-tuple-element(tuple(a0..an), i) -> ai
//   tuple_of_gtes: tuple(gte(t,0), ..., gte(t,n-1)) -> t   (t has exactly n elements, same shape)
// Each site replaces its anchor's uses; the dead anchor (and what only it used) is removed.
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

bool GteOfTuple(const Instruction& i) {
  if (i.opcode() != Opcode::kGetTupleElement || i.operand_count() != 1) return false;
  const Instruction* t = i.operand(0);
  return t->opcode() == Opcode::kTuple && i.tuple_index() >= 0 && i.tuple_index() < t->operand_count() &&
         t->operand(i.tuple_index())->shape().Compatible(i.shape());
}

// The tuple `i` rebuilds, or nullptr.
const Instruction* TupleOfGtesSource(const Instruction& i) {
  if (i.opcode() != Opcode::kTuple || i.operand_count() == 0) return nullptr;
  const Instruction* src = nullptr;
  for (int64_t k = 0; k < i.operand_count(); ++k) {
    const Instruction* g = i.operand(k);
    if (g->opcode() != Opcode::kGetTupleElement || g->tuple_index() != k) return nullptr;
    if (src == nullptr) src = g->operand(0);
    if (g->operand(0) != src) return nullptr;
  }
  if (!src->shape().IsTuple() || src->shape().tuple_size() != i.operand_count()) return nullptr;
  if (!src->shape().Compatible(i.shape())) return nullptr;
  return src;
}

class TupleSimplifierPass : public Pass {
 public:
  std::string_view name() const override { return "tuple-simplify"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      for (const Instruction* i : comp->PostOrder()) {
        if (GteOfTuple(*i)) {
          sites.push_back(MakeSite("gte_of_tuple", *i, {i->operand(0)}));
        } else if (const Instruction* src = TupleOfGtesSource(*i)) {
          sites.push_back(MakeSite("tuple_of_gtes", *i, {src}));
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [](const DecisionSite& site, int, const std::vector<Instruction*>& instrs,
                    InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* anchor = instrs[0];
      Instruction* replacement = nullptr;
      if (site.rule == "gte_of_tuple") {
        if (!GteOfTuple(*anchor) || anchor->operand(0) != instrs[1]) return SiteOutcome::kStale;
        replacement = anchor->operand(0)->operand(anchor->tuple_index());
      } else {
        if (TupleOfGtesSource(*anchor) != instrs[1]) return SiteOutcome::kStale;
        replacement = instrs[1];
      }
      // A root whose layout differs would change the computation's signature; keep it.
      if (anchor->IsRoot() && replacement->shape() != anchor->shape()) return SiteOutcome::kStale;
      anchor->ReplaceAllUsesWith(replacement);
      RemoveDeadChain(anchor, &index);
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTupleSimplifier() { return std::make_unique<TupleSimplifierPass>(); }

}  // namespace hlox
