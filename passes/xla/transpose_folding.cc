// transpose-folding (XLA's TransposeFolding): a transpose feeding a dot or a convolution goes
// into the consumer's dimension numbers, so the consumer reads the untransposed operand and the
// transpose's copy disappears:
//   dot(transpose(a), b), lhs_contracting_dims={c}  -> dot(a, b), lhs_contracting_dims={perm[c]}
//   convolution(transpose(x), k), dim_labels=...    -> convolution(x, k) with relabelled dims
// A dot's result lists an operand's free dimensions in the operand's order, so a dot transpose
// folds only when it keeps its free dimensions in order (batch and contracting dimensions are
// lists and map one by one). Convolution dimensions are all named by the labels, so any
// transpose of either operand folds.
//
// Rules and defaults: `row_column_dot`, every foldable transposed operand is XLA's default
// case (batch dimensions fixed, one contracting and one free dimension: a matrix transpose), as
// XLA: apply; `transpose_dot`, other foldable dot transposes: keep (XLA folds only the
// row/column case by default); `transpose_conv`: keep (XLA's CPU pipeline never folds into
// convolutions, and the runtime's fastest convolution forms assume their operands' usual
// dimension orders). Applying folds every foldable transposed operand of the instruction.
#include <algorithm>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

// A non-identity transpose. Its layouts do not matter: hlox values are logical arrays (only a
// bitcast reads a layout), and the consumer keeps its own shape.
bool IsTransposeOf(const Instruction& t) {
  return t.opcode() == Opcode::kTranspose && t.operand_count() == 1 && t.shape().IsArray() &&
         simp::IsPermutation(t.dimensions(), t.shape().rank()) && !simp::IsIdentityPermutation(t.dimensions());
}

// The free (non-batch, non-contracting) dimensions of a dot operand of rank `rank`.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contr) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contr.begin(), contr.end(), d) == contr.end()) {
      free.push_back(d);
    }
  }
  return free;
}

bool IsDot(const Instruction& i) {
  return i.opcode() == Opcode::kDot && i.operand_count() == 2 && i.attrs().dot.has_value();
}

// True when dot operand `k` is a transpose the dot can absorb (free dimensions keep their order).
bool DotFoldable(const Instruction& dot, int k) {
  const Instruction& t = *dot.operand(k);
  if (!IsTransposeOf(t)) return false;
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  const std::vector<int64_t>& batch = k == 0 ? dn.lhs_batch : dn.rhs_batch;
  const std::vector<int64_t>& contr = k == 0 ? dn.lhs_contracting : dn.rhs_contracting;
  const std::vector<int64_t>& perm = t.dimensions();
  int64_t last = -1;
  for (int64_t f : FreeDims(t.shape().rank(), batch, contr)) {
    if (perm[f] < last) return false;
    last = perm[f];
  }
  return true;
}

// XLA's default case: batch dimensions untouched, a single contracting and a single free dim.
bool RowColumn(const Instruction& dot, int k) {
  const Instruction& t = *dot.operand(k);
  const DotDimensionNumbers& dn = *dot.attrs().dot;
  const std::vector<int64_t>& batch = k == 0 ? dn.lhs_batch : dn.rhs_batch;
  const std::vector<int64_t>& contr = k == 0 ? dn.lhs_contracting : dn.rhs_contracting;
  if (contr.size() != 1 || static_cast<int64_t>(batch.size()) != t.shape().rank() - 2) return false;
  return std::all_of(batch.begin(), batch.end(), [&](int64_t b) { return t.dimensions()[b] == b; });
}

bool AnyDotFoldable(const Instruction& i) { return IsDot(i) && (DotFoldable(i, 0) || DotFoldable(i, 1)); }

bool AllFoldableRowColumn(const Instruction& i) {
  for (int k = 0; k < 2; ++k) {
    if (DotFoldable(i, k) && !RowColumn(i, k)) return false;
  }
  return true;
}

void MapDims(std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  for (int64_t& d : dims) d = perm[d];
}

Instruction* FoldDot(Instruction& i) {
  DotDimensionNumbers dn = *i.attrs().dot;
  std::vector<Instruction*> ops = {i.operand(0), i.operand(1)};
  for (int k = 0; k < 2; ++k) {
    if (!DotFoldable(i, k)) continue;
    const std::vector<int64_t>& perm = ops[k]->dimensions();
    MapDims(k == 0 ? dn.lhs_batch : dn.rhs_batch, perm);
    MapDims(k == 0 ? dn.lhs_contracting : dn.rhs_contracting, perm);
    ops[k] = ops[k]->operand(0);
  }
  std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
  c->set_name("");
  c->attrs().dot = dn;
  return i.parent()->AddInstruction(std::move(c));
}

bool IsConv(const Instruction& i) {
  return i.opcode() == Opcode::kConvolution && i.operand_count() == 2 && i.attrs().conv.has_value();
}

bool AnyConvFoldable(const Instruction& i) {
  return IsConv(i) && (IsTransposeOf(*i.operand(0)) || IsTransposeOf(*i.operand(1)));
}

Instruction* FoldConv(Instruction& i) {
  ConvDimensionNumbers cn = *i.attrs().conv;
  std::vector<Instruction*> ops = {i.operand(0), i.operand(1)};
  if (IsTransposeOf(*ops[0])) {
    const std::vector<int64_t>& p = ops[0]->dimensions();
    cn.input_batch = p[cn.input_batch];
    cn.input_feature = p[cn.input_feature];
    MapDims(cn.input_spatial, p);
    ops[0] = ops[0]->operand(0);
  }
  if (IsTransposeOf(*ops[1])) {
    const std::vector<int64_t>& p = ops[1]->dimensions();
    cn.kernel_input_feature = p[cn.kernel_input_feature];
    cn.kernel_output_feature = p[cn.kernel_output_feature];
    MapDims(cn.kernel_spatial, p);
    ops[1] = ops[1]->operand(0);
  }
  std::unique_ptr<Instruction> c = i.CloneWithOperands(i.shape(), ops);
  c->set_name("");
  c->attrs().conv = cn;
  return i.parent()->AddInstruction(std::move(c));
}

}  // namespace

std::unique_ptr<Pass> CreateTransposeFolding() {
  xla::Rule row_column{"row_column_dot",
                       [](const Instruction& i) { return AnyDotFoldable(i) && AllFoldableRowColumn(i); },
                       [](Instruction& i) { return FoldDot(i); }, 1};
  xla::Rule dot{"transpose_dot", [](const Instruction& i) { return AnyDotFoldable(i); },
                [](Instruction& i) { return FoldDot(i); }, 0};
  xla::Rule conv{"transpose_conv", [](const Instruction& i) { return AnyConvFoldable(i); },
                 [](Instruction& i) { return FoldConv(i); }, 0};
  return xla::MakeRulePass("transpose-folding", {row_column, dot, conv});
}

}  // namespace hlox
