// fft: XLA's four kinds over the innermost fft_length.size() (1 to 3) dimensions; the leading
// dimensions are batch. FFT and IFFT map complex to complex (IFFT scales by 1/N); RFFT maps
// real to complex keeping the last dimension's first fft_length/2+1 coefficients; IRFFT maps
// those back to real (1/N scaled), reading the input as the half of a Hermitian spectrum, so
// the imaginary parts of its DC and (even length) Nyquist terms are ignored, as NumPy's irfft
// does. All arithmetic is in complex<double> whatever the element type; lines along an axis
// run in parallel, each independently, so the bits do not depend on the thread count.
#include <complex>
#include <vector>

#include "runtime/kernels/fft_core.h"
#include "runtime/kernels/scalar_access.h"

namespace hlox::rt {
namespace {

using Cd = std::complex<double>;

enum class FftKind { kFft, kIfft, kRfft, kIrfft };

bool ParseKind(const std::string& s, FftKind* kind) {
  if (s == "FFT" || s.empty()) *kind = FftKind::kFft;  // the printer omits the default
  else if (s == "IFFT") *kind = FftKind::kIfft;
  else if (s == "RFFT") *kind = FftKind::kRfft;
  else if (s == "IRFFT") *kind = FftKind::kIrfft;
  else return false;
  return true;
}

bool IsFftReal(PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; }

// The whole buffer as complex<double> (real types get zero imaginary parts).
std::vector<Cd> LoadComplex(const Buffer& b) {
  const int64_t n = b.element_count();
  std::vector<Cd> v(n);
  switch (b.shape().element_type()) {
    case PrimitiveType::kC64:
      for (int64_t i = 0; i < n; ++i) v[i] = Cd(b.as<std::complex<float>>()[i]);
      break;
    case PrimitiveType::kC128:
      for (int64_t i = 0; i < n; ++i) v[i] = b.as<Cd>()[i];
      break;
    case PrimitiveType::kF32:
      for (int64_t i = 0; i < n; ++i) v[i] = Cd(b.as<float>()[i], 0.0);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) v[i] = Cd(b.as<double>()[i], 0.0);
      break;
  }
  return v;
}

// Stores v into b: complex types whole, real types the real parts.
void StoreComplex(const std::vector<Cd>& v, Buffer& b) {
  const int64_t n = b.element_count();
  switch (b.shape().element_type()) {
    case PrimitiveType::kC64:
      for (int64_t i = 0; i < n; ++i) b.as<std::complex<float>>()[i] = std::complex<float>(v[i]);
      break;
    case PrimitiveType::kC128:
      for (int64_t i = 0; i < n; ++i) b.as<Cd>()[i] = v[i];
      break;
    case PrimitiveType::kF32:
      for (int64_t i = 0; i < n; ++i) b.as<float>()[i] = static_cast<float>(v[i].real());
      break;
    default:
      for (int64_t i = 0; i < n; ++i) b.as<double>()[i] = v[i].real();
      break;
  }
}

// Transforms every line of `data` (row-major, `dims`) along `axis` in place.
void TransformAxis(std::vector<Cd>& data, const std::vector<int64_t>& dims, size_t axis, bool inverse,
                   KernelContext& ctx) {
  const int64_t n = dims[axis];
  if (n <= 1 || data.empty()) {
    return;  // a length-1 DFT (and its 1/1 scaling) is the identity
  }
  int64_t stride = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) stride *= dims[d];
  const int64_t lines = static_cast<int64_t>(data.size()) / n;
  const FftPlan plan(n);
  KernelParallelFor(ctx, lines, 1, [&](int64_t begin, int64_t end) {
    std::vector<Cd> line(n), scratch;
    for (int64_t l = begin; l < end; ++l) {
      const int64_t base = (l / stride) * n * stride + l % stride;
      for (int64_t i = 0; i < n; ++i) line[i] = data[base + i * stride];
      if (inverse) plan.Inverse(line.data(), scratch);
      else plan.Forward(line.data(), scratch);
      for (int64_t i = 0; i < n; ++i) data[base + i * stride] = line[i];
    }
  });
}

