// AWS Neuron custom calls from transformers-neuronx / torch-xla dumps:
//   AwsNeuronGelu(x)          = 0.5 x (1 + erf(x / sqrt 2))                    (exact GELU)
//   AwsNeuronGeluApprxTanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   AwsNeuronGeluBackward(x)  = d gelu / dx = Phi(x) + x phi(x); the corpus passes only x and
//                               multiplies by the incoming gradient afterwards. With two
//                               operands (grad, x) the product is returned.
//   AwsNeuronRmsNorm(x, w, eps) = x * rsqrt(mean(x^2 over dim) + eps) * w, where dim is the
//                               backend_config integer if given, else the first dim whose size
//                               equals w's (transformers-neuronx puts hidden first: [h, s, b]).
#include <cmath>
#include <numbers>
#include <string>

#include "runtime/custom_call/targets.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {

absl::StatusOr<Value> CcNeuronGelu(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  const std::string& t = instr.attrs().custom_call_target;
  const bool backward = t == "AwsNeuronGeluBackward";
  const bool tanh_approx = t == "AwsNeuronGeluApprxTanh";
  const size_t xi = backward && operands.size() >= 2 ? 1 : 0;
  HLOX_ASSIGN_OR_RETURN(const Buffer* x, ArrayOperand(instr, operands, xi));
  const Buffer* grad = nullptr;
  if (xi == 1) {
    HLOX_ASSIGN_OR_RETURN(grad, ArrayOperand(instr, operands, 0));
  }
  const Shape& os = instr.shape();
  if (!os.IsArray() || os.ElementCount() != x->element_count() || !IsRealType(os.element_type()) ||
      (grad != nullptr && grad->element_count() != x->element_count())) {
    return KernelError(instr, "GELU needs an array result like its operand");
  }
  Value out = NewArray(os);
  KernelParallelFor(ctx, x->element_count(), 8192, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const double v = LoadDouble(*x, i);
      double r;
      if (backward) {
        const double cdf = 0.5 * (1.0 + std::erf(v * std::numbers::sqrt2 / 2.0));
        const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * std::numbers::pi);
        r = cdf + v * pdf;
        if (grad != nullptr) r *= LoadDouble(*grad, i);
      } else if (tanh_approx) {
        const double c = std::sqrt(2.0 / std::numbers::pi);
        r = 0.5 * v * (1.0 + std::tanh(c * (v + 0.044715 * v * v * v)));
      } else {
        r = 0.5 * v * (1.0 + std::erf(v * std::numbers::sqrt2 / 2.0));
      }
      StoreDouble(*out.array, i, r);
    }
  });
  return out;
}

absl::StatusOr<Value> CcNeuronRmsNorm(const Instruction& instr, const std::vector<const Value*>& operands,
                                      KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* x, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* w, ArrayOperand(instr, operands, 1));
  double eps = 1e-6;
  if (operands.size() >= 3) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* e, ArrayOperand(instr, operands, 2));
    if (e->element_count() != 1) return KernelError(instr, "eps must be a scalar");
    eps = LoadDouble(*e, 0);
  }
  const Shape& xs = x->shape();
  const Shape& os = instr.shape();
  if (!os.IsArray() || os.dims() != xs.dims() || xs.rank() < 1) return KernelError(instr, "bad shapes");
  int64_t dim = -1;
  const std::string& cfg = instr.attrs().backend_config;
  if (!cfg.empty() && cfg.find_first_not_of("0123456789") == std::string::npos && cfg.size() < 4) {
    dim = std::stoll(cfg);
  } else {
    for (int64_t d = 0; d < xs.rank(); ++d) {
      if (xs.dim(d) == w->element_count()) {
        dim = d;
        break;
      }
    }
  }
  if (dim < 0 || dim >= xs.rank() || xs.dim(dim) != w->element_count()) {
    return KernelError(instr, "cannot find the normalized dimension (weight size matches no dim)");
  }
  int64_t outer = 1, len = xs.dim(dim), inner = 1;
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d < dim) outer *= xs.dim(d);
    else if (d > dim) inner *= xs.dim(d);
  }
  const std::vector<double> xv = ToDoubles(*x), wv = ToDoubles(*w);
  Value out = NewArray(os);
  KernelParallelFor(ctx, outer * inner, 64, [&](int64_t b, int64_t e) {
    for (int64_t oi = b; oi < e; ++oi) {
      const int64_t o = oi / inner, in = oi % inner;
      const int64_t base = o * len * inner + in;
      double s = 0;
      for (int64_t j = 0; j < len; ++j) s += xv[base + j * inner] * xv[base + j * inner];
      const double r = 1.0 / std::sqrt(s / static_cast<double>(len) + eps);
      for (int64_t j = 0; j < len; ++j) StoreDouble(*out.array, base + j * inner, xv[base + j * inner] * r * wv[j]);
    }
  });
  return out;
}

}  // namespace hlox::rt
