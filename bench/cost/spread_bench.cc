// Spread bench: for each corpus module (after the default pipeline), ten measurements in a row
// with the standard protocol; reports each module's median run time and the largest deviation
// of the ten medians from their median, and how many modules stay within 2%.
//   cost_spread_bench [--repeats N] [--max-run-ms MS] [--time-cap S] [--threads T] [--guard G]
//                     [--sched F] [--ab F] [--reference K] [--weight W] [--verbose] [filter]
// --guard sets the probe guard's threshold (cost/interference.h; 0 turns it off), --sched the
// scheduler guard's (cost/sched_guard.h); the `disturbed` column is the mean number of samples
// per measurement they left out; `steal%` and `wait%` are the steal charged to the measuring
// thread and the run-queue wait of the process's threads, as a share of the sampled time.
// --ab F measures every module both without the scheduler guard ([off]) and with it at F
// ([sched]), interleaved (each repeat measures both, in alternating order), a line each.
// --reference K (compute, memory or mix; mix runs both kernels) times the host references
// (cost/host_reference.h) at every sample boundary (their quiet times are calibrated once,
// before the corpus) and adds a line per module, from the same measurements: the largest
// deviation of the ten medians normalized by the compute reference, the memory one and their
// mix (compute weight W, default 0.5), each with the faster of a sample's two bracketing
// reference runs (the protocol's rule) and with their mean; and how well the references track
// the module (log-time correlations: `between` the ten raw medians and their median reference
// times, `within` all samples and their nearby reference times). Needs the guards off.
// --verbose prints every measurement.
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
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "bench/cost/bench_util.h"
#include "bench/cost/reference_stats.h"
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
  // --ab F: a second protocol, the first with the scheduler guard at F, measured interleaved.
  double ab_sched = 0;
  double weight = 0.5;   // --weight: the mix's compute weight
  ReferenceQuiet quiet;  // calibrated before the corpus when a reference is on
  bool reference() const { return protocol.host_reference != HostReferenceKind::kNone; }
  size_t estimators() const { return reference() ? size_t{bench::kEstimators} : size_t{1}; }
  std::vector<TimingProtocol> Variants() const {
    std::vector<TimingProtocol> v = {protocol};
    if (ab_sched > 0) {
      v.push_back(protocol);
      v[0].sched_threshold = 0;
      v[1].sched_threshold = ab_sched;
    }
    return v;
  }
};

// Tallies shared with the forked children, one per protocol variant and estimator: modules
// measured, within 2%, worst deviation, every module's deviation.
struct Tally {
  static constexpr int kMaxModules = 256;
  double measured = 0, within = 0, worst = 0;
  double devs[kMaxModules] = {};
  void Add(double dev) {
    if (measured < kMaxModules) devs[static_cast<int>(measured)] = dev;
    measured += 1;
    within += dev <= 0.02;
    worst = std::max(worst, dev);
  }
  double MedianDev() const {
    int n = std::min(static_cast<int>(measured), kMaxModules);
    return Median(std::vector<double>(devs, devs + n));
  }
};

// Largest relative deviation of `v` from its median.
double MaxDeviation(const std::vector<double>& v) {
  double mid = Median(v), dev = 0;
  for (double x : v) dev = std::max(dev, std::fabs(x - mid) / mid);
  return dev;
}

