// dynamic-index-splitter (XLA's DynamicIndexSplitter): a dynamic-slice or dynamic-update-slice
// whose start indices come as one vector operand (the old form, s32[rank]) gets one scalar
// operand per dimension, each sliced out of the vector and reshaped to a scalar:
//   dynamic-slice(x, v: s32[2])  ->  dynamic-slice(x, reshape(slice(v, [0:1])), reshape(slice(v, [1:2])))
// the form the rest of the pipeline (and XLA's backends) read. Semantics, clamping included, are
// unchanged. A rank-0 operand has no indices and is left alone. The default applies, as XLA does.
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// Position of the single vector index operand, or -1 when the instruction has scalar indices.
int64_t VectorIndexOperand(const Instruction& i) {
  int64_t first = 0;
  if (i.opcode() == Opcode::kDynamicSlice) {
    first = 1;
  } else if (i.opcode() == Opcode::kDynamicUpdateSlice) {
    first = 2;
  } else {
    return -1;
  }
  if (i.operand_count() != first + 1 || !i.shape().IsArray()) return -1;
  const Shape& x = i.operand(0)->shape();
  const Shape& v = i.operand(first)->shape();
  if (!x.IsArray() || x.rank() == 0 || !v.IsArray() || v.rank() != 1 || v.dim(0) != x.rank() ||
      !IsInteger(v.element_type())) {
    return -1;
  }
  return first;
}

}  // namespace

std::unique_ptr<Pass> CreateDynamicIndexSplitter() {
  xla::Rule r;
  r.name = "vector_index";
  r.match = [](const Instruction& i) { return VectorIndexOperand(i) >= 0; };
  r.apply = [](Instruction& i) {
    const int64_t first = VectorIndexOperand(i);
    Instruction* v = i.operand(first);
    const PrimitiveType t = v->shape().element_type();
    std::vector<Instruction*> ops(i.operands().begin(), i.operands().begin() + first);
    for (int64_t d = 0; d < v->shape().dim(0); ++d) {
      Instruction* s = simp::AddNew(i, Opcode::kSlice, simp::ShapeLike(v->shape(), t, {1}), {v});
      s->attrs().slice = {SliceDim{d, d + 1, 1}};
      ops.push_back(simp::AddNew(i, Opcode::kReshape, simp::ShapeLike(v->shape(), t, {}), {s}));
    }
    std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
    c->set_name("");
    return i.parent()->AddInstruction(std::move(c));
  };
  return xla::MakeRulePass("dynamic-index-splitter", {r});
}

}  // namespace hlox
