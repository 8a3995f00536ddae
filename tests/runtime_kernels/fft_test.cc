// fft (FFT, IFFT, RFFT, IRFFT over 1 to 3 innermost dims, with batch dims) checked against a
// plain O(N^2) multi-dimensional DFT on random inputs, for power-of-two and other lengths, c64
// and c128 (f32 and f64 for the real sides); RFFT followed by IRFFT returns the input; the
// bits are the same on 1 and 2 threads; shapes that disagree with fft_length are refused.
#include <cmath>
#include <complex>
#include <cstring>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

using Cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// A buffer of `shape` (c64, c128, f32 or f64) holding v (real parts only for real types).
BufferPtr ComplexBuffer(const Shape& shape, const std::vector<Cd>& v) {
  auto b = std::make_shared<Buffer>(shape);
  for (int64_t i = 0; i < b->element_count(); ++i) {
    switch (shape.element_type()) {
      case PrimitiveType::kC64: b->as<std::complex<float>>()[i] = std::complex<float>(v[i]); break;
      case PrimitiveType::kC128: b->as<Cd>()[i] = v[i]; break;
      case PrimitiveType::kF32: b->as<float>()[i] = static_cast<float>(v[i].real()); break;
      default: b->as<double>()[i] = v[i].real(); break;
    }
  }
  return b;
}

std::vector<Cd> Complexes(const Buffer& b) {
  std::vector<Cd> v(b.element_count());
  for (size_t i = 0; i < v.size(); ++i) {
    switch (b.shape().element_type()) {
      case PrimitiveType::kC64: v[i] = Cd(b.as<std::complex<float>>()[i]); break;
      case PrimitiveType::kC128: v[i] = b.as<Cd>()[i]; break;
      case PrimitiveType::kF32: v[i] = b.as<float>()[i]; break;
      default: v[i] = b.as<double>()[i]; break;
    }
  }
  return v;
}

// Values as they will be after rounding to `t` (so the reference sees the kernel's input).
std::vector<Cd> RandomValues(int64_t n, PrimitiveType t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Cd> v(n);
  const bool real = t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
  const bool single = t == PrimitiveType::kF32 || t == PrimitiveType::kC64;
  for (Cd& x : v) {
    double re = u(rng), im = real ? 0.0 : u(rng);
    if (single) re = static_cast<float>(re), im = static_cast<float>(im);
    x = {re, im};
  }
  return v;
}

// Direct DFT over the last len.size() dims of x (the leading dims are batch): sign -1
// forward, +1 inverse (scaled by 1/N).
std::vector<Cd> NaiveDft(const std::vector<Cd>& x, const std::vector<int64_t>& len, bool inverse) {
  int64_t inner = 1;
  for (int64_t n : len) inner *= n;
  const int64_t batch = inner == 0 ? 0 : static_cast<int64_t>(x.size()) / inner;
  const size_t k = len.size();
  std::vector<Cd> out(x.size());
  std::vector<int64_t> ki(k), ti(k);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t o = 0; o < inner; ++o) {
      for (int64_t r = o, j = static_cast<int64_t>(k) - 1; j >= 0; --j) ki[j] = r % len[j], r /= len[j];
      Cd s = 0;
      for (int64_t t = 0; t < inner; ++t) {
        double phase = 0;
        for (int64_t r = t, j = static_cast<int64_t>(k) - 1; j >= 0; --j) {
          ti[j] = r % len[j], r /= len[j];
          phase += static_cast<double>((ti[j] * ki[j]) % len[j]) / static_cast<double>(len[j]);
        }
        const double a = (inverse ? 2 : -2) * kPi * phase;
        s += x[b * inner + t] * Cd(std::cos(a), std::sin(a));
      }
      out[b * inner + o] = inverse ? s / static_cast<double>(inner) : s;
    }
  }
  return out;
}

// Keeps the first `keep` entries of each last-axis row of length n.
std::vector<Cd> TruncateLast(const std::vector<Cd>& x, int64_t n, int64_t keep) {
  std::vector<Cd> out;
  if (n == 0) return out;
  for (size_t r = 0; r + n <= x.size(); r += n) out.insert(out.end(), x.begin() + r, x.begin() + r + keep);
  return out;
}

std::unique_ptr<Instruction> FftInstr(const Shape& out, const std::string& kind, const std::vector<int64_t>& len) {
  auto instr = Instruction::Create(Opcode::kFft, out, {});
  instr->attrs().fft_type = kind;
  instr->attrs().fft_length = len;
  return instr;
}

// Max |got - want| / max|want|, the error measure used throughout.
double RelError(const std::vector<Cd>& got, const std::vector<Cd>& want) {
  double worst = 0, scale = 1e-300;
  for (const Cd& w : want) scale = std::max(scale, std::abs(w));
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst / scale;
}

struct Case {
  std::vector<int64_t> batch, len;
};
const Case kCases[] = {{{}, {8}},       {{3}, {7}},          {{2}, {1}},        {{2, 2}, {12}},
                       {{}, {4, 6}},    {{2}, {5, 3}},       {{}, {2, 3, 5}},   {{2}, {4, 4, 2}},
                       {{}, {31}},      {{1}, {64}},         {{3}, {0}}};

