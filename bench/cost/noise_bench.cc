// Noise bench: how much of the timing noise the kernel's interference counters explain. For
// each workload (the spread bench's in-cache and DRAM reference modules, then corpus modules
// matching the filters) it takes samples of >= 1 ms (batched calls) for --seconds, reading
// /proc/stat steal and the run-queue wait of every thread of this process (cost/sched_stats.h)
// around each sample. It reports, per workload:
//   excess: mean sample time over the fastest 5% (the quiet time), as a fraction;
//   steal: steal charged to the measuring thread (ChargedSteal), wait: run-queue wait of all
//     threads, selfst: the thread's own wall - run - wait, each as a share of the sampled time;
//   flagged: samples the scheduler guard's rule at --frac judges disturbed, and their mean
//     excess against the others';
//   explained: (steal + wait seen in samples) / (excess time of all samples);
//   slow_flagged: of the samples more than 10% above the quiet time, the share flagged;
//   window spread: the samples cut into --window-s windows (one "measurement" each): largest
//     deviation of the window medians from their median, with all samples and with the
//     flagged ones left out.
//   cost_noise_bench [--seconds S] [--frac F] [--window-s W] [--threads T] [--csv FILE] [filters]
// --csv writes every sample (workload, t, per_call_s, calls, steal_s, wait_s, self_stolen_s, others:
// other runnable tasks at both ends).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/cost/bench_util.h"
#include "common/csv.h"
#include "cost/sched_guard.h"
#include "cost/sched_stats.h"
#include "cost/stats.h"
#include "cost/timing.h"
#include "ir/parser.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

using namespace hlox;

