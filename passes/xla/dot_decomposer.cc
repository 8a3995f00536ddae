// dot-decomposer (XLA's DotDecomposer): a dot that is not in the canonical batch-matmul form
// becomes one that is, with transposes and reshapes around it:
//   lhs -> transpose to [batch..., lhs free..., contracting...] -> reshape to [batch..., M, K]
//   rhs -> transpose to [batch..., contracting..., rhs free...] -> reshape to [batch..., K, N]
//   dot([batch..., M, K], [batch..., K, N]) -> [batch..., M, N] -> reshape to the old result
// (M or N is left out when that side has no free dimension; K is 1 when nothing is contracted).
// As in XLA, a dot is canonical when its batch dimensions lead, in order, on both sides, and
// each side has exactly one contracting dimension and at most one free one (so [k, m] x [k, n]
// stays: transpose folding handles that orientation). Transposes and reshapes that would be
// identities are not emitted. Only row-major dots with two array operands; the default applies
// (XLA's CPU pipeline always decomposes). Multi-dimensional contractions sum in one k loop, so
// rounding may differ from the kernel's grouping.
#include <algorithm>
#include <numeric>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Dimensions of a rank-`rank` operand that are neither batch nor contracting, ascending.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch, const std::vector<int64_t>& contr) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contr, d)) free.push_back(d);
  }
  return free;
}

bool RowMajor(const Shape& s) { return simp::SameLayoutShape(s, simp::ShapeLike(s, s.element_type(), s.dims())); }

bool Decomposable(const Instruction& i) {
  if (i.opcode() != Opcode::kDot || i.operand_count() != 2 || !i.attrs().dot.has_value() || !i.shape().IsArray()) {
    return false;
  }
  const Shape& l = i.operand(0)->shape();
  const Shape& r = i.operand(1)->shape();
  const DotDimensionNumbers& dn = *i.attrs().dot;
  if (!l.IsArray() || !r.IsArray() || !RowMajor(l) || !RowMajor(r) || !RowMajor(i.shape()) ||
      dn.lhs_batch.size() != dn.rhs_batch.size() || dn.lhs_contracting.size() != dn.rhs_contracting.size()) {
    return false;
  }
  const int64_t b = static_cast<int64_t>(dn.lhs_batch.size());
  bool canonical = dn.lhs_contracting.size() == 1 && l.rank() - b <= 2 && r.rank() - b <= 2;
  for (int64_t k = 0; k < b; ++k) canonical = canonical && dn.lhs_batch[k] == k && dn.rhs_batch[k] == k;
  return !canonical;
}

// `x` transposed by `perm` (when not the identity) and reshaped to `dims` (when different).
Instruction* Arrange(const Instruction& anchor, Instruction* x, const std::vector<int64_t>& perm,
                     const std::vector<int64_t>& dims) {
  const Shape& s = x->shape();
  if (!simp::IsIdentityPermutation(perm)) x = simp::AddTranspose(anchor, x, perm);
  if (x->shape().dims() != dims) {
    x = simp::AddNew(anchor, Opcode::kReshape, simp::ShapeLike(s, s.element_type(), dims), {x});
  }
  return x;
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dim(d);
  return p;
}

Instruction* Decompose(Instruction& i) {
  const DotDimensionNumbers& dn = *i.attrs().dot;
  Instruction* lhs = i.operand(0);
  Instruction* rhs = i.operand(1);
  const Shape& l = lhs->shape();
  const Shape& r = rhs->shape();
  const std::vector<int64_t> lfree = FreeDims(l.rank(), dn.lhs_batch, dn.lhs_contracting);
  const std::vector<int64_t> rfree = FreeDims(r.rank(), dn.rhs_batch, dn.rhs_contracting);
  std::vector<int64_t> batch_sizes;
  for (int64_t d : dn.lhs_batch) batch_sizes.push_back(l.dim(d));
  const int64_t b = static_cast<int64_t>(batch_sizes.size());
  const int64_t k = Product(l, dn.lhs_contracting);

  std::vector<int64_t> lperm = dn.lhs_batch;
  lperm.insert(lperm.end(), lfree.begin(), lfree.end());
  lperm.insert(lperm.end(), dn.lhs_contracting.begin(), dn.lhs_contracting.end());
  std::vector<int64_t> ldims = batch_sizes;
  if (!lfree.empty()) ldims.push_back(Product(l, lfree));
  ldims.push_back(k);

  std::vector<int64_t> rperm = dn.rhs_batch;
  rperm.insert(rperm.end(), dn.rhs_contracting.begin(), dn.rhs_contracting.end());
  rperm.insert(rperm.end(), rfree.begin(), rfree.end());
  std::vector<int64_t> rdims = batch_sizes;
  rdims.push_back(k);
  if (!rfree.empty()) rdims.push_back(Product(r, rfree));

  Instruction* nl = Arrange(i, lhs, lperm, ldims);
  Instruction* nr = Arrange(i, rhs, rperm, rdims);
  DotDimensionNumbers cn;
  for (int64_t d = 0; d < b; ++d) {
    cn.lhs_batch.push_back(d);
    cn.rhs_batch.push_back(d);
  }
  cn.lhs_contracting = {static_cast<int64_t>(ldims.size()) - 1};
  cn.rhs_contracting = {b};
  std::vector<int64_t> out = batch_sizes;
  if (!lfree.empty()) out.push_back(ldims[b]);
  if (!rfree.empty()) out.push_back(rdims.back());
  const Shape& s = i.shape();
  std::unique_ptr<Instruction> dot = i.CloneWithOperands(simp::ShapeLike(s, s.element_type(), out), {nl, nr});
  dot->set_name("");
  dot->attrs().dot = cn;
  Instruction* d = i.parent()->AddInstruction(std::move(dot));
  if (d->shape().dims() == s.dims()) return d;
  return simp::AddNew(i, Opcode::kReshape, s, {d});
}

}  // namespace

std::unique_ptr<Pass> CreateDotDecomposer() {
  xla::Rule r;
  r.name = "non_canonical_dot";
  r.match = [](const Instruction& i) { return Decomposable(i); };
  r.apply = [](Instruction& i) { return Decompose(i); };
  return xla::MakeRulePass("dot-decomposer", {r});
}

}  // namespace hlox
