// Constant folding as decisions: one site per instruction whose operands are all (non-elided)
// constants and whose result has at most `max_elements` elements. Choice 1 evaluates the
// instruction with hlox's own runtime on a one-instruction module and replaces it by a
// constant, so folded values are bit-identical to what execution would produce. Never folded:
// random or side-effecting ops, custom calls, control flow, fusions, broadcasts and iotas
// (they only make constants bigger), tuple or token results.
#include "passes/module_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

bool Foldable(const Instruction& i, int64_t max_elements) {
  switch (i.opcode()) {
    case Opcode::kConstant:
    case Opcode::kParameter:
    case Opcode::kIota:
    case Opcode::kBroadcast:
    case Opcode::kCustomCall:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kFusion:
    case Opcode::kTuple:
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      return false;
    default:
      break;
  }
  if (i.operand_count() == 0 || !i.shape().IsArray() || i.shape().ElementCount() > max_elements) return false;
  if (IsNondeterministicOrEffectful(i) || !i.control_predecessors().empty()) return false;
  for (const Instruction* op : i.operands()) {
    if (op->opcode() != Opcode::kConstant || !op->has_literal() || op->literal().elided()) return false;
    if (!op->shape().IsArray()) return false;
  }
  return true;
}

// Evaluates `i` on its constant operands with the runtime.
absl::StatusOr<Literal> Evaluate(const Instruction& i) {
  Module tiny("fold");
  ComputationMap map;
  for (const Computation* c : i.called_computations()) CopyComputationInto(*c, tiny, map);
  auto entry = std::make_unique<Computation>("fold_entry");
  Computation* e = tiny.AddComputation(std::move(entry));
  std::vector<Instruction*> ops;
  for (const Instruction* op : i.operands()) {
    ops.push_back(e->AddInstruction(Instruction::CreateConstant(op->literal())));
  }
  std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
  for (Computation*& callee : c->mutable_called_computations()) callee = map.at(callee);
  c->set_name("");
  Instruction* root = e->AddInstruction(std::move(c));
  e->set_root(root);
  tiny.set_entry(e);
  rt::ExecOptions options;
  options.threads = 1;
  auto exec = rt::Executor::Create(tiny, options);
  if (!exec.ok()) return exec.status();
  auto value = (*exec)->Run({});
  if (!value.ok()) return value.status();
  return rt::LiteralFromValue(*value, i.shape());
}

class ConstantFoldingPass : public Pass {
 public:
  explicit ConstantFoldingPass(int64_t max_elements) : max_elements_(max_elements) {}
  std::string_view name() const override { return "constant-fold"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      for (const Instruction* i : comp->PostOrder()) {
        if (Foldable(*i, max_elements_)) sites.push_back(MakeSite("fold", *i));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    int64_t max_elements = max_elements_;
    auto apply = [max_elements](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                                InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* i = instrs[0];
      if (!Foldable(*i, max_elements)) return SiteOutcome::kStale;
      absl::StatusOr<Literal> lit = Evaluate(*i);
      // An op the runtime cannot evaluate is simply not folded (reported as stale).
      if (!lit.ok()) return SiteOutcome::kStale;
      std::unique_ptr<Instruction> c = Instruction::CreateConstant(*std::move(lit));
      c->set_shape(i->shape());  // keep the layout
      c->set_name(i->parent()->parent()->UniqueName("constant"));
      Instruction* k = i->parent()->AddInstruction(std::move(c));
      index.Add(k);
      i->ReplaceAllUsesWith(k);
      RemoveDeadChain(i, &index);
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }

 private:
  int64_t max_elements_;
};

}  // namespace

std::unique_ptr<Pass> CreateConstantFolding(int64_t max_elements) {
  return std::make_unique<ConstantFoldingPass>(max_elements);
}

}  // namespace hlox
