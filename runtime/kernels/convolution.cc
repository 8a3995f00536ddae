// Convolution with XLA's full semantics: any dim_labels (1-3 spatial dims, or none), feature
// groups (grouped/depthwise), batch groups, low/high padding (negative too), lhs (base) and rhs
// (window) dilation, window strides and window reversal.
//
// This file validates the instruction and brings operands to the canonical dense layouts of
// conv/paths.h (NHWC input used in place when it already is; others transposed by the
// strided copy engine), then runs the depthwise direct loop (conv/depthwise.cc) or the
// im2col/pointwise GEMM path (conv/im2col_gemm.cc); NCHW-style convolutions (spatial dims
// innermost) skip all of that and run on their own layouts (conv/planes.cc, and
// conv/plane_filter.cc for the weight gradients of stride-1 ones). f16/bf16/f32 compute in f32, f64 and integers in
// f64. Work splits depend only on the shapes, so results are identical for any thread count.
#include <algorithm>
#include <complex>
#include <vector>

#include "runtime/conv/paths.h"
#include "runtime/conv/tuning.h"
#include "runtime/core/strided_copy.h"
#include "runtime/isa/isa_kernels.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

template <typename T>
constexpr PrimitiveType StorageType() {
  return std::is_same_v<T, float> ? PrimitiveType::kF32 : PrimitiveType::kF64;
}

template <typename T>
std::vector<T> Load(const Buffer& b) {
  if constexpr (std::is_same_v<T, float>) {
    return ToFloats(b);
  } else {
    return ToDoubles(b);
  }
}

// f16/bf16/f32 inputs compute in f32 (unless the result is f64); everything else in f64.
bool ComputesInF32(PrimitiveType input, PrimitiveType result) {
  return (input == PrimitiveType::kF32 || input == PrimitiveType::kF16 || input == PrimitiveType::kBF16) &&
         result != PrimitiveType::kF64;
}

bool IsDepthwise(const ConvGeometry& g) { return g.ck == 1 && g.groups == g.c && g.groups > 1 && g.batch_groups == 1; }

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// The operand in compute type T with dims permuted (result dim j = operand dim perm[j]).
// Returns a pointer into `b` itself when no conversion or permutation is needed; otherwise
// into `storage`, pooled scratch.
template <typename T>
const T* Canonical(const Buffer& b, const std::vector<int64_t>& perm, BufferPtr& storage,
                   ThreadPool* pool) {
  const bool same_type = b.shape().element_type() == StorageType<T>();
  if (same_type && IsIdentity(perm)) return b.template as<T>();
  storage = ScratchBuffer(static_cast<int64_t>(sizeof(T)) * b.element_count());
  if (same_type) {
    TransposeCopy(b.shape().dims(), perm, sizeof(T), b.data(), storage->data(), pool);
  } else {
    std::vector<T> v = Load<T>(b);
    TransposeCopy(b.shape().dims(), perm, sizeof(T), reinterpret_cast<const uint8_t*>(v.data()),
                  storage->data(), pool);
  }
  return storage->template as<T>();
}