// The host-reference line of one module: normalized deviations and tracking correlations.
void PrintReferenceLine(const std::vector<bench::ReferenceRun>& runs, const Settings& s,
                        Tally* tally) {
  double dev[bench::kEstimators] = {};
  for (size_t e = bench::kComputeMin; e < bench::kEstimators; ++e) {
    std::vector<double> medians;
    for (const bench::ReferenceRun& r : runs) {
      medians.push_back(bench::EstimatorMedian(r, e, s.quiet, s.weight));
    }
    dev[e] = MaxDeviation(medians);
    if (tally != nullptr) tally[e].Add(dev[e]);
  }
  bench::ReferenceTracking t = bench::TrackReferences(runs);
  auto range = [&](bool compute) {
    std::vector<double> v;
    for (const bench::ReferenceRun& r : runs) {
      v.push_back(compute ? Median(r.compute) / s.quiet.compute
                          : Median(r.memory) / s.quiet.memory);
    }
    return std::make_pair(*std::min_element(v.begin(), v.end()),
                          *std::max_element(v.begin(), v.end()));
  };
  auto [c_lo, c_hi] = range(true);
  auto [m_lo, m_hi] = range(false);
  std::printf("    norm dev%% (min/mean pair): compute %.2f/%.2f memory %.2f/%.2f mix %.2f/%.2f "
              "protocol %.2f | corr between: c %.2f m %.2f within: c %.2f m %.2f | "
              "ref slowdown c %.2f-%.2f m %.2f-%.2f\n",
              100 * dev[bench::kComputeMin], 100 * dev[bench::kComputeMean],
              100 * dev[bench::kMemoryMin], 100 * dev[bench::kMemoryMean],
              100 * dev[bench::kMixMin], 100 * dev[bench::kMixMean], 100 * dev[bench::kMixProtocol],
              t.between_compute,
              t.between_memory, t.within_compute, t.within_memory, c_lo, c_hi, m_lo, m_hi);
}