// Copies the last axis of `src` (dims `sd`) into a new array whose last axis has length
// `out_n`: truncated, or (hermitian) extended to the full spectrum X[j] = conj(X[out_n - j]).
std::vector<Cd> ResizeLastAxis(const std::vector<Cd>& src, int64_t sn, int64_t out_n, bool hermitian) {
  const int64_t rows = sn == 0 ? 0 : static_cast<int64_t>(src.size()) / sn;
  std::vector<Cd> out(rows * out_n);
  for (int64_t r = 0; r < rows; ++r) {
    const Cd* s = src.data() + r * sn;
    Cd* o = out.data() + r * out_n;
    for (int64_t j = 0; j < out_n; ++j) {
      if (j < sn) o[j] = s[j];
      else if (hermitian) o[j] = std::conj(s[out_n - j]);
    }
  }
  return out;
}

// Checks operand/result types and dims against the kind and fft_length; "" when fine.
std::string ShapeProblem(FftKind kind, const Shape& in, const Shape& out, const std::vector<int64_t>& len) {
  const bool real_in = kind == FftKind::kRfft, real_out = kind == FftKind::kIrfft;
  if (real_in ? !IsFftReal(in.element_type()) : !IsComplex(in.element_type())) return "operand element type";
  if (real_out ? !IsFftReal(out.element_type()) : !IsComplex(out.element_type())) return "result element type";
  const int64_t k = static_cast<int64_t>(len.size());
  if (k < 1 || k > 3 || in.rank() < k || out.rank() != in.rank()) return "fft_length needs 1 to 3 entries within the rank";
  const Shape& full = real_out ? out : in;  // the side whose last k dims equal fft_length
  const Shape& other = real_out ? in : out;
  for (int64_t d = 0; d < full.rank(); ++d) {
    const int64_t j = d - (full.rank() - k);
    if (j >= 0 && full.dim(d) != len[j]) return "dims do not match fft_length";
    const bool half = (kind == FftKind::kRfft || kind == FftKind::kIrfft) && d == full.rank() - 1;
    const int64_t want = half ? (len[k - 1] == 0 ? 0 : len[k - 1] / 2 + 1) : full.dim(d);
    if (other.dim(d) != want) return "operand and result dims disagree";
  }
  return "";
}

}  // namespace

absl::StatusOr<Value> FftKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* a, ArrayOperand(instr, operands, 0));
  FftKind kind;
  if (!ParseKind(instr.attrs().fft_type, &kind)) return KernelError(instr, "unknown fft_type");
  const std::vector<int64_t>& len = instr.attrs().fft_length;
  const Shape& os = instr.shape();
  if (!os.IsArray()) return KernelError(instr, "result must be an array");
  const std::string problem = ShapeProblem(kind, a->shape(), os, len);
  if (!problem.empty()) return KernelError(instr, problem);
  const size_t rank = static_cast<size_t>(os.rank()), k = len.size();
  std::vector<Cd> data = LoadComplex(*a);
  std::vector<int64_t> dims = a->shape().dims();
  const bool inverse = kind == FftKind::kIfft || kind == FftKind::kIrfft;
  // IRFFT finishes with the last axis (the half spectrum); the others go innermost-last.
  const size_t complex_axes_end = kind == FftKind::kIrfft ? rank - 1 : rank;
  for (size_t axis = rank - k; axis < complex_axes_end; ++axis) TransformAxis(data, dims, axis, inverse, ctx);
  if (kind == FftKind::kRfft) {
    data = ResizeLastAxis(data, dims[rank - 1], os.dim(rank - 1), /*hermitian=*/false);
  } else if (kind == FftKind::kIrfft) {
    data = ResizeLastAxis(data, dims[rank - 1], os.dim(rank - 1), /*hermitian=*/true);
    dims[rank - 1] = os.dim(rank - 1);
    TransformAxis(data, dims, rank - 1, /*inverse=*/true, ctx);
  }
  Value out = NewArray(os);
  StoreComplex(data, *out.array);
  return out;
}

}  // namespace hlox::rt
