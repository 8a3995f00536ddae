// One level's Eigen floor (eigen_floor.h). bench/fusion/CMakeLists.txt compiles this file
// three times, each into its own shared object with hidden visibility, with the level's flags
// and HLOX_FLOOR_ENTRY naming the one exported function. Eigen picks its packet width from
// those flags (SSE 4 lanes, AVX2 8, AVX-512 16); its tanh is a rational approximation (with
// EIGEN_FAST_MATH, the default), exp and log are range reduction plus a polynomial, logistic
// its own float approximation.
// GCC 12 reports false maybe-uninitialized warnings inside its own AVX-512 intrinsics headers
// as Eigen's packet math inlines them.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>

#include "bench/fusion/eigen_floor.h"

#ifndef HLOX_FLOOR_ENTRY
#error "HLOX_FLOOR_ENTRY must name this level's entry point"
#endif
#ifndef HLOX_FLOOR_FLAGS
#define HLOX_FLOOR_FLAGS ""
#endif

namespace {

using Out = Eigen::Map<Eigen::ArrayXf>;
using In = Eigen::Map<const Eigen::ArrayXf>;

void Tanh(const float* a, float* o, int64_t n) { Out(o, n) = In(a, n).tanh(); }
void Exp(const float* a, float* o, int64_t n) { Out(o, n) = In(a, n).exp(); }
void Logistic(const float* a, float* o, int64_t n) { Out(o, n) = In(a, n).logistic(); }
void Log(const float* a, float* o, int64_t n) { Out(o, n) = In(a, n).log(); }

constexpr hlox::bench::EigenFloor kFloor = {HLOX_FLOOR_FLAGS, &Tanh, &Exp, &Logistic, &Log};

}  // namespace

extern "C" __attribute__((visibility("default"))) const hlox::bench::EigenFloor* HLOX_FLOOR_ENTRY() {
  return &kFloor;
}