// The convolution of `instr` over real operands into a result of shape `os` (the
// instruction's own shape, or a real part of it for complex convolutions).
// `into`, when set, is the result buffer (of shape os); `done`, when set, is told as parts of
// the result are final on the direct NHWC-style paths (conv/paths.h) where the parts are wide
// enough to be worth it, and *reported says whether it was (else the caller takes the whole
// result).
template <typename T>
absl::StatusOr<Value> Convolve(const Instruction& instr, const Buffer& lhs, const Buffer& rhs, const Shape& os,
                               const ConvGeometry& g, KernelContext& ctx, const ConvTuning& tuning,
                               const DotEpilogue* done = nullptr, BufferPtr into = nullptr,
                               bool* reported = nullptr) {
  auto result = [&]() { return into != nullptr ? Value::Array(into) : NewArray(os); };
  const ConvDimensionNumbers& dn = *instr.attrs().conv;
  const int64_t S = g.spatial;
  ThreadPool* pool = tuning.threads == 1 ? nullptr : ctx.pool;
  const ConvAlgorithm algo = tuning.algorithm;
  if constexpr (std::is_same_v<T, float>) {
    if (lhs.shape().element_type() == PrimitiveType::kF32 && rhs.shape().element_type() == PrimitiveType::kF32 &&
        os.element_type() == PrimitiveType::kF32) {
      // A tuned plane algorithm runs when it can (the level has the packed GEMM); the default
      // path otherwise. A tuned tiles/wide-k choice skips the plane paths.
      const bool has_gemm = Kernels().gemm != nullptr;
      if (algo == ConvAlgorithm::kAuto ? PlaneFilterConvApplies(dn, g, os.rank())
                                       : algo == ConvAlgorithm::kPlaneFilter && has_gemm &&
                                             PlaneFilterConvPossible(dn, g, os.rank())) {
        Value out = result();
        PlaneFilterConv(dn, g, lhs.template as<float>(), lhs.shape().dims(), rhs.template as<float>(),
                        rhs.shape().dims(), out.array->template as<float>(), os.dims(), pool);
        return out;
      }
      if (algo == ConvAlgorithm::kAuto ? PlaneConvApplies(dn, g, os.rank())
                                       : algo == ConvAlgorithm::kPlanes && has_gemm &&
                                             PlaneConvPossible(dn, g, os.rank())) {
        Value out = result();
        PlaneConv(dn, g, lhs.template as<float>(), lhs.shape().dims(), rhs.template as<float>(), rhs.shape().dims(),
                  out.array->template as<float>(), os.dims(), pool, done);
        if (reported != nullptr) *reported = done != nullptr;
        return out;
      }
    }
  }
  std::vector<int64_t> lperm{dn.input_batch}, kperm;
  for (int64_t d = 0; d < S; ++d) lperm.push_back(dn.input_spatial[d]);
  lperm.push_back(dn.input_feature);
  for (int64_t d = 0; d < S; ++d) kperm.push_back(dn.kernel_spatial[d]);
  kperm.push_back(dn.kernel_input_feature);
  kperm.push_back(dn.kernel_output_feature);
  BufferPtr in_c, k_c;
  const T* in_data = Canonical<T>(lhs, lperm, in_c, pool);
  const T* k_data = Canonical<T>(rhs, kperm, k_c, pool);

  const ConvIndex ix = MakeConvIndex(g);
  // Canonical output dim operm[j] is result dim j.
  std::vector<int64_t> operm(os.rank());
  operm[dn.output_batch] = 0;
  for (int64_t d = 0; d < S; ++d) operm[dn.output_spatial[d]] = 1 + d;
  operm[dn.output_feature] = S + 1;
  const bool out_direct = IsIdentity(operm) && os.element_type() == StorageType<T>();
  Value out = result();
  // Every path writes every output element, so pooled scratch needs no clearing.
  BufferPtr out_scratch;
  if (!out_direct) out_scratch = ScratchBuffer(static_cast<int64_t>(sizeof(T)) * ix.nout * ix.P * g.o);
  T* out_data = out_direct ? out.array->template as<T>() : out_scratch->template as<T>();
  // Parts are reported where they are wide: depthwise output rows, the tiles of ungrouped
  // im2col convolutions (runs of whole output rows), and the GEMM's parts of an ungrouped
  // pointwise convolution with 64 or more output features (a part holds rows of at least a
  // few B panels). Wide-k and grouped convolutions report nothing.
  const bool ungrouped = g.groups == 1 && g.batch_groups == 1;
  const bool pointwise = algo == ConvAlgorithm::kAuto && IsPointwise(g);
  const bool wide_k = algo == ConvAlgorithm::kWideK || (algo == ConvAlgorithm::kAuto && !pointwise && PreferWideK(ix));
  const bool report = out_direct && (IsDepthwise(g) || (ungrouped && !wide_k && (!pointwise || g.o >= 64)));
  const DotEpilogue* direct_done = report ? done : nullptr;
  if (reported != nullptr) *reported = direct_done != nullptr;
  if (IsDepthwise(g)) {
    DepthwiseConv(ix, in_data, k_data, out_data, pool, direct_done);
  } else {
    const bool forced = algo == ConvAlgorithm::kTiles || algo == ConvAlgorithm::kWideK;
    GemmConv(ix, in_data, k_data, out_data, pool, forced ? algo : ConvAlgorithm::kAuto, direct_done);
  }
  if (out_direct) return out;
  std::vector<int64_t> cdims{ix.nout};
  for (int64_t d = 0; d < S; ++d) cdims.push_back(g.out[d]);
  cdims.push_back(g.o);
  if (os.element_type() == StorageType<T>()) {
    TransposeCopy(cdims, operm, sizeof(T), out_scratch->data(), out.array->data(), pool);
    return out;
  }
  std::vector<T> res = Permute(std::vector<T>(out_data, out_data + ix.nout * ix.P * g.o), cdims, operm);
  if constexpr (std::is_same_v<T, float>) {
    FromFloats(res, *out.array);
  } else {
    FromDoubles(res, *out.array);
  }
  return out;
}

