// One-dimensional discrete Fourier transforms in double precision, the core of the fft
// kernel. A plan fixes the length: powers of two use an iterative radix-2 Cooley-Tukey
// transform; any other length uses Bluestein's algorithm (a chirp convolution done with a
// power-of-two transform), so every length costs O(n log n). A plan is read-only once built,
// so threads may share it; each call works on its own line of data.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace hlox::rt {

class FftPlan {
 public:
  // A plan for transforms of length n (n >= 1).
  explicit FftPlan(int64_t n);

  int64_t size() const { return n_; }
  // Replaces data[0..n) by its unscaled forward DFT, X[k] = sum_t x[t] exp(-2 pi i t k / n).
  // `scratch` is reused between calls to avoid allocation.
  void Forward(std::complex<double>* data, std::vector<std::complex<double>>& scratch) const;
  // Replaces data[0..n) by its inverse DFT scaled by 1/n (NumPy's ifft).
  void Inverse(std::complex<double>* data, std::vector<std::complex<double>>& scratch) const;

 private:
  int64_t n_;
  // Radix-2 twiddles exp(-2 pi i k / m) for k < m/2, m = n_ (power of two) or the Bluestein
  // convolution length.
  std::vector<std::complex<double>> twiddle_;
  // Bluestein only (empty for powers of two): the chirp exp(-pi i t^2 / n) for t < n and the
  // forward transform of the conjugate chirp, zero-padded and wrapped to length m_.
  int64_t m_ = 0;
  std::vector<std::complex<double>> chirp_;
  std::vector<std::complex<double>> chirp_hat_;

  void Radix2(std::complex<double>* data, int64_t m) const;
};

}  // namespace hlox::rt
