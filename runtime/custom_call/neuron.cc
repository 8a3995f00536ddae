// AWS Neuron custom calls from transformers-neuronx / torch-xla dumps:
//   AwsNeuronGelu(x)          = 0.5 x (1 + erf(x / sqrt 2))                    (exact GELU)
//   AwsNeuronGeluApprxTanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   AwsNeuronGeluBackward(x)  = d gelu / dx = Phi(x) + x phi(x); the corpus passes only x and
//                               multiplies by the incoming gradient afterwards. With two
//                               operands (grad, x) the product is returned.
//   AwsNeuronRmsNorm(x, w, eps) = x * rsqrt(mean(x^2 over dim) + eps) * w, where dim is the
//                               backend_config integer if given, else the first dim whose size
//                               equals w's (transformers-neuronx puts hidden first: [h, s, b]).
// f32, bf16 and f16 GELUs compute in f32 with the runtime's vector math (erf 7 ulp, tanh 5, exp
// 1: runtime/math/vmath.h) and round once on store; other types compute in double.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <string>

#include "runtime/custom_call/targets.h"
#include "runtime/kernels/scalar_access.h"
#include "runtime/math/half.h"
#include "runtime/math/vmath.h"

namespace hlox::rt {

constexpr int64_t kGeluChunk = 1024;  // floats per vector-math call (three arrays stay in L1)

namespace {

// Runs of an f32/bf16/f16 buffer as floats, and back (math/half.h's vector conversions).
void LoadRun(const Buffer& b, int64_t at, int64_t n, float* d) {
  const fused::HalfType h = fused::HalfTypeOf(b.shape().element_type());
  if (h == fused::kNotHalf) std::memcpy(d, b.as<float>() + at, sizeof(float) * n);
  else fused::HalfToF32(h, b.as<uint16_t>() + at, d, n);
}
void StoreRun(Buffer& b, int64_t at, int64_t n, const float* s) {
  const fused::HalfType h = fused::HalfTypeOf(b.shape().element_type());
  if (h == fused::kNotHalf) std::memcpy(b.as<float>() + at, s, sizeof(float) * n);
  else fused::F32ToHalf(h, s, b.as<uint16_t>() + at, n);
}
bool F32Computed(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

enum class Gelu { kExact, kTanh, kBackward };

// The GELU of n floats in place (grad, when given, multiplies the backward's result), with
// vmath's erf/tanh/exp: the formulas custom-call-expander writes out, computed in f32.
void GeluF32(Gelu kind, float* x, const float* grad, int64_t n) {
  constexpr float kRsqrt2 = static_cast<float>(std::numbers::sqrt2 / 2.0);
  constexpr float kRsqrt2Pi = static_cast<float>(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
  constexpr float kSqrt2OverPi = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);
  alignas(64) float t[kGeluChunk], e[kGeluChunk];
  switch (kind) {
    case Gelu::kExact:  // x/2 (1 + erf(x / sqrt 2))
      for (int64_t i = 0; i < n; ++i) t[i] = x[i] * kRsqrt2;
      vmath::ErfF32(t, t, n);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
      break;
    case Gelu::kTanh:  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      for (int64_t i = 0; i < n; ++i) t[i] = kSqrt2OverPi * (x[i] + 0.044715f * x[i] * x[i] * x[i]);
      vmath::TanhF32(t, t, n);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + t[i]);
      break;
    case Gelu::kBackward:  // Phi(x) + x phi(x)
      for (int64_t i = 0; i < n; ++i) {
        t[i] = x[i] * kRsqrt2;
        e[i] = -0.5f * x[i] * x[i];
      }
      vmath::ErfF32(t, t, n);
      vmath::ExpF32(e, e, n);
      for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * (1.0f + t[i]) + x[i] * kRsqrt2Pi * e[i];
      if (grad != nullptr) {
        for (int64_t i = 0; i < n; ++i) x[i] *= grad[i];
      }
      break;
  }
}

}  // namespace

absl::StatusOr<Value> CcNeuronGelu(const Instruction& instr, const std::vector<const Value*>& operands,
                                   KernelContext& ctx) {
  const std::string& t = instr.attrs().custom_call_target;
  const Gelu kind = t == "AwsNeuronGeluBackward"   ? Gelu::kBackward
                    : t == "AwsNeuronGeluApprxTanh" ? Gelu::kTanh
                                                    : Gelu::kExact;
  const size_t xi = kind == Gelu::kBackward && operands.size() >= 2 ? 1 : 0;
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
  const PrimitiveType xt = x->shape().element_type();
  if (F32Computed(xt) && xt == os.element_type() && (grad == nullptr || grad->shape().element_type() == xt)) {
    // f32, bf16 and f16 in f32 through the vector math, one chunk in L1 at a time.
    KernelParallelFor(ctx, x->element_count(), 8192, [&](int64_t b, int64_t e) {
      alignas(64) float v[kGeluChunk], g[kGeluChunk];
      for (int64_t c = b; c < e; c += kGeluChunk) {
        const int64_t n = std::min(kGeluChunk, e - c);
        LoadRun(*x, c, n, v);
        if (grad != nullptr) LoadRun(*grad, c, n, g);
        GeluF32(kind, v, grad != nullptr ? g : nullptr, n);
        StoreRun(*out.array, c, n, v);
      }
    });
    return out;
  }
  // Other types (f64, mixed) in double, element by element.
  KernelParallelFor(ctx, x->element_count(), 8192, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const double v = LoadDouble(*x, i);
      double r;
      if (kind == Gelu::kBackward) {
        const double cdf = 0.5 * (1.0 + std::erf(v * std::numbers::sqrt2 / 2.0));
        const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * std::numbers::pi);
        r = cdf + v * pdf;
        if (grad != nullptr) r *= LoadDouble(*grad, i);
      } else if (kind == Gelu::kTanh) {
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
