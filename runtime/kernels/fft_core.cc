// Radix-2 and Bluestein transforms for FftPlan (see kernels/fft_core.h).
#include "runtime/kernels/fft_core.h"

#include <cmath>
#include <utility>

namespace hlox::rt {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// exp(-2 pi i k / m) for k < m/2, each computed directly (no recurrence, so no drift).
std::vector<std::complex<double>> Twiddles(int64_t m) {
  std::vector<std::complex<double>> w(m / 2);
  for (int64_t k = 0; k < m / 2; ++k) {
    const double a = -2.0 * kPi * static_cast<double>(k) / static_cast<double>(m);
    w[k] = {std::cos(a), std::sin(a)};
  }
  return w;
}

}  // namespace

FftPlan::FftPlan(int64_t n) : n_(n) {
  if (IsPowerOfTwo(n)) {
    twiddle_ = Twiddles(n);
    return;
  }
  m_ = 1;
  while (m_ < 2 * n - 1) m_ <<= 1;
  twiddle_ = Twiddles(m_);
  chirp_.resize(n);
  for (int64_t t = 0; t < n; ++t) {
    // t^2 mod 2n keeps the angle small and exact for large t.
    const int64_t q = (t * t) % (2 * n);
    const double a = -kPi * static_cast<double>(q) / static_cast<double>(n);
    chirp_[t] = {std::cos(a), std::sin(a)};
  }
  chirp_hat_.assign(m_, {0.0, 0.0});
  chirp_hat_[0] = std::conj(chirp_[0]);
  for (int64_t t = 1; t < n; ++t) chirp_hat_[t] = chirp_hat_[m_ - t] = std::conj(chirp_[t]);
  Radix2(chirp_hat_.data(), m_);
}

void FftPlan::Radix2(std::complex<double>* data, int64_t m) const {
  for (int64_t i = 1, j = 0; i < m; ++i) {  // bit-reversal permutation
    int64_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(data[i], data[j]);
  }
  const int64_t tw_len = static_cast<int64_t>(twiddle_.size()) * 2;  // twiddle_ serves length tw_len
  for (int64_t len = 2; len <= m; len <<= 1) {
    const int64_t half = len / 2, step = tw_len / len;
    for (int64_t s = 0; s < m; s += len) {
      for (int64_t k = 0; k < half; ++k) {
        const std::complex<double> u = data[s + k];
        const std::complex<double> v = data[s + k + half] * twiddle_[k * step];
        data[s + k] = u + v;
        data[s + k + half] = u - v;
      }
    }
  }
}

void FftPlan::Forward(std::complex<double>* data, std::vector<std::complex<double>>& scratch) const {
  if (n_ <= 1) return;
  if (m_ == 0) {
    Radix2(data, n_);
    return;
  }
  // With c[t] = exp(-pi i t^2 / n) and t k = (t^2 + k^2 - (k - t)^2) / 2:
  // X[k] = c[k] * sum_t (x[t] c[t]) conj(c[k - t]), a convolution done circularly at length m_.
  scratch.assign(m_, {0.0, 0.0});
  for (int64_t t = 0; t < n_; ++t) scratch[t] = data[t] * chirp_[t];
  Radix2(scratch.data(), m_);
  for (int64_t k = 0; k < m_; ++k) scratch[k] = std::conj(scratch[k] * chirp_hat_[k]);
  Radix2(scratch.data(), m_);  // inverse by conjugation: conj(F(conj(y))) / m
  const double inv_m = 1.0 / static_cast<double>(m_);
  for (int64_t k = 0; k < n_; ++k) data[k] = std::conj(scratch[k]) * inv_m * chirp_[k];
}

void FftPlan::Inverse(std::complex<double>* data, std::vector<std::complex<double>>& scratch) const {
  for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]);
  Forward(data, scratch);
  const double inv_n = 1.0 / static_cast<double>(n_);
  for (int64_t i = 0; i < n_; ++i) data[i] = std::conj(data[i]) * inv_n;
}

}  // namespace hlox::rt
