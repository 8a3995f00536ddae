// CPU feature detection (cpuid/xgetbv) and the process-wide active ISA level (cpu_isa.h).
#include "common/cpu_isa.h"

#include <cpuid.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"

namespace hlox {
namespace {

struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

Regs Cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  if (!__get_cpuid_count(leaf, sub, &r.a, &r.b, &r.c, &r.d)) return Regs{};
  return r;
}

// The register state the OS saves on context switch (XCR0), or 0 without OSXSAVE.
uint64_t Xcr0(const Regs& leaf1) {
  if (!(leaf1.c & (1u << 27))) return 0;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

IsaLevel Detect() {
  const Regs l1 = Cpuid(1);
  const Regs l7 = Cpuid(0, 0).a >= 7 ? Cpuid(7, 0) : Regs{};
  const uint64_t xcr0 = Xcr0(l1);
  const bool ymm_state = (xcr0 & 0x6) == 0x6;          // SSE + AVX state
  const bool zmm_state = ymm_state && (xcr0 & 0xe0) == 0xe0;  // opmask, ZMM_Hi256, Hi16_ZMM
  const bool fma = l1.c & (1u << 12), avx = l1.c & (1u << 28), f16c = l1.c & (1u << 29);
  const bool avx2 = l7.b & (1u << 5), bmi1 = l7.b & (1u << 3), bmi2 = l7.b & (1u << 8);
  const bool f512 = l7.b & (1u << 16), dq = l7.b & (1u << 17), bw = l7.b & (1u << 30), vl = l7.b & (1u << 31);
  if (!(ymm_state && avx && avx2 && fma && f16c && bmi1 && bmi2)) return IsaLevel::kGeneric;
  if (!(zmm_state && f512 && dq && bw && vl)) return IsaLevel::kAvx2;
  return IsaLevel::kAvx512;
}

std::atomic<int> g_active{-1};
std::once_flag g_init;

[[noreturn]] void Fatal(const std::string& message) {
  std::fprintf(stderr, "hlox: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}

void InitFromEnv() {
  IsaLevel level = CpuIsa();
  if (const char* env = std::getenv("HLOX_ISA"); env != nullptr && *env != '\0') {
    absl::StatusOr<IsaLevel> want = ParseIsa(env);
    if (!want.ok()) Fatal(absl::StrCat("HLOX_ISA: ", want.status().message()));
    if (static_cast<int>(*want) > static_cast<int>(level)) {
      Fatal(absl::StrCat("HLOX_ISA=", env, " but this CPU (", CpuModelName(), ") supports at most ",
                         std::string(IsaName(level))));
    }
    level = *want;
  }
  int expected = -1;  // SetActiveIsa may have run first
  g_active.compare_exchange_strong(expected, static_cast<int>(level));
}

}  // namespace

std::string_view IsaName(IsaLevel level) {
  switch (level) {
    case IsaLevel::kGeneric: return "generic";
    case IsaLevel::kAvx2: return "avx2";
    case IsaLevel::kAvx512: return "avx512";
  }
  return "unknown";
}

absl::StatusOr<IsaLevel> ParseIsa(std::string_view name) {
  for (int i = 0; i < kIsaLevelCount; ++i) {
    if (name == IsaName(static_cast<IsaLevel>(i))) return static_cast<IsaLevel>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown instruction-set level '", std::string(name), "' (choose generic, avx2 or avx512)"));
}

IsaLevel CpuIsa() {
  static const IsaLevel kLevel = Detect();
  return kLevel;
}

IsaLevel ActiveIsa() {
  int v = g_active.load(std::memory_order_relaxed);
  if (v >= 0) return static_cast<IsaLevel>(v);
  std::call_once(g_init, InitFromEnv);
  return static_cast<IsaLevel>(g_active.load(std::memory_order_relaxed));
}

absl::Status SetActiveIsa(IsaLevel level) {
  if (static_cast<int>(level) > static_cast<int>(CpuIsa())) {
    return absl::FailedPreconditionError(absl::StrCat("this CPU (", CpuModelName(), ") supports at most ",
                                                      std::string(IsaName(CpuIsa())), ", not ", std::string(IsaName(level))));
  }
  std::call_once(g_init, [] {});  // the environment no longer decides
  g_active.store(static_cast<int>(level), std::memory_order_relaxed);
  return absl::OkStatus();
}

ScopedIsa::ScopedIsa(IsaLevel level) : previous_(ActiveIsa()) {
  absl::Status s = SetActiveIsa(level);
  if (!s.ok()) Fatal(std::string(s.message()));
}

ScopedIsa::~ScopedIsa() { (void)SetActiveIsa(previous_); }

std::string CpuModelName() {
  if (Cpuid(0x80000000u).a < 0x80000004u) return "unknown";
  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    const Regs r = Cpuid(0x80000002u + i);
    std::memcpy(brand + 16 * i, &r, 16);
  }
  std::string s(brand);
  const size_t b = s.find_first_not_of(' ');
  if (b == std::string::npos) return "unknown";
  const size_t e = s.find_last_not_of(' ');
  return s.substr(b, e - b + 1);
}

}  // namespace hlox
