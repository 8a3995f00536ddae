// batch-norm-training, batch-norm-inference and batch-norm-grad for any feature_index and
// epsilon. Statistics are computed in f64 per feature (biased variance, as XLA defines it) in a
// fixed order, so results do not depend on the thread count; outputs round to their types.
//   training:  y = (x - mean) * rsqrt(var + eps) * scale + offset -> (y, mean, var)
//   inference: same with the given mean and variance
//   grad:      (dx, dscale, doffset) with doffset = sum(dy), dscale = sum(dy * xhat) and
//              dx = scale * rsqrt(var + eps) / N * (N * dy - doffset - xhat * dscale)
#include <cmath>
#include <vector>

#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

struct Layout3 {
  int64_t outer = 1, features = 1, inner = 1;
  int64_t Index(int64_t o, int64_t f, int64_t i) const { return (o * features + f) * inner + i; }
};

}  // namespace

absl::StatusOr<Value> BatchNormKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                      KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* x, ArrayOperand(instr, operands, 0));
  const Shape& xs = x->shape();
  const int64_t fi = instr.attrs().feature_index;
  if (fi < 0 || fi >= xs.rank() || !IsFloatingPoint(xs.element_type())) {
    return KernelError(instr, "bad feature_index or non-float operand");
  }
  Layout3 l;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d < fi) l.outer *= xs.dim(d);
    else if (d == fi) l.features = xs.dim(d);
    else l.inner *= xs.dim(d);
  }
  const size_t want = instr.opcode() == Opcode::kBatchNormTraining ? 3 : 5;
  if (operands.size() != want) return KernelError(instr, "wrong operand count");
  std::vector<std::vector<double>> vec;  // per-feature operands
  for (size_t i = 1; i < want; ++i) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, operands, i));
    if (instr.opcode() == Opcode::kBatchNormGrad && i == 4) break;
    if (b->element_count() != l.features) return KernelError(instr, "per-feature operand has the wrong size");
    vec.push_back(ToDoubles(*b));
  }
  const double eps = instr.attrs().epsilon;
  const double n = static_cast<double>(l.outer * l.inner);
  const Shape& os = instr.shape();
  const std::vector<double> xv = ToDoubles(*x);
  auto normalize = [&](const std::vector<double>& mean, const std::vector<double>& var,
                       const std::vector<double>& scale, const std::vector<double>& offset, Buffer& y) {
    KernelParallelFor(ctx, l.outer * l.features, 16, [&](int64_t b, int64_t e) {
      for (int64_t of = b; of < e; ++of) {
        const int64_t o = of / l.features, f = of % l.features;
        const double inv = 1.0 / std::sqrt(var[f] + eps);
        for (int64_t i = 0; i < l.inner; ++i) {
          const int64_t k = l.Index(o, f, i);
          StoreDouble(y, k, (xv[k] - mean[f]) * inv * scale[f] + offset[f]);
        }
      }
    });
  };
  auto stats = [&](std::vector<double>& mean, std::vector<double>& var) {
    mean.assign(l.features, 0);
    var.assign(l.features, 0);
    KernelParallelFor(ctx, l.features, 1, [&](int64_t b, int64_t e) {
      for (int64_t f = b; f < e; ++f) {
        double s = 0;
        for (int64_t o = 0; o < l.outer; ++o)
          for (int64_t i = 0; i < l.inner; ++i) s += xv[l.Index(o, f, i)];
        const double m = n > 0 ? s / n : 0;
        double v = 0;
        for (int64_t o = 0; o < l.outer; ++o)
          for (int64_t i = 0; i < l.inner; ++i) v += (xv[l.Index(o, f, i)] - m) * (xv[l.Index(o, f, i)] - m);
        mean[f] = m;
        var[f] = n > 0 ? v / n : 0;
      }
    });
  };
  if (instr.opcode() == Opcode::kBatchNormInference) {
    if (!os.IsArray()) return KernelError(instr, "result must be an array");
    Value y = NewArray(os);
    normalize(vec[2], vec[3], vec[0], vec[1], *y.array);
    return y;
  }
  if (!os.IsTuple() || os.tuple_size() != 3) return KernelError(instr, "result must be a 3-tuple");
  Value r0 = NewArray(os.tuple_shape(0)), r1 = NewArray(os.tuple_shape(1)), r2 = NewArray(os.tuple_shape(2));
  if (r1.array->element_count() != l.features || r2.array->element_count() != l.features ||
      r0.array->element_count() != x->element_count()) {
    return KernelError(instr, "result shapes do not match the operand");
  }
  if (instr.opcode() == Opcode::kBatchNormTraining) {
    std::vector<double> mean, var;
    stats(mean, var);
    normalize(mean, var, vec[0], vec[1], *r0.array);
    FromDoubles(mean, *r1.array);
    FromDoubles(var, *r2.array);
    return Value::Tuple({r0, r1, r2});
  }
  // Grad: operands (x, scale, mean, var, dy).
  HLOX_ASSIGN_OR_RETURN(const Buffer* dyb, ArrayOperand(instr, operands, 4));
  if (dyb->element_count() != x->element_count()) return KernelError(instr, "grad_output size differs");
  const std::vector<double> dy = ToDoubles(*dyb);
  const std::vector<double>&scale = vec[0], &mean = vec[1], &var = vec[2];
  std::vector<double> dscale(l.features), doffset(l.features);
  KernelParallelFor(ctx, l.features, 1, [&](int64_t b, int64_t e) {
    for (int64_t f = b; f < e; ++f) {
      const double inv = 1.0 / std::sqrt(var[f] + eps);
      double so = 0, ss = 0;
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) {
          const int64_t k = l.Index(o, f, i);
          so += dy[k];
          ss += dy[k] * (xv[k] - mean[f]) * inv;
        }
      }
      doffset[f] = so;
      dscale[f] = ss;
      for (int64_t o = 0; o < l.outer; ++o) {
        for (int64_t i = 0; i < l.inner; ++i) {
          const int64_t k = l.Index(o, f, i);
          const double xhat = (xv[k] - mean[f]) * inv;
          StoreDouble(*r0.array, k, n > 0 ? scale[f] * inv / n * (n * dy[k] - so - xhat * ss) : 0);
        }
      }
    }
  });
  FromDoubles(dscale, *r1.array);
  FromDoubles(doffset, *r2.array);
  return Value::Tuple({r0, r1, r2});
}

}  // namespace hlox::rt
