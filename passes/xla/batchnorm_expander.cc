// batchnorm-expander (XLA's BatchNormExpander, its training and inference rewrites): a
// batch-norm becomes the reductions and elementwise ops it is made of, which fusion can then
// merge with their neighbours (XLA's CPU backend has no batch-norm kernel and always expands).
// PyTorch/XLA lowers layer norm to batch-norm-training, so transformer modules carry many.
//   training (x, scale, offset) -> (out, mean, var): over every dimension but feature_index,
//     mean = sum(x) / N, var = sum((x - mean)^2) / N (two passes, as the kernel),
//     out = (x - mean) * rsqrt(var + epsilon) * scale + offset
//   inference (x, scale, offset, mean, var) -> out, the same formula with the given statistics
// Half types compute in f32 and round once at the end, as the runtime's kernel does. The
// default policy is keep: the runtime's batch-norm kernel reads x twice, the expansion up to
// three times unless fusion merges it (docs/MEASUREMENTS.md has the measured comparison).
#include "absl/strings/str_cat.h"
#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool Expandable(const Instruction& i) {
  const bool training = i.opcode() == Opcode::kBatchNormTraining && i.operand_count() == 3;
  const bool inference = i.opcode() == Opcode::kBatchNormInference && i.operand_count() == 5;
  if (!training && !inference) return false;
  const Shape& x = i.operand(0)->shape();
  // Row-major operands only: the expansion's intermediates take the default layout.
  return x.IsArray() && IsFloatingPoint(x.element_type()) && PrimitiveBitWidth(x.element_type()) <= 32 &&
         i.attrs().feature_index >= 0 && i.attrs().feature_index < x.rank() &&
         simp::SameLayoutShape(x, simp::ShapeLike(x, x.element_type(), x.dims()));
}

// A scalar f32 add computation for the reductions, added to the module once per expansion.
Computation* AddComputation(Module& module) {
  auto c = std::make_unique<Computation>("bn_add");
  Computation* comp = module.AddComputation(std::move(c));
  const Shape s(PrimitiveType::kF32, {});
  Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, s));
  Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, s));
  comp->set_root(comp->AddInstruction(Instruction::Create(Opcode::kAdd, s, {a, b})));
  return comp;
}

Instruction* Expand(Instruction& i) {
  const Shape& xs = i.operand(0)->shape();
  const int64_t fi = i.attrs().feature_index;
  const Shape fx = simp::ShapeLike(xs, PrimitiveType::kF32, xs.dims());  // x in f32
  const Shape ff = simp::ShapeLike(i.operand(1)->shape(), PrimitiveType::kF32, {xs.dim(fi)});
  auto to_f32 = [&](Instruction* v, const Shape& s) {
    return v->shape().element_type() == PrimitiveType::kF32 ? v : simp::AddNew(i, Opcode::kConvert, s, {v});
  };
  auto bcast = [&](Instruction* f) {  // [F] -> x's shape along feature_index
    Instruction* b = simp::AddNew(i, Opcode::kBroadcast, fx, {f});
    b->attrs().dimensions = {fi};
    return b;
  };
  std::vector<int64_t> red;
  int64_t n = 1;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d == fi) continue;
    red.push_back(d);
    n *= xs.dim(d);
  }
  Instruction* x = to_f32(i.operand(0), fx);
  Instruction* mean = nullptr;
  Instruction* var = nullptr;
  Computation* add = nullptr;
  auto mean_of = [&](Instruction* v) {  // sum over `red` / N, as [F]
    if (add == nullptr) add = AddComputation(*i.parent()->parent());
    Instruction* zero = simp::AddFilled(i, Shape(PrimitiveType::kF32, {}), 0.0);
    Instruction* sum = simp::AddNew(i, Opcode::kReduce, ff, {v, zero});
    sum->attrs().dimensions = red;
    sum->mutable_called_computations() = {add};
    return simp::AddNew(i, Opcode::kDivide, ff, {sum, simp::AddFilled(i, ff, static_cast<double>(n))});
  };
  if (i.opcode() == Opcode::kBatchNormTraining) {
    mean = mean_of(x);
  } else {
    mean = to_f32(i.operand(3), ff);
    var = to_f32(i.operand(4), ff);
  }
  Instruction* centered = simp::AddNew(i, Opcode::kSubtract, fx, {x, bcast(mean)});
  if (var == nullptr) var = mean_of(simp::AddNew(i, Opcode::kMultiply, fx, {centered, centered}));
  Instruction* rstd = simp::AddNew(
      i, Opcode::kRsqrt, ff, {simp::AddNew(i, Opcode::kAdd, ff, {var, simp::AddFilled(i, ff, i.attrs().epsilon)})});
  Instruction* scaled = simp::AddNew(i, Opcode::kMultiply, ff, {rstd, to_f32(i.operand(1), ff)});
  Instruction* out = simp::AddNew(
      i, Opcode::kAdd, fx,
      {simp::AddNew(i, Opcode::kMultiply, fx, {centered, bcast(scaled)}), bcast(to_f32(i.operand(2), ff))});
  auto back = [&](Instruction* v, const Shape& like) {
    return like.element_type() == PrimitiveType::kF32 ? v : simp::AddNew(i, Opcode::kConvert, like, {v});
  };
  if (i.opcode() == Opcode::kBatchNormInference) return back(out, i.shape());
  const Shape& ts = i.shape();
  return simp::AddNew(i, Opcode::kTuple, ts,
                      {back(out, ts.tuple_shapes()[0]), back(mean, ts.tuple_shapes()[1]), back(var, ts.tuple_shapes()[2])});
}

}  // namespace

std::unique_ptr<Pass> CreateBatchNormExpander() {
  xla::Rule training{"batch_norm_training", [](const Instruction& i) {
                       return i.opcode() == Opcode::kBatchNormTraining && Expandable(i) && i.shape().IsTuple() &&
                              i.shape().tuple_size() == 3;
                     },
                     [](Instruction& i) { return Expand(i); }, 0};
  xla::Rule inference{"batch_norm_inference",
                      [](const Instruction& i) { return i.opcode() == Opcode::kBatchNormInference && Expandable(i); },
                      [](Instruction& i) { return Expand(i); }, 0};
  return xla::MakeRulePass("batchnorm-expander", {training, inference});
}

}  // namespace hlox
