// custom-call-expander (after XLA's custom-call expanders, e.g. its Cholesky and QR expanders):
// the AWS Neuron custom calls that hlox's runtime implements as kernels
// (runtime/custom_call/neuron.cc) become plain HLO, so later passes can simplify and fuse them.
// One site kind per target:
//   transfer      AwsNeuronTransferWithStaticRing(x) -> x, or reshape(x) when the shape differs
//   gelu          AwsNeuronGelu(x) -> 0.5 x (1 + erf(x / sqrt 2))
//   gelu_tanh     AwsNeuronGeluApprxTanh(x) -> 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
//   gelu_backward AwsNeuronGeluBackward(x) -> Phi(x) + x phi(x); with (grad, x): grad times that
//   rms_norm      AwsNeuronRmsNorm(x, w[, eps]) -> x * rsqrt(mean(x^2 over dim) + eps) * w, dim
//                 from backend_config or the first dim of w's size, eps 1e-6 when absent
// The kernels compute in double and round once. The GELUs compute in f32 (f64 for f64) and
// round once at the end, so half types get one rounding as from the kernel (elementwise, the
// f32 error is far below a half-type ulp); rms_norm computes in f64 as its kernel does. Only
// row-major shapes are expanded (the intermediates take the default layout); custom calls
// marked as having a side effect, and every other target, are left alone. The default
// policy is keep: XLA treats these custom calls as opaque and never expands them (it has no
// such expander), and hlox's kernels run each as one pass over memory.
#include <cmath>
#include <numbers>
#include <string>

#include "passes/passes.h"
#include "passes/simplify/simp_util.h"
#include "passes/site_util.h"
#include "passes/xla/rule_pass.h"

namespace hlox {
namespace {

bool IsTarget(const Instruction& i, std::string_view target) {
  return i.opcode() == Opcode::kCustomCall && i.attrs().custom_call_target == target && !HasSideEffectNoRecurse(i);
}

// A row-major float array of at most 64 bits per element.
bool RowMajorFloat(const Shape& s) {
  return s.IsArray() && IsFloatingPoint(s.element_type()) && PrimitiveBitWidth(s.element_type()) <= 64 &&
         s.HasDefaultLayout();
}

// Builds the expansion of one custom call in its computation, in the compute type (by default
// f32, or f64 when the result is f64), with x's dimensions.
class Builder {
 public:
  explicit Builder(Instruction& anchor, bool f64 = false)
      : anchor_(anchor),
        type_(f64 || anchor.shape().element_type() == PrimitiveType::kF64 ? PrimitiveType::kF64
                                                                            : PrimitiveType::kF32),
        s_(simp::ShapeLike(anchor.shape(), type_, anchor.shape().dims())) {}

  const Shape& shape() const { return s_; }
  PrimitiveType type() const { return type_; }
  Shape WithDims(std::vector<int64_t> dims) const { return simp::ShapeLike(anchor_.shape(), type_, std::move(dims)); }
  // `v` converted to the compute type (unchanged when it has it).
  Instruction* In(Instruction* v) {
    if (v->shape().element_type() == type_) return v;
    return simp::AddNew(anchor_, Opcode::kConvert, WithDims(v->shape().dims()), {v});
  }
  // `v` (the anchor's dims, compute type) converted to the anchor's result type.
  Instruction* Out(Instruction* v) {
    if (anchor_.shape().element_type() == type_) return v;
    return simp::AddNew(anchor_, Opcode::kConvert, anchor_.shape(), {v});
  }
  Instruction* C(double v, const Shape* s = nullptr) { return simp::AddFilled(anchor_, s ? *s : s_, v); }
  Instruction* U(Opcode op, Instruction* a) { return simp::AddNew(anchor_, op, a->shape(), {a}); }
  Instruction* B(Opcode op, Instruction* a, Instruction* b) { return simp::AddNew(anchor_, op, a->shape(), {a, b}); }
  Instruction* Mul(Instruction* a, Instruction* b) { return B(Opcode::kMultiply, a, b); }
  Instruction* Add(Instruction* a, Instruction* b) { return B(Opcode::kAdd, a, b); }
  Instruction* Broadcast(Instruction* v, const Shape& s, std::vector<int64_t> dims) {
    Instruction* b = simp::AddNew(anchor_, Opcode::kBroadcast, s, {v});
    b->attrs().dimensions = std::move(dims);
    return b;
  }
  Instruction* Reshape(Instruction* v, std::vector<int64_t> dims) {
    return simp::AddNew(anchor_, Opcode::kReshape, simp::ShapeLike(v->shape(), v->shape().element_type(), dims), {v});
  }
  // sum of `v` over dimension `dim`, as a reduce with a scalar add computation of its own.
  Instruction* SumOver(Instruction* v, int64_t dim) {
    Module& module = *anchor_.parent()->parent();
    Computation* add = module.AddComputation(std::make_unique<Computation>("cc_expander_add"));
    const Shape scalar(type_, {});
    Instruction* a = add->AddInstruction(Instruction::CreateParameter(0, scalar));
    Instruction* b = add->AddInstruction(Instruction::CreateParameter(1, scalar));
    add->set_root(add->AddInstruction(Instruction::Create(Opcode::kAdd, scalar, {a, b})));
    std::vector<int64_t> dims = v->shape().dims();
    dims.erase(dims.begin() + dim);
    Instruction* r = simp::AddNew(anchor_, Opcode::kReduce, WithDims(dims), {v, C(0.0, &scalar)});
    r->attrs().dimensions = {dim};
    r->mutable_called_computations() = {add};
    return r;
  }
  // Phi(x) = 0.5 (1 + erf(x / sqrt 2)), the standard normal CDF.
  Instruction* NormalCdf(Instruction* x) {
    Instruction* e = U(Opcode::kErf, Mul(x, C(std::numbers::sqrt2 / 2.0)));
    return Mul(C(0.5), Add(C(1.0), e));
  }