// One part (real or imaginary) of a complex buffer, as an f32 (c64) or f64 (c128) array.
template <typename R>
Value ComplexPart(const Buffer& b, bool imag) {
  Value out = NewArray(Shape(std::is_same_v<R, float> ? PrimitiveType::kF32 : PrimitiveType::kF64, b.shape().dims()));
  R* o = out.array->template as<R>();
  const int64_t n = b.element_count();
  if (b.shape().element_type() == PrimitiveType::kC64) {
    const auto* p = b.as<std::complex<float>>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(imag ? p[i].imag() : p[i].real());
  } else {
    const auto* p = b.as<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(imag ? p[i].imag() : p[i].real());
  }
  return out;
}

// A complex convolution as four real ones over the parts, in the compute type R (f32 for c64,
// f64 when any operand or the result is c128): re = ar*br - ai*bi, im = ar*bi + ai*br.
template <typename R>
absl::StatusOr<Value> ComplexConvolve(const Instruction& instr, const Buffer& lhs, const Buffer& rhs,
                                      const ConvGeometry& g, KernelContext& ctx, const ConvTuning& tuning) {
  const Shape& os = instr.shape();
  const Shape part_shape(std::is_same_v<R, float> ? PrimitiveType::kF32 : PrimitiveType::kF64, os.dims());
  const Value ar = ComplexPart<R>(lhs, false), ai = ComplexPart<R>(lhs, true);
  const Value br = ComplexPart<R>(rhs, false), bi = ComplexPart<R>(rhs, true);
  HLOX_ASSIGN_OR_RETURN(Value rr, Convolve<R>(instr, *ar.array, *br.array, part_shape, g, ctx, tuning));
  HLOX_ASSIGN_OR_RETURN(Value ii, Convolve<R>(instr, *ai.array, *bi.array, part_shape, g, ctx, tuning));
  HLOX_ASSIGN_OR_RETURN(Value ri, Convolve<R>(instr, *ar.array, *bi.array, part_shape, g, ctx, tuning));
  HLOX_ASSIGN_OR_RETURN(Value ir, Convolve<R>(instr, *ai.array, *br.array, part_shape, g, ctx, tuning));
  const R *prr = rr.array->template as<R>(), *pii = ii.array->template as<R>();
  const R *pri = ri.array->template as<R>(), *pir = ir.array->template as<R>();
  Value out = NewArray(os);
  const int64_t n = out.array->element_count();
  if (os.element_type() == PrimitiveType::kC64) {
    auto* o = out.array->template as<std::complex<float>>();
    for (int64_t i = 0; i < n; ++i) o[i] = {static_cast<float>(prr[i] - pii[i]), static_cast<float>(pri[i] + pir[i])};
  } else {
    auto* o = out.array->template as<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) o[i] = {static_cast<double>(prr[i] - pii[i]), static_cast<double>(pri[i] + pir[i])};
  }
  return out;
}

}  // namespace

