// Reading and parsing the kernel's steal and scheduler counters (see sched_stats.h). Plain
// open/read calls into small stack buffers keep a snapshot cheap enough for every sample.
#include "cost/sched_stats.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string>

#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "absl/status/status.h"

namespace hlox {

namespace {

// Skips spaces and tabs; returns false at the end of the line or text.
bool SkipBlanks(std::string_view text, size_t* pos) {
  while (*pos < text.size() && (text[*pos] == ' ' || text[*pos] == '\t')) ++*pos;
  return *pos < text.size() && text[*pos] != '\n';
}

// Parses one non-negative decimal integer at *pos.
bool ParseCount(std::string_view text, size_t* pos, int64_t* out) {
  if (!SkipBlanks(text, pos)) return false;
  const char* begin = text.data() + *pos;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  if (ec != std::errc() || ptr == begin || *out < 0) return false;
  if (ptr != end && *ptr != ' ' && *ptr != '\t' && *ptr != '\n') return false;
  *pos += static_cast<size_t>(ptr - begin);
  return true;
}

// Reads at most `cap` bytes of a small /proc file; empty on failure.
std::string_view ReadSmall(const char* path, char* buf, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  ssize_t n = read(fd, buf, cap);
  close(fd);
  return n > 0 ? std::string_view(buf, static_cast<size_t>(n)) : std::string_view();
}

double TicksPerSecond() {
  static const double ticks = [] {
    long t = sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<double>(t) : 100.0;
  }();
  return ticks;
}

}  // namespace

absl::StatusOr<ThreadSchedTimes> ParseSchedstat(std::string_view text) {
  ThreadSchedTimes t;
  size_t pos = 0;
  if (!ParseCount(text, &pos, &t.exec_ns) || !ParseCount(text, &pos, &t.wait_ns) ||
      !ParseCount(text, &pos, &t.slices) || SkipBlanks(text, &pos)) {
    return absl::InvalidArgumentError("schedstat: expected three non-negative integers, got '" +
                                      std::string(text.substr(0, 80)) + "'");
  }
  return t;
}

absl::StatusOr<int64_t> ParseProcStatSteal(std::string_view text) {
  // The aggregate line is "cpu  user nice system idle iowait irq softirq steal ...".
  size_t line = 0;
  while (line < text.size() && text.compare(line, 4, "cpu ") != 0) {
    size_t nl = text.find('\n', line);
    if (nl == std::string_view::npos) return absl::InvalidArgumentError("/proc/stat: no 'cpu ' line");
    line = nl + 1;
  }
  if (line >= text.size()) return absl::InvalidArgumentError("/proc/stat: no 'cpu ' line");
  size_t pos = line + 4;
  int64_t value = 0;
  for (int column = 1; column <= 8; ++column) {
    if (!ParseCount(text, &pos, &value)) {
      return absl::InvalidArgumentError("/proc/stat: 'cpu' line has fewer than 8 numbers");
    }
  }
  return value;
}

absl::StatusOr<int64_t> ParseProcStatRunning(std::string_view text) {
  constexpr std::string_view kKey = "procs_running ";
  size_t at = text.find(kKey);
  while (at != std::string_view::npos && at > 0 && text[at - 1] != '\n') {
    at = text.find(kKey, at + 1);
  }
  int64_t value = 0;
  size_t pos = at + kKey.size();
  if (at == std::string_view::npos || !ParseCount(text, &pos, &value)) {
    return absl::InvalidArgumentError("/proc/stat: no valid 'procs_running' line");
  }
  return value;
}

SchedSnapshot ReadSchedSnapshot() {
  SchedSnapshot s;
  char buf[8192];
  std::string_view stat = ReadSmall("/proc/stat", buf, sizeof(buf));
  auto steal = ParseProcStatSteal(stat);
  auto running = ParseProcStatRunning(stat);
  s.running = running.ok() ? *running : 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir != nullptr) {
    while (dirent* e = readdir(dir)) {
      char* end = nullptr;
      long tid = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0') continue;
      std::string path = std::string("/proc/self/task/") + e->d_name + "/schedstat";
      auto t = ParseSchedstat(ReadSmall(path.c_str(), buf, sizeof(buf)));
      if (t.ok()) s.threads[tid] = *t;  // a thread that just exited is simply absent
    }
    closedir(dir);
  }
  auto self = ParseSchedstat(ReadSmall("/proc/thread-self/schedstat", buf, sizeof(buf)));
  // The wall and thread CPU clocks last, right after this thread's wait was read: a preemption
  // while the files were read then shows in wall time and wait alike, and falls between two
  // samples' timed regions. (The schedstat run time of a running thread lags by up to a tick;
  // the thread CPU clock is up to date; both exclude steal.)
  s.wall = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  const bool cpu_ok = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0;
  const double cpu = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  if (!steal.ok() || !self.ok() || dir == nullptr) return s;
  s.steal = static_cast<double>(*steal) / TicksPerSecond();
  s.self_exec = cpu_ok ? cpu : static_cast<double>(self->exec_ns) * 1e-9;
  s.self_wait = static_cast<double>(self->wait_ns) * 1e-9;
  s.ok = true;
  return s;
}

SchedDelta Difference(const SchedSnapshot& from, const SchedSnapshot& to) {
  SchedDelta d;
  d.wall = to.wall - from.wall;
  if (!from.ok || !to.ok) return d;
  d.steal = std::max(0.0, to.steal - from.steal);
  int64_t wait_ns = 0;
  for (const auto& [tid, t] : to.threads) {
    auto it = from.threads.find(tid);
    wait_ns += t.wait_ns - (it == from.threads.end() ? 0 : it->second.wait_ns);
  }
  d.run_wait = std::max<int64_t>(0, wait_ns) * 1e-9;
  double self = d.wall - (to.self_exec - from.self_exec) - (to.self_wait - from.self_wait);
  d.self_stolen = std::max(0.0, self);
  d.others_running = std::max<int64_t>(0, std::min(from.running, to.running) - 1);
  return d;
}

}  // namespace hlox
