// Planned job memory against a budget; see evaluate_memory.h.
#include "cost/evaluate_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/core/memory_plan.h"

namespace hlox {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t Add(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }

// A "Key:   123 kB" line of /proc/meminfo in bytes, or -1.
int64_t MeminfoBytes(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::atoll(line.c_str() + key.size() + 1) * 1024;
  }
  return -1;
}

}  // namespace

int64_t DefaultJobMemoryBytes() {
  int64_t memory = MeminfoBytes("MemAvailable");
  if (memory <= 0) memory = MeminfoBytes("MemTotal");
  if (memory <= 0) memory = int64_t{8} << 30;
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  std::string limit;
  if (cg >> limit && limit != "max") {
    const long long v = std::atoll(limit.c_str());
    if (v > 0) memory = std::min<int64_t>(memory, v);
  }
  const int64_t headroom = std::max<int64_t>(int64_t{512} << 20, memory / 8);
  return std::max<int64_t>(int64_t{256} << 20, memory - headroom);
}

int64_t PlannedJobBytes(const Module& original, const Module* candidate) {
  const int64_t reference = rt::PlannedPeakBytes(original);
  int64_t peak = reference;
  if (candidate != nullptr && original.entry() != nullptr) {
    const int64_t outputs = std::max<int64_t>(0, original.entry()->ResultShape().ByteSize());
    peak = std::max(peak, Add(rt::PlannedPeakBytes(*candidate), outputs));
  }
  return Add(peak, kExecutorOverheadBytes);
}

std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return absl::StrCat(bytes, " B");
  double v = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (v >= 1024 && unit + 1 < static_cast<int>(std::size(kUnits))) {
    v /= 1024;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::optional<std::string> OverBudgetMessage(int64_t planned, int64_t budget) {
  if (budget <= 0 || planned <= budget) return std::nullopt;
  return absl::StrCat("planned peak ", FormatBytes(planned), " exceeds this worker's job budget ",
                      FormatBytes(budget), "; not run");
}

std::string OutOfMemoryMessage(int64_t budget) {
  if (budget <= 0) return "ran out of memory (an allocation failed)";
  return absl::StrCat("ran out of its ", budget >> 20, " MiB memory limit (an allocation failed)");
}

}  // namespace hlox
