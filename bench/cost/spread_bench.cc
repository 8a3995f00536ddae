// Spread bench: for each corpus module (after the default pipeline), ten measurements in a row
// with the standard protocol; reports each module's median run time and the largest deviation
// of the ten medians from their median, and how many modules stay within 2%.
//   cost_spread_bench [--repeats N] [--max-run-ms MS] [--time-cap S] [--threads T] [--guard G]
//                     [--verbose] [filter]
// --guard sets the interference threshold (cost/interference.h; 0 turns the guard off); the
// `disturbed` column is the mean number of samples per measurement it left out. --verbose
// prints every measurement.
// Modules whose single run exceeds --max-run-ms (default 200) are skipped to keep the bench
// inside a few minutes on a 2-core machine. Each module runs in a forked child, so a crashing
// kernel costs one line, not the bench.
// Before and after the corpus, two fixed reference modules go through the same ten
// measurements: one whose data stays in cache and one that streams 3 x 64 MB through DRAM.
// Their spread is the machine's own noise in the same run: when they miss 2% the machine was
// not quiet, and no module can be expected to do better.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include "bench/cost/bench_util.h"
#include "cost/stats.h"
#include "cost/timing.h"
#include "ir/parser.h"
#include "passes/pipeline.h"

using namespace hlox;

namespace {

struct Settings {
  int repeats = 10, threads = 1;
  bool verbose = false;
  double max_run_ms = 200;
  TimingProtocol protocol;
};

// Tallies shared with the forked children: modules measured, within 2%, worst deviation.
struct Tally {
  double measured = 0, within = 0, worst = 0;
};

// The ten measurements of one module and its line of the table.
void MeasureRepeats(const Module& module, const std::string& name, const Settings& s, Tally* tally) {
  bool ok = true;
  std::vector<double> medians, mins;
  int unstable = 0;
  size_t samples = 0, disturbed = 0;
  for (int r = 0; r < s.repeats && ok; ++r) {
    // The same module on the same seeded inputs every time: only the measurement repeats.
    CostDistribution d = bench::MeasureModule(module, s.protocol, 0, s.threads, &ok);
    medians.push_back(d.median);
    mins.push_back(d.min);
    if (s.verbose) {
      std::printf("  %-34s #%d median %.6g min %.6g samples %zu disturbed %lld%s\n", name.c_str(), r,
                  d.median, d.min, d.samples.size(), static_cast<long long>(d.disturbed),
                  d.unstable ? " unstable" : "");
    }
    unstable += d.unstable;
    samples += d.samples.size();
    disturbed += static_cast<size_t>(d.disturbed);
  }
  if (!ok) return;
  double mid = Median(medians);
  double dev = 0;
  for (double x : medians) dev = std::max(dev, std::fabs(x - mid) / mid);
  // The same for the per-measurement minimum, which contention on a shared machine disturbs less.
  double mid_min = Median(mins), dev_min = 0;
  for (double x : mins) dev_min = std::max(dev_min, std::fabs(x - mid_min) / mid_min);
  if (tally != nullptr) {
    tally->measured += 1;
    tally->within += dev <= 0.02;
    tally->worst = std::max(tally->worst, dev);
  }
  std::printf("%-36s %12.4g %10.2f %10.2f %8d %9zu %9zu\n", name.c_str(), mid, 100 * dev,
              100 * dev_min, unstable, samples / medians.size(), disturbed / medians.size());
}

void MeasureOne(const std::string& path, const std::string& name, const Settings& s, Tally* tally) {
  alarm(60);  // parse, pipeline and the probe run; the repeats are bounded by the protocol
  auto m = ParseModuleFile(path);
  if (!m.ok()) {
    std::printf("%-36s parse error\n", name.c_str());
    return;
  }
  auto opt = RunPipeline(**m, "default", {});
  if (!opt.ok()) {
    std::printf("%-36s pipeline error: %.60s\n", name.c_str(), std::string(opt.status().message()).c_str());
    return;
  }
  // One timed run to skip slow modules.
  double first = bench::TimeOneRun(**opt, s.threads);
  alarm(0);
  if (first < 0) {
    std::printf("%-36s run error\n", name.c_str());
    return;
  }
  if (first * 1e3 > s.max_run_ms) {
    std::printf("%-36s %12.4g   skipped (slower than %.0f ms)\n", name.c_str(), first, s.max_run_ms);
    return;
  }
  MeasureRepeats(**opt, name, s, tally);
}

// Fixed workloads for the machine-noise reference: x*y+z then exp, over 16K f32 (in L1/L2)
// and over 16M f32 (64 MB per array: DRAM bandwidth).
std::string ReferenceHlo(int64_t n) {
  std::string shape = "f32[" + std::to_string(n) + "]";
  return "HloModule ref\n\nENTRY e {\n  x = " + shape + " parameter(0)\n  y = " + shape +
         " parameter(1)\n  z = " + shape + " parameter(2)\n  m = " + shape +
         " multiply(x, y)\n  a = " + shape + " add(m, z)\n  ROOT r = " + shape + " exponential(a)\n}\n";
}

void MeasureReferences(const Settings& s, const char* when) {
  const std::pair<const char*, int64_t> refs[] = {{"cache", 16 * 1024}, {"dram", 16 * 1024 * 1024}};
  for (const auto& [label, n] : refs) {
    std::string name = std::string("(reference ") + label + ", " + when + ")";
    std::string err = bench::RunIsolated([&] {
      auto m = ParseModule(ReferenceHlo(n));
      if (!m.ok()) return;
      auto opt = RunPipeline(**m, "default", {});
      if (opt.ok()) MeasureRepeats(**opt, name, s, nullptr);
    });
    if (!err.empty()) std::printf("%-36s %s\n", name.c_str(), err.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  s.protocol.time_cap_seconds = 1.0;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--repeats")) s.repeats = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--max-run-ms")) s.max_run_ms = std::atof(next());
    else if (!std::strcmp(argv[i], "--time-cap")) s.protocol.time_cap_seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--threads")) s.threads = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--guard")) s.protocol.interference_threshold = std::atof(next());
    else if (!std::strcmp(argv[i], "--verbose")) s.verbose = true;
    else filter = argv[i];
  }
  std::printf("# protocol: %s threads=%d repeats=%d\n", s.protocol.ToString().c_str(), s.threads,
              s.repeats);
  std::printf("%-36s %12s %10s %10s %8s %9s %9s\n", "module", "median_s", "max_dev_%",
              "min_dev_%", "unstable", "samples", "disturbed");
  void* mem = mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  Tally* tally = new (mem) Tally();
  MeasureReferences(s, "before");
  for (const std::string& path : bench::CorpusFiles()) {
    std::string name = bench::ModuleName(path);
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string err = bench::RunIsolated([&] { MeasureOne(path, name, s, tally); });
    if (!err.empty()) std::printf("%-36s %s\n", name.c_str(), err.c_str());
  }
  MeasureReferences(s, "after");
  std::printf("# %d modules measured, %d with all %d medians within 2%% of their median; worst %.2f%%\n",
              static_cast<int>(tally->measured), static_cast<int>(tally->within), s.repeats,
              100 * tally->worst);
  return 0;
}
