// Per-corpus-module time per run of the unoptimized module with 1 and 2 threads (seeded inputs,
// one warm-up, then repeats up to a time budget; median reported), peak live bytes, and the
// NaN/Inf elements among the outputs (seed 0; `hlox run --check-finite` finds their origin);
// also the 1-thread median in process CPU time, and the load average at start and end.
// Usage: runtime_corpus_bench [CORPUS_DIR] [NAME_SUBSTRING]
#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "runtime/core/executor.h"
#include "runtime/core/finite.h"

namespace {

// Process CPU seconds (user + system): a 1-thread figure that a loaded machine inflates less
// than the wall clock (page zeroing by the kernel counts as system time).
double CpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The 1-minute load average (the machine is shared: figures mean little under load).
double LoadAverage() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

// NaN/Inf elements of the float leaves of a value (f16/bf16 by their all-ones exponent).
long long NonFiniteElements(const hlox::rt::Value& v) {
  hlox::rt::NonFinite c = hlox::rt::CountNonFinite(v);
  return static_cast<long long>(c.nan + c.inf);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: runtime_corpus_bench [CORPUS_DIR] [NAME_SUBSTRING]\n"
                "per module: median time per run (unoptimized, seeded inputs, seed 0) with 1 and 2 threads,\n"
                "speedup, peak live bytes, NaN/Inf output elements\n");
    return 0;
  }
  std::string dir = argc > 1 ? argv[1] : std::string(HLOX_SOURCE_DIR) + "/../shared/hlo";
  std::string filter = argc > 2 ? argv[2] : "";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".hlo" && e.path().filename().string().find(filter) != std::string::npos) {
      files.push_back(e.path().string());
    }
  }
  if (ec) {
    std::fprintf(stderr, "runtime_corpus_bench: cannot read %s: %s\n", dir.c_str(), ec.message().c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());
  std::printf("load average at start: %.2f\n", LoadAverage());
  std::printf("%-45s %12s %12s %12s %8s %14s %10s\n", "module", "1 thread s", "1t cpu s", "2 threads s", "speedup",
              "peak bytes", "nonfinite");
  for (const std::string& f : files) {
    auto m = hlox::ParseModuleFile(f);
    std::string name = fs::path(f).filename().string();
    if (!m.ok()) {
      std::printf("%-45s parse error\n", name.c_str());
      continue;
    }
    double med[2] = {0, 0}, cpu1 = 0;
    int64_t peak = 0;
    long long nonfinite = 0;
    std::string err;
    for (int t = 1; t <= 2 && err.empty(); ++t) {
      hlox::rt::ExecOptions o;
      o.threads = t;
      auto ex = hlox::rt::Executor::Create(**m, o);
      if (!ex.ok()) { err = std::string(ex.status().message()); break; }
      auto args = hlox::rt::MakeSeededInputs(**m, 0);
      const double cpu_start = CpuSeconds();
      std::vector<double> times, cpus;
      double spent = 0;
      // At least 3 runs; fast modules repeat for half a second (at most 1000 runs), so their
      // medians are not one wake-up of the thread pool.
      for (int rep = 0; rep < 1000 && (rep < 3 || spent < 0.5); ++rep) {
        hlox::rt::RunStats stats;
        const double c0 = CpuSeconds();
        auto t0 = std::chrono::steady_clock::now();
        auto out = (*ex)->Run(args, &stats);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double cs = CpuSeconds() - c0;
        if (!out.ok()) { err = std::string(out.status().message()); break; }
        peak = stats.peak_bytes;
        if (rep == 0 && t == 1) nonfinite = NonFiniteElements(*out);
        if (rep > 0) times.push_back(s), cpus.push_back(cs);  // first run is the warm-up
        spent += s;
        if (s > 10 && rep > 0) break;  // very slow module: one timed run after the warm-up is enough
      }
      if (times.empty() && err.empty()) times.push_back(spent), cpus.push_back(CpuSeconds() - cpu_start);
      if (!times.empty()) {
        std::sort(times.begin(), times.end());
        std::sort(cpus.begin(), cpus.end());
        med[t - 1] = times[times.size() / 2];
        if (t == 1) cpu1 = cpus[cpus.size() / 2];
      }
    }
    if (!err.empty()) {
      std::printf("%-45s error: %.100s\n", name.c_str(), err.c_str());
    } else {
      std::printf("%-45s %12.6f %12.6f %12.6f %8.2f %14lld %10lld\n", name.c_str(), med[0], cpu1, med[1],
                  med[1] > 0 ? med[0] / med[1] : 0.0, static_cast<long long>(peak), nonfinite);
    }
    std::fflush(stdout);
  }
  std::printf("load average at end: %.2f\n", LoadAverage());
  return 0;
}
