// Bench: the cost of the fused loop's transcendental register kernels per 16-lane vector, in
// L1 (a 4096-float block, independent vectors, so throughput rather than latency): the f32
// tanh every path runs (Eigen's rational approximation, one vdivps), runtime/vmath.h's
// divide-free TanhF32 form, Exp16 and Logistic16, and for scale a lone vdivps and 12 FMAs
// (2 FMA ports: 6 cycles). Each variant maps the block then rescales it (x = 0.5 * y, keeping
// values in range), so a "copy" variant gives the loop overhead that the "net" column removes.
// Figures are TSC cycles per vector, best of interleaved rounds (robust to a loaded machine
// only as far as some round runs undisturbed).
// Usage: fusion_kernel_bench [rounds]
// GCC 12 reports false (maybe-)uninitialized warnings inside the AVX-512 intrinsics that
// Eigen's tanh and vmath inline here.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <x86intrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <Eigen/Core>

#include "runtime/vmath.h"

namespace {

#if defined(__AVX512F__)
constexpr int kBlock = 4096;

struct Variant {
  const char* name;
  void (*run)(float*, float*);
  double best = 1e30;
};

// b = F(a) over the block, then a = 0.5 * b.
template <typename F>
void MapBlock(float* a, float* b) {
  F f;
  for (int i = 0; i < kBlock; i += 16) _mm512_store_ps(b + i, f(_mm512_load_ps(a + i)));
  for (int i = 0; i < kBlock; i += 16) {
    _mm512_store_ps(a + i, _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_load_ps(b + i)));
  }
}

struct Copy { __m512 operator()(__m512 x) const { return x; } };
struct EigenTanh {
  __m512 operator()(__m512 x) const { return Eigen::internal::ptanh<Eigen::internal::Packet16f>(x); }
};
struct VmathTanh { __m512 operator()(__m512 x) const { return hlox::rt::vmath::Tanh16(x); } };
struct VmathExp { __m512 operator()(__m512 x) const { return hlox::rt::vmath::Exp16(x); } };
struct VmathLogistic { __m512 operator()(__m512 x) const { return hlox::rt::vmath::Logistic16(x); } };
struct Divide { __m512 operator()(__m512 x) const { return _mm512_div_ps(_mm512_set1_ps(1.0f), x); } };
struct Fma12 {
  __m512 operator()(__m512 x) const {
    __m512 y = x;
    for (int i = 0; i < 12; ++i) y = _mm512_fmadd_ps(y, x, x);
    return y;
  }
};
struct TanhThenExp {
  __m512 operator()(__m512 x) const { return hlox::rt::vmath::Exp16(EigenTanh()(x)); }
};
#endif

int Main(int argc, char** argv) {
#if defined(__AVX512F__)
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 200;
  std::vector<Variant> vs = {
      {"copy (loop overhead)", &MapBlock<Copy>},
      {"tanh (runtime: Eigen)", &MapBlock<EigenTanh>},
      {"tanh (vmath Tanh16)", &MapBlock<VmathTanh>},
      {"exp (vmath Exp16)", &MapBlock<VmathExp>},
      {"logistic (vmath)", &MapBlock<VmathLogistic>},
      {"tanh then exp", &MapBlock<TanhThenExp>},
      {"vdivps alone", &MapBlock<Divide>},
      {"12 FMAs", &MapBlock<Fma12>},
  };
  alignas(64) static float a[kBlock], b[kBlock];
  for (int r = 0; r < rounds; ++r) {
    for (Variant& v : vs) {
      for (int i = 0; i < kBlock; ++i) a[i] = -2.f + 4.f * static_cast<float>(i) / kBlock;
      const uint64_t t0 = __rdtsc();
      for (int k = 0; k < 10; ++k) v.run(a, b);
      const uint64_t t1 = __rdtsc();
      v.best = std::min(v.best, static_cast<double>(t1 - t0) / (10.0 * kBlock / 16));
    }
  }
  std::printf("fusion_kernel_bench: TSC cycles per 16-lane vector in L1, best of %d rounds\n", rounds);
  for (const Variant& v : vs) {
    std::printf("  %-24s %6.2f  net %6.2f\n", v.name, v.best, v.best - vs[0].best);
  }
#else
  (void)argc, (void)argv;
  std::printf("fusion_kernel_bench: needs AVX-512\n");
#endif
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