 private:
  Instruction& anchor_;
  PrimitiveType type_;
  Shape s_;
};

// ---- transfer: an identity that may change the shape (runtime/kernels/custom_call.cc).
bool MatchTransfer(const Instruction& i) {
  if (!IsTarget(i, "AwsNeuronTransferWithStaticRing") || i.operand_count() != 1) return false;
  const Shape& in = i.operand(0)->shape();
  const Shape& out = i.shape();
  if (!in.IsArray() || !out.IsArray() || in.element_type() != out.element_type()) return false;
  if (simp::SameLayoutShape(in, out)) return true;
  // A reshape is the kernel's copy of the bytes only when both are row-major.
  return in.ElementCount() == out.ElementCount() && in.HasDefaultLayout() && out.HasDefaultLayout();
}
Instruction* ExpandTransfer(Instruction& i) {
  Instruction* x = i.operand(0);
  if (simp::SameLayoutShape(x->shape(), i.shape())) return x;
  return simp::AddNew(i, Opcode::kReshape, i.shape(), {x});
}

// ---- the GELU family: elementwise, x (and grad) with the result's dimensions.
bool MatchGelu(const Instruction& i, std::string_view target, bool allow_grad) {
  if (!IsTarget(i, target) || !RowMajorFloat(i.shape())) return false;
  const int n = static_cast<int>(i.operand_count());
  if (n != 1 && !(allow_grad && n == 2)) return false;
  for (const Instruction* op : i.operands()) {
    if (!RowMajorFloat(op->shape()) || op->shape().dims() != i.shape().dims()) return false;
  }
  return true;
}
Instruction* ExpandGelu(Instruction& i) {  // 0.5 x (1 + erf(x / sqrt 2)) = x Phi(x)
  Builder b(i);
  Instruction* x = b.In(i.operand(0));
  return b.Out(b.Mul(x, b.NormalCdf(x)));
}
Instruction* ExpandGeluTanh(Instruction& i) {
  Builder b(i);
  Instruction* x = b.In(i.operand(0));
  Instruction* cube = b.Mul(b.Mul(x, x), x);
  Instruction* inner = b.Mul(b.C(std::sqrt(2.0 / std::numbers::pi)), b.Add(x, b.Mul(b.C(0.044715), cube)));
  Instruction* t = b.U(Opcode::kTanh, inner);
  return b.Out(b.Mul(b.Mul(b.C(0.5), x), b.Add(b.C(1.0), t)));
}
Instruction* ExpandGeluBackward(Instruction& i) {  // Phi(x) + x phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi)
  Builder b(i);
  const bool with_grad = i.operand_count() == 2;  // (grad, x), as the kernel reads them
  Instruction* x = b.In(i.operand(with_grad ? 1 : 0));
  Instruction* pdf =
      b.Mul(b.U(Opcode::kExp, b.Mul(b.C(-0.5), b.Mul(x, x))), b.C(1.0 / std::sqrt(2.0 * std::numbers::pi)));
  Instruction* r = b.Add(b.NormalCdf(x), b.Mul(x, pdf));
  if (with_grad) r = b.Mul(r, b.In(i.operand(0)));
  return b.Out(r);
}

// ---- rms_norm: the normalized dimension as the kernel finds it; -1 when none.
int64_t RmsNormDim(const Instruction& i) {
  const Shape& xs = i.operand(0)->shape();
  const int64_t wn = i.operand(1)->shape().ElementCount();
  int64_t dim = -1;
  const std::string& cfg = i.attrs().backend_config;
  if (!cfg.empty() && cfg.find_first_not_of("0123456789") == std::string::npos && cfg.size() < 4) {
    dim = std::stoll(cfg);
  } else {
    for (int64_t d = 0; d < xs.rank(); ++d) {
      if (xs.dim(d) == wn) {
        dim = d;
        break;
      }
    }
  }
  return dim >= 0 && dim < xs.rank() && xs.dim(dim) == wn ? dim : -1;
}
bool MatchRmsNorm(const Instruction& i) {
  if (!IsTarget(i, "AwsNeuronRmsNorm") || !RowMajorFloat(i.shape())) return false;
  if (i.operand_count() != 2 && i.operand_count() != 3) return false;
  for (const Instruction* op : i.operands()) {
    if (!RowMajorFloat(op->shape())) return false;
  }
  const Shape& xs = i.operand(0)->shape();
  if (xs.dims() != i.shape().dims() || xs.rank() < 1) return false;
  if (i.operand_count() == 3 && i.operand(2)->shape().ElementCount() != 1) return false;
  return RmsNormDim(i) >= 0;
}
// In f64, as the kernel computes: in f32 the sum of squares and rsqrt move a deep f16 model's
// outputs past validation (entangle_llama_decode_tp1_l8, 8 layers, 17 norms: up to 7% off).
Instruction* ExpandRmsNorm(Instruction& i) {
  Builder b(i, /*f64=*/true);
  const int64_t dim = RmsNormDim(i);
  const Shape& xs = i.operand(0)->shape();
  const int64_t len = xs.dim(dim);
  std::vector<int64_t> kept;  // x's dims other than `dim`, for the broadcast of the reduced value
  for (int64_t d = 0; d < xs.rank(); ++d) {
    if (d != dim) kept.push_back(d);
  }
  Instruction* x = b.In(i.operand(0));
  Instruction* sum = b.SumOver(b.Mul(x, x), dim);
  const Shape& rs = sum->shape();
  Instruction* eps = nullptr;
  if (i.operand_count() == 3) {
    Instruction* e = i.operand(2);
    if (e->shape().rank() != 0) e = b.Reshape(e, {});
    eps = b.Broadcast(b.In(e), rs, {});
  } else {
    eps = b.C(1e-6, &rs);
  }
  Instruction* mean = b.B(Opcode::kDivide, sum, b.C(static_cast<double>(len), &rs));
  Instruction* r = b.U(Opcode::kRsqrt, b.Add(mean, eps));
  Instruction* w = i.operand(1);
  if (w->shape().dims() != std::vector<int64_t>{len}) w = b.Reshape(w, {len});
  Instruction* out = b.Mul(b.Mul(x, b.Broadcast(r, b.shape(), kept)), b.Broadcast(b.In(w), b.shape(), {dim}));
  return b.Out(out);
}

xla::Rule MakeRule(std::string name, std::function<bool(const Instruction&)> match,
                   std::function<Instruction*(Instruction&)> apply) {
  return xla::Rule{std::move(name), std::move(match), std::move(apply), /*default_choice=*/0};
}

}  // namespace

std::unique_ptr<Pass> CreateCustomCallExpander() {
  return xla::MakeRulePass(
      "custom-call-expander",
      {MakeRule("transfer", MatchTransfer, ExpandTransfer),
       MakeRule("gelu", [](const Instruction& i) { return MatchGelu(i, "AwsNeuronGelu", false); }, ExpandGelu),
       MakeRule("gelu_tanh", [](const Instruction& i) { return MatchGelu(i, "AwsNeuronGeluApprxTanh", false); },
                ExpandGeluTanh),
       MakeRule("gelu_backward", [](const Instruction& i) { return MatchGelu(i, "AwsNeuronGeluBackward", true); },
                ExpandGeluBackward),
       MakeRule("rms_norm", MatchRmsNorm, ExpandRmsNorm)});
}

}  // namespace hlox
