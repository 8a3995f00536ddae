// cuSOLVER custom calls from jaxlib's GPU linear algebra, on logical (batched) matrices: the
// operands carry column-major layouts, so the solver's A(i, j) is the logical a[..., i, j].
//   cusolver_getrf / cublas_getrf_batched: a -> (lu, pivots s32 1-based, info s32, workspace)
//   cuda_lu_pivots_to_permutation: 0-based pivots -> permutation (swap perm[i], perm[piv[i]])
//   cusolver_geqrf: a -> (householder a, taus, info, workspace)
//   cusolver_orgqr: (a, taus) -> (q, info, workspace)
//   cusolver_potrf: a -> (factor, info, workspace); uplo is the int32 at byte 4 of jaxlib's
//     descriptor (0 lower, 1 upper); the other triangle keeps the input's values as cuSOLVER
//     leaves it. info > 0 marks a matrix that is not positive definite.
// Workspace leaves are zeroed. Batches run in parallel.
#include <numeric>
#include <vector>

#include "runtime/custom_call/targets.h"
#include "runtime/kernels/linalg_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

struct Batched {
  int64_t batch = 0, m = 0, n = 0;
};

absl::StatusOr<Batched> MatrixDims(const Instruction& instr, const Shape& s) {
  if (s.rank() < 2 || !IsFloatingPoint(s.element_type())) return KernelError(instr, "needs real float matrices");
  Batched b;
  b.m = s.dim(s.rank() - 2);
  b.n = s.dim(s.rank() - 1);
  b.batch = 1;
  for (int64_t d = 0; d + 2 < s.rank(); ++d) b.batch *= s.dim(d);
  return b;
}

absl::Status CheckLeaves(const Instruction& instr, const Value& out, size_t want) {
  if (!out.is_tuple || out.tuple.size() < want) return KernelError(instr, "unexpected result tuple");
  for (size_t i = 0; i < want; ++i) {
    if (!out.tuple[i].is_array()) return KernelError(instr, "result leaves must be arrays");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Value> CcGetrf(const Instruction& instr, const std::vector<const Value*>& operands,
                              KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(Batched d, MatrixDims(instr, a->shape()));
  Value out = ZeroedResult(instr.shape());
  HLOX_RETURN_IF_ERROR(CheckLeaves(instr, out, 3));
  Buffer& lu = ResultLeaf(out, 0);
  Buffer& piv = ResultLeaf(out, 1);
  Buffer& info = ResultLeaf(out, 2);
  const int64_t k = std::min(d.m, d.n);
  if (lu.shape().dims() != a->shape().dims() || piv.element_count() != d.batch * k ||
      info.element_count() != d.batch) {
    return KernelError(instr, "getrf result shapes do not match the operand");
  }
  std::vector<double> av = ToDoubles(*a);
  std::vector<int32_t> pv(d.batch * k);
  std::vector<int64_t> iv(d.batch);
  KernelParallelFor(ctx, d.batch, 1, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) iv[i] = LuDecompose(av.data() + i * d.m * d.n, d.m, d.n, pv.data() + i * k);
  });
  FromDoubles(av, lu);
  for (int64_t i = 0; i < d.batch * k; ++i) StoreDouble(piv, i, pv[i]);
  for (int64_t i = 0; i < d.batch; ++i) StoreDouble(info, i, static_cast<double>(iv[i]));
  return out;
}

absl::StatusOr<Value> CcPivotsToPermutation(const Instruction& instr, const std::vector<const Value*>& operands,
                                            KernelContext&) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* p, ArrayOperand(instr, operands, 0));
  const Shape& os = instr.shape();
  const Shape& ps = p->shape();
  if (!os.IsArray() || ps.rank() < 1 || os.rank() != ps.rank() || !IsInteger(os.element_type())) {
    return KernelError(instr, "bad pivot/permutation shapes");
  }
  const int64_t k = ps.dim(ps.rank() - 1), n = os.dim(os.rank() - 1);
  const int64_t batch = k == 0 ? (n == 0 ? 0 : os.ElementCount() / n) : p->element_count() / k;
  if (batch * n != os.ElementCount()) return KernelError(instr, "batch sizes differ");
  Value out = NewArray(os);
  std::vector<int64_t> perm(n);
  for (int64_t b = 0; b < batch; ++b) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = 0; i < k && i < n; ++i) {
      const int64_t j = ReadIndex(*p, b * k + i);
      if (j >= 0 && j < n) std::swap(perm[i], perm[j]);
    }
    for (int64_t i = 0; i < n; ++i) StoreDouble(*out.array, b * n + i, static_cast<double>(perm[i]));
  }
  return out;
}

