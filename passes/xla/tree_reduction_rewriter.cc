// tree-reduction-rewriter (XLA's TreeReductionRewriter, as XLA's CPU pipeline runs it with a
// window of 32): a reduction over a long dimension becomes two nested reductions, the inner one
// over windows of 32 elements and the outer one over the window sums, so each partial result
// adds up at most a few dozen terms (a two-level summation tree: less rounding error on long
// float sums, and more independent work):
//   reduce(x[..., n, ...], dims) ->
//     reduce(reduce(reshape(pad(x, init) to m*32) -> [..., m, 32, ...], {d+1}), dims)
// where d is the longest reduced dimension (first on ties), longer than 32, and m = ceil(n/32);
// the pad (with the init value) only when 32 does not divide n. Applying again splits further.
// Only single-input reductions whose computation is add, multiply, maximum or minimum of its
// two parameters (checked structurally) with the identity as init (0, 1, -inf, +inf): padding
// with the init then leaves each window's value unchanged. Row-major inputs only. The default
// applies, as XLA does.
#include <cmath>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

constexpr int64_t kWindow = 32;

bool InitIsIdentity(Opcode reducer, const Instruction& init) {
  std::optional<double> v = simp::UniformConstant(init);
  if (!v.has_value()) return false;
  const bool fp = IsFloatingPoint(init.shape().element_type());
  switch (reducer) {
    case Opcode::kAdd:
      return *v == 0;
    case Opcode::kMultiply:
      return *v == 1;
    case Opcode::kMaximum:
      return fp && std::isinf(*v) && *v < 0;
    case Opcode::kMinimum:
      return fp && std::isinf(*v) && *v > 0;
    default:
      return false;
  }
}

// The reduced dimension to split, or -1.
int64_t SplitDim(const Instruction& i) {
  if (i.opcode() != Opcode::kReduce || i.operand_count() != 2 || !i.shape().IsArray()) return -1;
  const Shape& x = i.operand(0)->shape();
  if (!x.IsArray() || x.element_type() == PrimitiveType::kPred) return -1;
  if (!simp::SameLayoutShape(x, simp::ShapeLike(x, x.element_type(), x.dims()))) return -1;
  std::optional<Opcode> op = simp::ReducerOpcode(i);
  if (!op.has_value() || !InitIsIdentity(*op, *i.operand(1))) return -1;
  int64_t best = -1;
  for (int64_t d : i.dimensions()) {
    if (d < 0 || d >= x.rank()) return -1;
    if (x.dim(d) > kWindow && (best < 0 || x.dim(d) > x.dim(best))) best = d;
  }
  return best;
}

Instruction* Split(Instruction& i) {
  const int64_t d = SplitDim(i);
  Instruction* x = i.operand(0);
  Instruction* init = i.operand(1);
  const Shape& xs = x->shape();
  const PrimitiveType t = xs.element_type();
  const int64_t n = xs.dim(d);
  const int64_t m = (n + kWindow - 1) / kWindow;
  if (m * kWindow != n) {
    std::vector<int64_t> padded = xs.dims();
    padded[d] = m * kWindow;
    Instruction* p = simp::AddNew(i, Opcode::kPad, simp::ShapeLike(xs, t, padded), {x, init});
    p->attrs().padding.assign(xs.rank(), PaddingDim{});
    p->attrs().padding[d].high = m * kWindow - n;
    x = p;
  }
  std::vector<int64_t> split = xs.dims();
  split[d] = m;
  split.insert(split.begin() + d + 1, kWindow);
  x = simp::AddNew(i, Opcode::kReshape, simp::ShapeLike(xs, t, split), {x});
  std::vector<int64_t> partial_dims = xs.dims();
  partial_dims[d] = m;
  std::unique_ptr<Instruction> inner = i.CloneWithOperands(simp::ShapeLike(xs, t, partial_dims), {x, init});
  inner->set_name("");
  inner->attrs().dimensions = {d + 1};
  Instruction* partial = i.parent()->AddInstruction(std::move(inner));
  std::unique_ptr<Instruction> outer = i.CloneWithOperands(i.shape(), {partial, init});
  outer->set_name("");
  return i.parent()->AddInstruction(std::move(outer));
}

}  // namespace

std::unique_ptr<Pass> CreateTreeReductionRewriter() {
  xla::Rule r;
  r.name = "long_reduction";
  r.match = [](const Instruction& i) { return SplitDim(i) >= 0; };
  r.apply = [](Instruction& i) { return Split(i); };
  return xla::MakeRulePass("tree-reduction-rewriter", {r});
}

}  // namespace hlox
