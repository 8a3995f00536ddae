// map-inliner (XLA's MapInliner): a map whose computation is one elementwise instruction over
// its parameters (or a parameter, or a constant) becomes that instruction over the map's
// operands, which fusion and the simplifier understand; constants are broadcast to the map's
// shape.
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// The computation's root when the map can be inlined, else nullptr.
const Instruction* InlinableRoot(const Instruction& map) {
  if (map.opcode() != Opcode::kMap || map.called_computations().size() != 1 || !map.shape().IsArray()) {
    return nullptr;
  }
  const Computation* c = map.called_computations()[0];
  const Instruction* root = c->root();
  if (root == nullptr) return nullptr;
  if (root->opcode() == Opcode::kParameter) return root;
  if (root->opcode() == Opcode::kConstant) {
    return root->has_literal() && !root->literal().elided() && root->shape().IsArray() &&
                   root->shape().ElementCount() == 1 ? root : nullptr;
  }
  if (!root->IsElementwise() || !root->called_computations().empty() || !root->control_predecessors().empty()) {
    return nullptr;
  }
  for (const Instruction* op : root->operands()) {
    if (op->opcode() != Opcode::kParameter || op->parameter_number() >= map.operand_count()) return nullptr;
  }
  return root;
}

}  // namespace

std::unique_ptr<Pass> CreateMapInliner() {
  xla::Rule r;
  r.name = "inline_map";
  r.match = [](const Instruction& i) { return InlinableRoot(i) != nullptr; };
  r.apply = [](Instruction& i) -> Instruction* {
    const Instruction* root = InlinableRoot(i);
    if (root->opcode() == Opcode::kParameter) {
      Instruction* op = i.operand(root->parameter_number());
      return op->shape() == i.shape() ? op : nullptr;
    }
    if (root->opcode() == Opcode::kConstant) {
      Instruction* c = i.parent()->AddInstruction(Instruction::CreateConstant(root->literal()));
      return simp::AddNew(i, Opcode::kBroadcast, i.shape(), {c});
    }
    std::vector<Instruction*> ops;
    for (const Instruction* p : root->operands()) ops.push_back(i.operand(p->parameter_number()));
    // The map's result type is its computation's root type, so the clone takes the map's shape.
    std::unique_ptr<Instruction> e = root->CloneWithOperands(i.shape(), ops);
    e->set_name("");
    return i.parent()->AddInstruction(std::move(e));
  };
  return xla::MakeRulePass("map-inliner", {r});
}

}  // namespace hlox