absl::StatusOr<Value> CcGeqrf(const Instruction& instr, const std::vector<const Value*>& operands,
                              KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(Batched d, MatrixDims(instr, a->shape()));
  Value out = ZeroedResult(instr.shape());
  HLOX_RETURN_IF_ERROR(CheckLeaves(instr, out, 2));
  Buffer& qr = ResultLeaf(out, 0);
  Buffer& taus = ResultLeaf(out, 1);
  const int64_t k = std::min(d.m, d.n);
  if (qr.shape().dims() != a->shape().dims() || taus.element_count() != d.batch * k) {
    return KernelError(instr, "geqrf result shapes do not match the operand");
  }
  std::vector<double> av = ToDoubles(*a), tv(d.batch * k);
  KernelParallelFor(ctx, d.batch, 1, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) HouseholderQr(av.data() + i * d.m * d.n, d.m, d.n, tv.data() + i * k);
  });
  FromDoubles(av, qr);
  FromDoubles(tv, taus);
  return out;
}

absl::StatusOr<Value> CcOrgqr(const Instruction& instr, const std::vector<const Value*>& operands,
                              KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* t, ArrayOperand(instr, operands, 1));
  HLOX_ASSIGN_OR_RETURN(Batched d, MatrixDims(instr, a->shape()));
  Value out = ZeroedResult(instr.shape());
  HLOX_RETURN_IF_ERROR(CheckLeaves(instr, out, 1));
  Buffer& q = ResultLeaf(out, 0);
  const int64_t k = t->shape().rank() == 0 ? 1 : t->shape().dim(t->shape().rank() - 1);
  if (q.shape().dims() != a->shape().dims() || t->element_count() != d.batch * k || k > std::min(d.m, d.n)) {
    return KernelError(instr, "orgqr shapes do not match");
  }
  const std::vector<double> av = ToDoubles(*a), tv = ToDoubles(*t);
  std::vector<double> qv(av.size());
  KernelParallelFor(ctx, d.batch, 1, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      FormQ(av.data() + i * d.m * d.n, d.m, d.n, tv.data() + i * k, k, qv.data() + i * d.m * d.n);
    }
  });
  FromDoubles(qv, q);
  return out;
}

absl::StatusOr<Value> CcPotrf(const Instruction& instr, const std::vector<const Value*>& operands,
                              KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(Batched d, MatrixDims(instr, a->shape()));
  Value out = ZeroedResult(instr.shape());
  if (!out.is_tuple || out.tuple.empty() || !out.tuple[0].is_array()) {
    return KernelError(instr, "potrf needs a tuple result");
  }
  Buffer& l = ResultLeaf(out, 0);
  if (l.shape().dims() != a->shape().dims() || d.m != d.n) return KernelError(instr, "potrf needs square matrices");
  const bool lower = BackendConfigInt32(instr, 4, 0) == 0;
  const std::vector<double> av = ToDoubles(*a);
  std::vector<double> lv = av;  // the other triangle keeps the input's values
  std::vector<int64_t> info(d.batch);
  KernelParallelFor(ctx, d.batch, 1, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) info[i] = Cholesky(av.data() + i * d.n * d.n, lv.data() + i * d.n * d.n, d.n, lower, d.batch == 1 ? ctx.pool : nullptr);
  });
  FromDoubles(lv, l);
  if (out.tuple.size() >= 2 && out.tuple[1].is_array() && out.tuple[1].array->element_count() == d.batch &&
      IsInteger(out.tuple[1].array->shape().element_type())) {
    for (int64_t i = 0; i < d.batch; ++i) StoreDouble(*out.tuple[1].array, i, static_cast<double>(info[i]));
  }
  return out;
}

}  // namespace hlox::rt