namespace {

// The kernel's view of a convolution: its geometry from the instruction's attributes and the
// operand shapes, checked (the errors name what is inconsistent).
absl::StatusOr<ConvGeometry> MakeConvGeometry(const Instruction& instr, const Shape& ls, const Shape& ks) {
  if (!instr.attrs().conv.has_value()) return KernelError(instr, "missing dim_labels");
  const ConvDimensionNumbers& dn = *instr.attrs().conv;
  const Shape& os = instr.shape();
  ConvGeometry g;
  g.spatial = static_cast<int64_t>(dn.input_spatial.size());
  const int64_t S = g.spatial;
  auto in_range = [](int64_t d, const Shape& s) { return d >= 0 && d < s.rank(); };
  if (!os.IsArray() || !ls.IsArray() || !ks.IsArray() || ls.rank() != S + 2 || ks.rank() != S + 2 ||
      os.rank() != S + 2 || static_cast<int64_t>(dn.kernel_spatial.size()) != S ||
      static_cast<int64_t>(dn.output_spatial.size()) != S || !in_range(dn.input_batch, ls) ||
      !in_range(dn.input_feature, ls) || !in_range(dn.kernel_input_feature, ks) ||
      !in_range(dn.kernel_output_feature, ks) || !in_range(dn.output_batch, os) ||
      !in_range(dn.output_feature, os)) {
    return KernelError(instr, "dim_labels do not match operand ranks");
  }
  for (int64_t d = 0; d < S; ++d) {
    if (!in_range(dn.input_spatial[d], ls) || !in_range(dn.kernel_spatial[d], ks) ||
        !in_range(dn.output_spatial[d], os)) {
      return KernelError(instr, "spatial dimension out of range");
    }
    g.in.push_back(ls.dim(dn.input_spatial[d]));
    g.k.push_back(ks.dim(dn.kernel_spatial[d]));
    g.out.push_back(os.dim(dn.output_spatial[d]));
  }
  if (instr.attrs().window.has_value()) {
    g.win = instr.attrs().window->dims;
    if (static_cast<int64_t>(g.win.size()) != S) return KernelError(instr, "window rank mismatch");
  } else {
    g.win.resize(S);
    for (int64_t d = 0; d < S; ++d) g.win[d].size = g.k[d];
  }
  for (const WindowDimension& w : g.win) {
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return KernelError(instr, "window strides and dilations must be >= 1");
    }
  }
  g.n = ls.dim(dn.input_batch);
  g.c = ls.dim(dn.input_feature);
  g.ck = ks.dim(dn.kernel_input_feature);
  g.o = ks.dim(dn.kernel_output_feature);
  g.groups = instr.attrs().feature_group_count;
  g.batch_groups = instr.attrs().batch_group_count;
  if (g.groups < 1 || g.batch_groups < 1 || g.c != g.ck * g.groups || g.o % g.groups != 0 ||
      g.o % g.batch_groups != 0 || g.n % g.batch_groups != 0 ||
      os.dim(dn.output_batch) != g.n / g.batch_groups || os.dim(dn.output_feature) != g.o) {
    return KernelError(instr, "inconsistent feature/batch group counts or dimension sizes");
  }
  if (g.groups > 1 && g.batch_groups > 1) {
    return KernelError(instr, "feature_group_count and batch_group_count both > 1");
  }
  return g;
}

}  // namespace

ConvTuning ParseConvTuning(const std::string& config) {
  ConvTuning t;
  int64_t v = 0;
  if (ReadConfigInt(config, "hlox_conv_algo", &v) && v >= 1 && v <= static_cast<int64_t>(ConvAlgorithm::kPlaneFilter)) {
    t.algorithm = static_cast<ConvAlgorithm>(v);
  }
  if (ReadConfigInt(config, "hlox_threads", &v) && v == 1) t.threads = 1;
  return t;
}

