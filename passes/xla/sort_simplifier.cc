// sort-simplifier (XLA's SortSimplifier): a sort of several operands whose results are read only
// through get-tuple-element, some of them never, and whose comparator never looks at those
// operands, sorts only the operands whose results are used: the unused ones were carried along
// for nothing. The comparator is rebuilt without their parameters (a new computation; the old
// one stays for any other caller), and the get-tuple-elements read the new sort (the sort
// itself when one operand remains, since a one-operand sort returns an array).
//   (k, v, w) = sort(keys, vals, idx), to_apply=cmp(k0, k1, v0, v1, w0, w1)  with w unused
//     -> (k, v) = sort(keys, vals), to_apply=cmp'(k0, k1, v0, v1)
// Sites: each such sort, rule `unused_operands`, {keep, apply}; default apply, as XLA.
#include <set>

#include "passes/module_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

// The operands of `sort` that can go (sorted ascending), or empty when none can.
std::vector<int64_t> Removable(const Instruction& sort) {
  const int64_t n = sort.operand_count();
  if (sort.opcode() != Opcode::kSort || n < 2 || !sort.shape().IsTuple() || sort.shape().tuple_size() != n ||
      sort.called_computations().size() != 1 || sort.IsRoot() || HasControlDeps(sort)) {
    return {};
  }
  const Computation* cmp = sort.to_apply();
  if (cmp == nullptr || cmp->parameter_count() != 2 * n) return {};
  std::set<int64_t> used;
  for (const Instruction* u : sort.users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return {};
    used.insert(u->tuple_index());
  }
  std::vector<int64_t> out;
  for (int64_t k = 0; k < n; ++k) {
    if (used.count(k) || cmp->parameter(2 * k)->user_count() > 0 || cmp->parameter(2 * k + 1)->user_count() > 0) {
      continue;
    }
    out.push_back(k);
  }
  if (static_cast<int64_t>(out.size()) == n) return {};  // nothing used: dce's job
  return out;
}

// A copy of comparator `cmp` without the parameters of the operands in `drop`.
Computation* ShrunkComparator(const Computation& cmp, const std::vector<int64_t>& drop, Module& module) {
  Computation* c = module.AddComputation(std::make_unique<Computation>(cmp.name() + "_simplified"));
  std::set<int64_t> dropped(drop.begin(), drop.end());
  std::vector<Instruction*> args;
  Instruction* filler = nullptr;  // stands for dropped parameters, which nothing reads
  int64_t next = 0;
  for (int64_t p = 0; p < cmp.parameter_count(); ++p) {
    const Shape& s = cmp.parameter(p)->shape();
    if (dropped.count(p / 2)) {
      if (filler == nullptr) {
        filler = c->AddInstruction(Instruction::CreateConstant(Literal(Shape(PrimitiveType::kPred, {}))));
      }
      args.push_back(filler);
      continue;
    }
    Instruction* param = c->AddInstruction(Instruction::CreateParameter(next++, s));
    param->set_name(cmp.parameter(p)->name());
    args.push_back(param);
  }
  c->RebuildParameterList();
  c->set_root(InlineComputationBody(cmp, args, *c));
  if (filler != nullptr) c->RemoveInstruction(filler);
  c->SortToPostOrder();
  return c;
}

class SortSimplifier : public Pass {
 public:
  std::string_view name() const override { return "sort-simplifier"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      for (const Instruction* i : comp->PostOrder()) {
        if (!Removable(*i).empty()) sites.push_back(MakeSite("unused_operands", *i));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [&module](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                           InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* sort = instrs[0];
      const std::vector<int64_t> drop = Removable(*sort);
      if (drop.empty()) return SiteOutcome::kStale;
      std::set<int64_t> dropped(drop.begin(), drop.end());
      std::vector<Instruction*> ops;
      std::vector<Shape> shapes;
      std::vector<int64_t> new_index(sort->operand_count(), -1);
      for (int64_t k = 0; k < sort->operand_count(); ++k) {
        if (dropped.count(k)) continue;
        new_index[k] = static_cast<int64_t>(ops.size());
        ops.push_back(sort->operand(k));
        shapes.push_back(sort->shape().tuple_shape(k));
      }
      const Shape shape = ops.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
      std::unique_ptr<Instruction> clone = sort->CloneWithOperands(shape, ops);
      clone->set_name("");
      clone->mutable_called_computations() = {ShrunkComparator(*sort->to_apply(), drop, module)};
      Instruction* smaller = sort->parent()->AddInstruction(std::move(clone));
      std::vector<Instruction*> users = sort->users();
      for (Instruction* gte : users) {
        if (ops.size() == 1) {
          gte->ReplaceAllUsesWith(smaller);
          index.Forget(gte);
          gte->parent()->RemoveInstruction(gte);  // not RemoveDeadChain: that would take the sort too
        } else {
          gte->ReplaceOperand(0, smaller);
          gte->attrs().tuple_index = new_index[gte->tuple_index()];
        }
      }
      RemoveDeadChain(sort, &index);
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateSortSimplifier() { return std::make_unique<SortSimplifier>(); }

}  // namespace hlox
