// The instruction-set level the runtime's kernels use. One build runs on any x86-64 CPU: the
// default build targets x86-64-v2, and kernels that matter exist once per level (AVX-512,
// AVX2+FMA, generic), the best one the running CPU supports picked at start-up from cpuid.
// HLOX_ISA=avx512|avx2|generic in the environment (or SetActiveIsa) selects a lower level
// than the CPU has, so one machine can run and test every path below its own. The level is
// part of a measurement's identity: costs measured at different levels are not comparable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hlox {

// Ordered: a level includes everything below it.
enum class IsaLevel : uint8_t {
  kGeneric = 0,  // x86-64-v2 (SSE4.2): portable C++, compiler-vectorized
  kAvx2 = 1,     // AVX2 + FMA + F16C + BMI2 (x86-64-v3), 8 f32 lanes, 16 ymm registers
  kAvx512 = 2,   // AVX-512 F/BW/DQ/VL (x86-64-v4), 16 f32 lanes, 32 zmm registers, masks
};
constexpr int kIsaLevelCount = 3;

// "generic", "avx2" or "avx512".
std::string_view IsaName(IsaLevel level);
// The level a name spells (as IsaName writes it); an error naming the choices otherwise.
absl::StatusOr<IsaLevel> ParseIsa(std::string_view name);

// The highest level this CPU and its operating system support (cpuid, and xgetbv for the
// register state the OS saves).
IsaLevel CpuIsa();

// The level kernels use: CpuIsa(), lowered by HLOX_ISA when set. A bad HLOX_ISA (an unknown
// name, or a level above the CPU's) stops the process with a message on stderr at the first
// call: a run must never silently measure another level than the one asked for.
IsaLevel ActiveIsa();

// Makes `level` the active one from now on (tests; a tool's --isa flag). Objects that compiled
// kernels earlier (executors, fused programs) keep the level they were built with. An error,
// changing nothing, when the CPU does not support `level`.
absl::Status SetActiveIsa(IsaLevel level);

// Sets the active level for a scope and restores the previous one after (tests). The level
// must be supported (CHECKed): callers loop over levels up to CpuIsa().
class ScopedIsa {
 public:
  explicit ScopedIsa(IsaLevel level);
  ~ScopedIsa();
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  IsaLevel previous_;
};

// The CPU's model name from cpuid's brand string (e.g. "AMD EPYC 7B13"), trimmed; "unknown"
// when the CPU has none.
std::string CpuModelName();

}  // namespace hlox
