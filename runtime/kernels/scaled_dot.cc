// scaled-dot(lhs, rhs, lhs_scale, rhs_scale): a dot of block-scaled operands, as used for the
// microscaling formats (f8/f4 values with f8e8m0fnu scales). Each scale has its operand's rank
// and each of its dims divides the operand's: operand element x at index i stands for
// x * scale[i / block], block = operand dims / scale dims, elementwise. The kernel decodes both
// operands and scales (every real type, the f8/f4 types included) to double, applies the
// scales, contracts as dot does in double, and rounds once to the result type.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/dot_variants.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

constexpr int64_t kGrain = 256;

// The operand's values times their block's scale.
absl::StatusOr<std::vector<double>> Scaled(const Buffer& x, const Buffer& scale) {
  HLOX_ASSIGN_OR_RETURN(std::vector<double> v, LoadReals(x));
  HLOX_ASSIGN_OR_RETURN(std::vector<double> s, LoadReals(scale));
  const std::vector<int64_t>& xd = x.shape().dims();
  const std::vector<int64_t>& sd = scale.shape().dims();
  if (xd.size() != sd.size()) return absl::InvalidArgumentError("scale rank differs from its operand's");
  std::vector<int64_t> block(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) {
    if (sd[i] == 0 ? xd[i] != 0 : xd[i] % sd[i] != 0) {
      return absl::InvalidArgumentError("scale dims do not divide the operand's");
    }
    block[i] = sd[i] == 0 ? 1 : xd[i] / sd[i];
  }
  const std::vector<int64_t> ss = RowMajorStrides(sd);
  std::vector<int64_t> idx(xd.size(), 0);
  for (size_t e = 0; e < v.size(); ++e) {
    int64_t so = 0;
    for (size_t i = 0; i < idx.size(); ++i) so += idx[i] / block[i] * ss[i];
    v[e] *= s[so];
    NextIndex(idx, xd);
  }
  return v;
}

}  // namespace

absl::StatusOr<Value> ScaledDotKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                      KernelContext& ctx) {
  const Buffer* in[4];
  for (size_t k = 0; k < 4; ++k) {
    HLOX_ASSIGN_OR_RETURN(in[k], ArrayOperand(instr, operands, k));
  }
  HLOX_RETURN_IF_ERROR(CheckVerifiedShape(instr));
  const PrimitiveType t = instr.shape().IsArray() ? instr.shape().element_type() : PrimitiveType::kTuple;
  if (!IsFloatingPoint(t)) return KernelError(instr, "scaled-dot gives a floating-point result");
  absl::StatusOr<std::vector<double>> l = Scaled(*in[0], *in[2]);
  if (!l.ok()) return KernelError(instr, absl::StrCat("lhs: ", l.status().message()));
  absl::StatusOr<std::vector<double>> r = Scaled(*in[1], *in[3]);
  if (!r.ok()) return KernelError(instr, absl::StrCat("rhs: ", r.status().message()));
  const DotDimensionNumbers d = instr.attrs().dot.value_or(DotDimensionNumbers{});
  const DotIndexPlan plan = MakeDotIndexPlan(in[0]->shape().dims(), in[1]->shape().dims(), d, -1);
  Value out = NewArray(instr.shape());
  if (plan.out_count != out.array->element_count()) return KernelError(instr, "result dims differ from the dot's");
  std::vector<double> o(plan.out_count);
  const int64_t k_count = static_cast<int64_t>(plan.lhs_k.size());
  KernelParallelFor(ctx, plan.out_count, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      int64_t lb = 0, rb = 0;
      DotOutputBases(plan, e, &lb, &rb, nullptr);
      double acc = 0;
      for (int64_t k = 0; k < k_count; ++k) acc += (*l)[lb + plan.lhs_k[k]] * (*r)[rb + plan.rhs_k[k]];
      o[e] = acc;
    }
  });
  StoreReals(o, *out.array);
  return out;
}

}  // namespace hlox::rt