namespace {

struct Options {
  double seconds = 10, frac = 0.02, window_s = 1.0;
  int threads = 1;
  FILE* csv = nullptr;
};

struct Sample {
  double t = 0, per_call = 0, wall = 0, steal = 0, wait = 0, self_stolen = 0;
  int64_t calls = 0, others = 0;
  bool flagged = false;  // the scheduler guard's rule at --frac (cost/sched_guard.h)
};

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// Largest deviation of the window medians from their median; `keep` filters samples.
template <typename Keep>
double WindowSpread(const std::vector<Sample>& s, double window_s, Keep keep) {
  std::vector<double> medians, cur;
  double start = s.empty() ? 0 : s.front().t;
  for (const Sample& x : s) {
    if (x.t - start >= window_s) {
      if (cur.size() >= 3) medians.push_back(Median(cur));
      cur.clear();
      start = x.t;
    }
    if (keep(x)) cur.push_back(x.per_call);
  }
  if (cur.size() >= 3) medians.push_back(Median(cur));
  if (medians.size() < 2) return 0;
  double mid = Median(medians), dev = 0;
  for (double m : medians) dev = std::max(dev, std::fabs(m - mid) / mid);
  return dev;
}

void Report(const std::string& name, const std::vector<Sample>& s, const Options& o) {
  std::vector<double> per_call;
  for (const Sample& x : s) per_call.push_back(x.per_call);
  const double quiet = Quantile(per_call, 0.05);
  auto flagged = [](const Sample& x) { return x.flagged; };
  double excess_sum = 0, seen_sum = 0, ex_flag = 0, ex_clean = 0, steal_sum = 0, wait_sum = 0;
  double self_sum = 0, wall_sum = 0;
  int n_flag = 0, slow = 0, slow_flag = 0;
  for (const Sample& x : s) {
    double ex = x.per_call / quiet - 1;
    excess_sum += std::max(0.0, (x.per_call - quiet) * static_cast<double>(x.calls));
    seen_sum += x.steal + x.wait;
    steal_sum += x.steal;
    wait_sum += x.wait;
    self_sum += x.self_stolen;
    wall_sum += x.wall;
    if (flagged(x)) {
      ++n_flag;
      ex_flag += ex;
    } else {
      ex_clean += ex;
    }
    if (ex > 0.10) {
      ++slow;
      slow_flag += flagged(x);
    }
  }
  const double n = static_cast<double>(s.size());
  auto mean = [](double sum, int k) { return k > 0 ? sum / k : 0.0; };
  std::printf("%-34s %9.4g %6zu %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.1f%% %7.1f%% %6.1f%% %6.1f%% %7.1f%% %7.1f%%\n",
              name.c_str(), quiet, s.size(), 100 * (Mean(per_call) / quiet - 1),
              100 * steal_sum / wall_sum, 100 * wait_sum / wall_sum, 100 * self_sum / wall_sum,
              100 * n_flag / n, 100 * mean(ex_flag, n_flag),
              100 * mean(ex_clean, static_cast<int>(s.size()) - n_flag),
              100 * (excess_sum > 0 ? seen_sum / excess_sum : 0), 100 * mean(slow_flag, slow),
              100 * WindowSpread(s, o.window_s, [](const Sample&) { return true; }));
  std::printf("%-34s window spread without flagged samples: %.1f%%\n", "",
              100 * WindowSpread(s, o.window_s, [&](const Sample& x) { return !flagged(x); }));
}

void RunWorkload(const Module& module, const std::string& name, const Options& o) {
  auto exec = rt::Executor::Create(module, rt::ExecOptions{o.threads, 0});
  if (!exec.ok()) {
    std::printf("%-34s build error\n", name.c_str());
    return;
  }
  auto inputs = rt::MakeSeededInputs(module, 0);
  rt::Executor& e = **exec;
  double t0 = SteadySeconds();
  for (int i = 0; i < 2; ++i) {
    t0 = SteadySeconds();
    if (!e.Run(inputs).ok()) {
      std::printf("%-34s run error\n", name.c_str());
      return;
    }
  }
  const int64_t calls = CallsPerSample(SteadySeconds() - t0, 1e-3);
  std::vector<Sample> samples;
  const double start = SteadySeconds();
  SchedSnapshot before = ReadSchedSnapshot();
  while (SteadySeconds() - start < o.seconds) {
    double a = SteadySeconds();
    for (int64_t c = 0; c < calls; ++c) (void)e.Run(inputs);
    double b = SteadySeconds();
    SchedSnapshot after = ReadSchedSnapshot();
    SchedDelta d = Difference(before, after);
    before = std::move(after);
    Sample x;
    x.t = a - start;
    x.per_call = (b - a) / static_cast<double>(calls);
    x.calls = calls;
    x.wall = d.wall;
    x.steal = ChargedSteal(d, 0.01);
    x.wait = d.run_wait;
    x.self_stolen = d.self_stolen;
    x.others = d.others_running;
    x.flagged = SchedDisturbed(d, o.frac, 0.01, b - a);
    samples.push_back(x);
    if (o.csv != nullptr) {
      const std::string row = CsvRow({CsvField(name), CsvNumber(x.t), CsvNumber(x.per_call), std::to_string(calls),
                                      CsvNumber(x.steal), CsvNumber(x.wait), CsvNumber(x.self_stolen),
                                      std::to_string(x.others)});
      std::fputs(row.c_str(), o.csv);
    }
  }
  if (o.csv != nullptr) std::fflush(o.csv);  // this runs in a forked child
  Report(name, samples, o);
}

void RunHlo(const std::string& text, const std::string& name, const Options& o) {
  std::string err = bench::RunIsolated([&] {
    auto m = ParseModule(text);
    if (!m.ok()) return;
    auto opt = RunPipeline(**m, "default", {});
    if (opt.ok()) RunWorkload(**opt, name, o);
  });
  if (!err.empty()) std::printf("%-34s %s\n", name.c_str(), err.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> filters;
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--seconds")) o.seconds = std::atof(next());
    else if (!std::strcmp(argv[i], "--frac")) o.frac = std::atof(next());
    else if (!std::strcmp(argv[i], "--window-s")) o.window_s = std::atof(next());
    else if (!std::strcmp(argv[i], "--threads")) o.threads = std::max(1, std::atoi(next()));
    else if (!std::strcmp(argv[i], "--csv")) o.csv = std::fopen(next(), "w");
    else filters.push_back(argv[i]);
  }
  // What one snapshot costs (it is taken outside the timed region, at sample boundaries).
  std::vector<double> cost;
  bool readable = true;
  for (int i = 0; i < 200; ++i) {
    double a = SteadySeconds();
    readable &= ReadSchedSnapshot().ok;
    cost.push_back(SteadySeconds() - a);
  }
  std::printf("# counters %s, snapshot %.1f us (median of 200); frac=%g window=%gs threads=%d "
              "seconds=%g\n", readable ? "readable" : "NOT readable", 1e6 * Median(cost), o.frac,
              o.window_s, o.threads, o.seconds);
  std::printf("%-34s %9s %6s %7s %7s %7s %7s %7s %7s %7s %7s %8s %8s\n", "workload", "quiet_s",
              "n", "excess", "steal", "wait", "selfst", "flagged", "ex_flag", "ex_clean",
              "explnd", "slow_fl", "win_sprd");
  if (o.csv != nullptr) {
    std::fputs(CsvRow({"workload", "t", "per_call_s", "calls", "steal_s", "wait_s", "self_stolen_s", "others"}).c_str(),
               o.csv);
    std::fflush(o.csv);
  }
  RunHlo(bench::ReferenceHlo(16 * 1024), "(reference cache)", o);
  RunHlo(bench::ReferenceHlo(16 * 1024 * 1024), "(reference dram)", o);
  for (const std::string& path : bench::CorpusFiles()) {
    std::string name = bench::ModuleName(path);
    bool match = false;
    for (const std::string& f : filters) match |= name.find(f) != std::string::npos;
    if (!match) continue;
    std::string text;
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char buf[65536];
      size_t k;
      while ((k = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, k);
      std::fclose(f);
    }
    RunHlo(text, name, o);
  }
  if (o.csv != nullptr) std::fclose(o.csv);
  return 0;
}