std::vector<int64_t> Concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(FftKernel, ComplexKindsMatchNaiveDft) {
  std::mt19937_64 rng(5);
  for (PrimitiveType t : {PrimitiveType::kC64, PrimitiveType::kC128}) {
    const double tol = t == PrimitiveType::kC64 ? 1e-6 : 1e-12;
    for (const Case& c : kCases) {
      const std::vector<int64_t> dims = Concat(c.batch, c.len);
      const Shape s(t, dims);
      const std::vector<Cd> x = RandomValues(s.ElementCount(), t, rng);
      for (bool inverse : {false, true}) {
        auto instr = FftInstr(s, inverse ? "IFFT" : "FFT", c.len);
        Value y = RunKernel(&FftKernel, *instr, {ComplexBuffer(s, x)});
        SCOPED_TRACE(::testing::Message() << PrimitiveTypeName(t) << " " << s.ToString() << " inverse " << inverse);
        EXPECT_LE(RelError(Complexes(*y.array), NaiveDft(x, c.len, inverse)), tol);
      }
    }
  }
}

TEST(FftKernel, RealKindsMatchNaiveDftAndRoundTrip) {
  std::mt19937_64 rng(6);
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    const PrimitiveType ct = t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128;
    const double tol = t == PrimitiveType::kF32 ? 1e-6 : 1e-12;
    for (const Case& c : kCases) {
      const std::vector<int64_t> dims = Concat(c.batch, c.len);
      const int64_t n = c.len.back(), half = n == 0 ? 0 : n / 2 + 1;
      std::vector<int64_t> hdims = dims;
      hdims.back() = half;
      const Shape rs(t, dims), hs(ct, hdims);
      const std::vector<Cd> x = RandomValues(rs.ElementCount(), t, rng);
      SCOPED_TRACE(::testing::Message() << rs.ToString());
      auto rfft = FftInstr(hs, "RFFT", c.len);
      Value spec = RunKernel(&FftKernel, *rfft, {ComplexBuffer(rs, x)});
      const std::vector<Cd> want = TruncateLast(NaiveDft(x, c.len, false), n, half);
      EXPECT_LE(RelError(Complexes(*spec.array), want), tol);
      // IRFFT of an exact half spectrum (rounded to ct) gives the real input back.
      auto irfft = FftInstr(rs, "IRFFT", c.len);
      Value back = RunKernel(&FftKernel, *irfft, {ComplexBuffer(hs, want)});
      EXPECT_LE(RelError(Complexes(*back.array), x), tol * 4);
    }
  }
}

// NumPy's irfft ignores the imaginary parts of the DC and Nyquist terms; so does the kernel.
TEST(FftKernel, IrfftIgnoresImaginaryDcAndNyquist) {
  const Shape hs(PrimitiveType::kC128, {3}), rs(PrimitiveType::kF64, {4});
  auto irfft = FftInstr(rs, "IRFFT", {4});
  Value a = RunKernel(&FftKernel, *irfft, {ComplexBuffer(hs, {{1, 0}, {2, 3}, {4, 0}})});
  Value b = RunKernel(&FftKernel, *irfft, {ComplexBuffer(hs, {{1, 5}, {2, 3}, {4, -7}})});
  EXPECT_EQ(Complexes(*a.array), Complexes(*b.array));
  // x[t] = (1 + 2 Re((2+3i) e^{i pi t/2}) + 4 (-1)^t) / 4
  const std::vector<Cd> want = {{2.25, 0}, {-2.25, 0}, {0.25, 0}, {0.75, 0}};
  EXPECT_LE(RelError(Complexes(*a.array), want), 1e-15);
}

TEST(FftKernel, SameBitsOnOneAndTwoThreads) {
  std::mt19937_64 rng(7);
  const Shape s(PrimitiveType::kC64, {16, 12, 10});
  BufferPtr x = ComplexBuffer(s, RandomValues(s.ElementCount(), PrimitiveType::kC64, rng));
  auto instr = FftInstr(s, "FFT", {12, 10});
  Value one = RunKernel(&FftKernel, *instr, {x}, 1), two = RunKernel(&FftKernel, *instr, {x}, 2);
  EXPECT_EQ(0, std::memcmp(one.array->data(), two.array->data(), s.ElementCount() * 8));
}

TEST(FftKernel, RefusesShapesThatDisagreeWithFftLength) {
  const Shape c8(PrimitiveType::kC64, {8}), f8(PrimitiveType::kF32, {8});
  BufferPtr x = ComplexBuffer(c8, std::vector<Cd>(8));
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(c8, "FFT", {4}), {x}).ok());
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(c8, "FFT", {}), {x}).ok());
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(c8, "FFT", {1, 1, 1, 8}), {x}).ok());
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(c8, "RFFT", {8}), {x}).ok());       // complex input
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(f8, "IRFFT", {8}), {x}).ok());      // needs 5 in
  EXPECT_FALSE(TryKernel(&FftKernel, *FftInstr(c8, "DCT", {8}), {x}).ok());
}

}  // namespace
}  // namespace hlox::rt::testing
