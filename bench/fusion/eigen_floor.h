// The compute floor that the fusion benches hold hlox's vector math against: Eigen's array
// tanh, exp, logistic and log (vectorized packet math that hlox does not contain), compiled
// once per instruction-set level (common/cpu_isa.h) with that level's compiler flags. The
// default build targets the portable baseline, so each level is its own shared object built
// from eigen_floor.cc (bench/fusion/CMakeLists.txt) with hidden visibility: only its entry
// point is exported, so no Eigen or library inline function compiled there with AVX2 or
// AVX-512 can stand in for the baseline copy the rest of the program uses (with one static
// link the linker keeps one copy of each inline function, from whichever object it likes).
// Loading the AVX-512 object on a CPU without AVX-512 is safe: nothing in it runs unless
// called, but for its load-time initializer, <iostream>'s stream setup (reached through
// common/cpu_isa.h's absl headers), which is a plain call (no vector instructions: checked with
// objdump -d on the built object).
#pragma once

#include <cstdint>

#include "common/cpu_isa.h"

namespace hlox::bench {

// Eigen's functions built for one level; each sets o[i] = f(a[i]) for i < n (a and o may be
// the same array).
struct EigenFloor {
  const char* flags;  // the extra compiler flags it was built with ("" for the baseline)
  void (*tanh)(const float* a, float* o, int64_t n);
  void (*exp)(const float* a, float* o, int64_t n);
  void (*logistic)(const float* a, float* o, int64_t n);
  void (*log)(const float* a, float* o, int64_t n);
};

}  // namespace hlox::bench

// The entry points of the three shared objects (eigen_floor.cc with HLOX_FLOOR_ENTRY).
extern "C" const hlox::bench::EigenFloor* hlox_eigen_floor_generic();
extern "C" const hlox::bench::EigenFloor* hlox_eigen_floor_avx2();
extern "C" const hlox::bench::EigenFloor* hlox_eigen_floor_avx512();

namespace hlox::bench {

// The floor built for `level`; call its functions only for levels <= CpuIsa().
inline const EigenFloor& EigenFloorFor(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return *hlox_eigen_floor_generic();
    case IsaLevel::kAvx2: return *hlox_eigen_floor_avx2();
    case IsaLevel::kAvx512: return *hlox_eigen_floor_avx512();
  }
  return *hlox_eigen_floor_generic();
}

}  // namespace hlox::bench