std::vector<ConvAlgorithm> ConvAlgorithmsFor(const Instruction& conv) {
  std::vector<ConvAlgorithm> out;
  if (conv.opcode() != Opcode::kConvolution || conv.operand_count() != 2) return out;
  const Shape& ls = conv.operand(0)->shape();
  const Shape& ks = conv.operand(1)->shape();
  absl::StatusOr<ConvGeometry> g = MakeConvGeometry(conv, ls, ks);
  if (!g.ok() || IsDepthwise(*g)) return out;
  if (!IsPointwise(*g)) {
    out.push_back(ConvAlgorithm::kTiles);
    out.push_back(ConvAlgorithm::kWideK);
  }
  const bool f32 = ls.element_type() == PrimitiveType::kF32 && ks.element_type() == PrimitiveType::kF32 &&
                   conv.shape().element_type() == PrimitiveType::kF32;
  const int64_t rank = conv.shape().rank();
  if (f32 && PlaneConvPossible(*conv.attrs().conv, *g, rank)) out.push_back(ConvAlgorithm::kPlanes);
  if (f32 && PlaneFilterConvPossible(*conv.attrs().conv, *g, rank)) out.push_back(ConvAlgorithm::kPlaneFilter);
  return out;
}

absl::StatusOr<bool> ConvolutionInto(const Instruction& conv, const Buffer& lhs, const Buffer& rhs, BufferPtr out,
                                     ThreadPool* pool, const ConvTuning& tuning, const DotEpilogue* done) {
  const Shape& os = conv.shape();
  HLOX_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(conv, lhs.shape(), rhs.shape()));
  const PrimitiveType lt = lhs.shape().element_type(), ot = os.element_type();
  if (out == nullptr || out->shape().dims() != os.dims() || out->shape().element_type() != ot ||
      !IsRealType(lt) || !IsRealType(rhs.shape().element_type()) || !IsRealType(ot)) {
    return absl::InvalidArgumentError(absl::StrCat("convolution ", conv.name(),
                                                   ": needs real operands and a result buffer of its shape"));
  }
  KernelContext ctx;
  ctx.pool = pool;
  bool reported = false;
  absl::StatusOr<Value> r = ComputesInF32(lt, ot)
                                ? Convolve<float>(conv, lhs, rhs, os, g, ctx, tuning, done, out, &reported)
                                : Convolve<double>(conv, lhs, rhs, os, g, ctx, tuning, done, out, &reported);
  if (!r.ok()) return r.status();
  return reported;
}

absl::StatusOr<Value> ConvolutionKernel(const Instruction& instr,
                                        const std::vector<const Value*>& operands,
                                        KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  const Shape& ls = lhs->shape();
  const Shape& ks = rhs->shape();
  const Shape& os = instr.shape();
  HLOX_ASSIGN_OR_RETURN(ConvGeometry g, MakeConvGeometry(instr, ls, ks));
  PrimitiveType lt = ls.element_type(), kt = ks.element_type(), ot = os.element_type();
  // Codegen decisions (passes/fusion/codegen_tuning.cc) ride in the backend_config.
  const ConvTuning tuning =
      instr.attrs().has_backend_config ? ParseConvTuning(instr.attrs().backend_config) : ConvTuning{};
  if (IsComplex(lt) && IsComplex(kt) && IsComplex(ot)) {
    if (lt == PrimitiveType::kC64 && kt == PrimitiveType::kC64 && ot == PrimitiveType::kC64) {
      return ComplexConvolve<float>(instr, *lhs, *rhs, g, ctx, tuning);
    }
    return ComplexConvolve<double>(instr, *lhs, *rhs, g, ctx, tuning);
  }
  if (!IsRealType(lt) || !IsRealType(kt) || !IsRealType(ot)) {
    return absl::UnimplementedError(absl::StrCat("convolution ", instr.name(),
                                                 ": sub-byte, f8 or mixed complex/real element types"));
  }
  if (ComputesInF32(lt, ot)) return Convolve<float>(instr, *lhs, *rhs, os, g, ctx, tuning);
  return Convolve<double>(instr, *lhs, *rhs, os, g, ctx, tuning);
}

}  // namespace hlox::rt
