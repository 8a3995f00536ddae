// triangular-solve and cholesky over batches of matrices (leading dims are batch dims). Both
// read only the triangle named by `lower`. cholesky zeroes the other triangle of its result
// and, like XLA, yields NaNs when a matrix is not positive definite. ADJOINT equals TRANSPOSE
// for the real types supported here. Batches run in parallel.
#include <vector>

#include "runtime/kernels/linalg_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {

absl::StatusOr<Value> LinalgKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  const Shape& as = a->shape();
  const Shape& os = instr.shape();
  if (as.rank() < 2 || !IsFloatingPoint(as.element_type()) || !os.IsArray() || !IsFloatingPoint(os.element_type())) {
    return absl::UnimplementedError(absl::StrCat(std::string(OpcodeName(instr.opcode())), " ", instr.name(),
                                                 ": needs real floating-point matrices"));
  }
  const int64_t k = as.dim(as.rank() - 1);
  if (as.dim(as.rank() - 2) != k) return KernelError(instr, "matrix operand must be square");
  const int64_t batch = k == 0 ? 0 : a->element_count() / (k * k);
  const std::vector<double> av = ToDoubles(*a);
  Value out = NewArray(os);
  if (instr.opcode() == Opcode::kCholesky) {
    if (os.dims() != as.dims()) return KernelError(instr, "result shape differs from operand");
    std::vector<double> res(av.size(), 0.0);
    const bool lower = instr.attrs().lower;
    KernelParallelFor(ctx, batch, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) Cholesky(av.data() + i * k * k, res.data() + i * k * k, k, lower, batch == 1 ? ctx.pool : nullptr);
    });
    FromDoubles(res, *out.array);
    return out;
  }
  HLOX_ASSIGN_OR_RETURN(const Buffer* bb, ArrayOperand(instr, operands, 1));
  const Shape& bs = bb->shape();
  if (bs.rank() != as.rank() || os.dims() != bs.dims()) return KernelError(instr, "b and result must share dims");
  const int64_t m = bs.dim(bs.rank() - 2), n = bs.dim(bs.rank() - 1);
  const bool left = instr.attrs().left_side;
  if ((left ? m : n) != k) return KernelError(instr, "a does not match b's solved dimension");
  for (int64_t d = 0; d + 2 < as.rank(); ++d) {
    if (as.dim(d) != bs.dim(d)) return KernelError(instr, "batch dims differ");
  }
  const std::string& ta = instr.attrs().transpose_a;
  const bool transpose = ta == "TRANSPOSE" || ta == "ADJOINT";
  std::vector<double> x = ToDoubles(*bb);
  KernelParallelFor(ctx, batch, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      TriangularSolve(av.data() + i * k * k, x.data() + i * m * n, m, n, left, instr.attrs().lower,
                      transpose, instr.attrs().unit_diagonal);
    }
  });
  FromDoubles(x, *out.array);
  return out;
}

}  // namespace hlox::rt