// The ten measurements of one module and its line of the table (one line per variant; with two
// variants, each repeat measures both, in alternating order).
void MeasureRepeats(const Module& module, const std::string& name, const Settings& s, Tally* tally) {
  const std::vector<TimingProtocol> variants = s.Variants();
  const size_t nv = variants.size();
  bool ok = true;
  std::vector<std::vector<double>> medians(nv), mins(nv);
  std::vector<int> unstable(nv, 0);
  std::vector<size_t> samples(nv, 0), disturbed(nv, 0);
  std::vector<double> steal(nv, 0), wait(nv, 0), wall(nv, 0);
  std::vector<std::vector<bench::ReferenceRun>> runs(nv);
  for (int r = 0; r < s.repeats && ok; ++r) {
    for (size_t k = 0; k < nv && ok; ++k) {
      const size_t v = r % 2 == 0 ? k : nv - 1 - k;
      // The same module on the same seeded inputs every time: only the measurement repeats.
      // With a reference (and the guards off) the boundary times come too, for the estimators.
      bench::ReferenceRun run;
      const bool boundaries = s.reference() && variants[v].interference_threshold <= 0 &&
                              variants[v].sched_threshold <= 0;
      CostDistribution d =
          boundaries ? bench::MeasureModuleBoundaries(module, variants[v], 0, s.threads, &ok,
                                                      &run.compute, &run.memory)
                     : bench::MeasureModule(module, variants[v], 0, s.threads, &ok);
      medians[v].push_back(d.median);
      if (boundaries) {
        run.dist = d;
        runs[v].push_back(std::move(run));
      }
      mins[v].push_back(d.min);
      if (s.verbose) {
        std::printf("  %-34s #%d%s median %.6g min %.6g samples %zu disturbed %lld steal %.1f%% "
                    "wait %.1f%%%s\n", name.c_str(), r, v > 0 ? "b" : "", d.median, d.min,
                    d.samples.size(), static_cast<long long>(d.disturbed),
                    d.sampled_seconds > 0 ? 100 * d.steal_seconds / d.sampled_seconds : 0.0,
                    d.sampled_seconds > 0 ? 100 * d.run_wait_seconds / d.sampled_seconds : 0.0,
                    d.unstable ? " unstable" : "");
      }
      unstable[v] += d.unstable;
      samples[v] += d.samples.size();
      disturbed[v] += static_cast<size_t>(d.disturbed);
      steal[v] += d.steal_seconds;
      wait[v] += d.run_wait_seconds;
      wall[v] += d.sampled_seconds;
    }
  }
  if (!ok) return;
  for (size_t v = 0; v < nv; ++v) {
    double dev = MaxDeviation(medians[v]);
    // The same for the per-measurement minimum, which contention on a shared machine disturbs less.
    double dev_min = MaxDeviation(mins[v]);
    if (tally != nullptr) tally[v * s.estimators()].Add(dev);
    std::string label = nv > 1 ? name + (v == 0 ? " [off]" : " [sched]") : name;
    const size_t n = medians[v].size();
    std::printf("%-36s %12.4g %10.2f %10.2f %8d %9zu %9zu %7.1f %7.1f\n", label.c_str(),
                Median(medians[v]), 100 * dev, 100 * dev_min, unstable[v], samples[v] / n,
                disturbed[v] / n, wall[v] > 0 ? 100 * steal[v] / wall[v] : 0.0,
                wall[v] > 0 ? 100 * wait[v] / wall[v] : 0.0);
    if (!runs[v].empty()) {
      PrintReferenceLine(runs[v], s, tally ? tally + v * s.estimators() : nullptr);
    }
  }
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

void MeasureReferences(const Settings& s, const char* when) {
  const std::pair<const char*, int64_t> refs[] = {{"cache", 16 * 1024}, {"dram", 16 * 1024 * 1024}};
  for (const auto& [label, n] : refs) {
    std::string name = std::string("(reference ") + label + ", " + when + ")";
    std::string err = bench::RunIsolated([&] {
      auto m = ParseModule(bench::ReferenceHlo(n));
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
    else if (!std::strcmp(argv[i], "--sched")) s.protocol.sched_threshold = std::atof(next());
    else if (!std::strcmp(argv[i], "--ab")) s.ab_sched = std::atof(next());
    else if (!std::strcmp(argv[i], "--weight")) s.weight = std::atof(next());
    else if (!std::strcmp(argv[i], "--reference")) {
      if (!ParseHostReference(next(), &s.protocol.host_reference)) {
        std::fprintf(stderr, "--reference: compute, memory, mix or none\n");
        return 2;
      }
    }
    else if (!std::strcmp(argv[i], "--verbose")) s.verbose = true;
    else filter = argv[i];
  }
  std::printf("# protocol: %s threads=%d repeats=%d\n", s.protocol.ToString().c_str(), s.threads,
              s.repeats);
  if (s.reference()) {
    // Fixed quiet times for the whole run (the children inherit them).
    s.quiet = CalibrateReferenceQuiet(100);
    SetReferenceQuiet(s.quiet);
    std::printf("# reference quiet: compute %.4g s, memory %.4g s (best of 100)\n", s.quiet.compute,
                s.quiet.memory);
  }
  std::printf("%-36s %12s %10s %10s %8s %9s %9s %7s %7s\n", "module", "median_s", "max_dev_%",
              "min_dev_%", "unstable", "samples", "disturbed", "steal%", "wait%");
  const size_t nv = s.Variants().size();
  const size_t nt = nv * s.estimators();
  void* mem = mmap(nullptr, nt * sizeof(Tally), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  Tally* tally = new (mem) Tally[nt]();
  MeasureReferences(s, "before");
  for (const std::string& path : bench::CorpusFiles()) {
    std::string name = bench::ModuleName(path);
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    std::string err = bench::RunIsolated([&] { MeasureOne(path, name, s, tally); });
    if (!err.empty()) std::printf("%-36s %s\n", name.c_str(), err.c_str());
  }
  MeasureReferences(s, "after");
  for (size_t v = 0; v < nv; ++v) {
    for (size_t e = 0; e < s.estimators(); ++e) {
      const Tally& t = tally[v * s.estimators() + e];
      std::printf("#%s%s %d modules measured, %d with all %d medians within 2%% of their median; "
                  "median %.2f%%, worst %.2f%%\n", nv > 1 ? (v == 0 ? " [off]" : " [sched]") : "",
                  s.reference() ? (std::string(" ") + bench::EstimatorName(e)).c_str() : "",
                  static_cast<int>(t.measured), static_cast<int>(t.within), s.repeats,
                  100 * t.MedianDev(), 100 * t.worst);
    }
  }
  return 0;
}
