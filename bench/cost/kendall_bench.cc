// Kendall bench: for several corpus modules, random decision vectors for the "fusion-only"
// pipeline (every fusion invocation's sites chosen uniformly), each candidate's roofline time
// (analytical, calibrated peaks) against its measured median. Reports Kendall's tau per module
// for the roofline (against the median and against the per-candidate minimum, which
// contention disturbs less), for the roofline plus a per-kernel dispatch overhead (measured in the same
// run on a chain of tiny ops), and for bytes moved and op count as baselines.
//   cost_kendall_bench [--candidates N] [--modules a,b,...] [--time-cap S] [--threads T]
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "bench/cost/bench_util.h"
#include "cost/analytical.h"
#include "cost/calibrate.h"
#include "cost/kernel_model.h"
#include "cost/stats.h"
#include "ir/parser.h"
#include "passes/pipeline.h"

using namespace hlox;

namespace {

// Seconds of runtime overhead per kernel: a chain of 64 negates on 4 floats, per negate.
double MeasureKernelOverhead(int threads) {
  std::string text = "HloModule chain\nENTRY e {\n  x0 = f32[4] parameter(0)\n";
  for (int i = 1; i <= 64; ++i) {
    text += (i == 64 ? "  ROOT x" : "  x") + std::to_string(i) + " = f32[4] negate(x" +
            std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  auto m = ParseModule(text);
  if (!m.ok()) return 0;
  TimingProtocol p;
  bool ok = false;
  CostDistribution d = bench::MeasureModule(**m, p, 0, threads, &ok);
  return ok ? d.median / 64 : 0;
}

double EntryKernels(const Module& m) {
  return static_cast<double>(BuildKernelModel(*m.entry()).kernels.size());
}

}  // namespace

int main(int argc, char** argv) {
  int candidates = 24, threads = 1;
  double time_cap = 0.3;
  std::string modules =
      "hloenv_mlp_regression_train_step,gh_simple_linear_train,hloenv_toy_nn_loss,"
      "gh_linear_adam,hloenv_maml_flax_train_step,gh_gpt2_decode_tp1";
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--candidates")) candidates = std::atoi(next());
    else if (!std::strcmp(argv[i], "--modules")) modules = next();
    else if (!std::strcmp(argv[i], "--time-cap")) time_cap = std::atof(next());
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(next());
  }
  // The roofline needs this machine's peaks: without a stored calibration (`hlox calibrate`),
  // measure them in this run rather than rank with the conservative defaults.
  MachinePeaks peaks = CachedPeaks();
  if (peaks.source == "defaults") peaks = MeasurePeaks(threads, 0.2);
  std::printf("# peaks (%s): %.1f GFLOP/s, %.1f GB/s (1 thread); threads=%d candidates=%d\n",
              peaks.source.c_str(), peaks.gflops_1, peaks.bandwidth_gbs_1, threads, candidates);
  const double overhead = MeasureKernelOverhead(threads);
  std::printf("# measured per-kernel overhead: %.3g s\n", overhead);
  std::printf("%-36s %6s %9s %9s %9s %9s %9s %12s %12s\n", "module", "cands", "tau_roof",
              "tau_r+ovh", "tau_bytes", "tau_ops", "tau_r_min", "min_s", "max_s");
  TimingProtocol p;
  p.time_cap_seconds = time_cap;
  AnalyticalOptions ao;
  ao.peaks = peaks;
  ao.threads = threads;
  std::stringstream ss(modules);
  std::string name;
  while (std::getline(ss, name, ',')) {
    std::string path;
    for (const std::string& f : bench::CorpusFiles()) {
      if (bench::ModuleName(f) == name) path = f;
    }
    if (path.empty()) {
      std::printf("%-36s not in corpus\n", name.c_str());
      continue;
    }
    auto m = ParseModuleFile(path);
    if (!m.ok()) continue;
    std::string err = bench::RunIsolated([&] {
      std::mt19937_64 rng(12345);
      std::vector<double> roof, roof_ovh, bytes, ops, measured, measured_min;
      for (int c = 0; c < candidates; ++c) {
        DecisionPolicy policy = [&](const std::string&, const Module&,
                                    const std::vector<DecisionSite>& sites) {
          DecisionVector d;
          for (const DecisionSite& s : sites) {
            std::uniform_int_distribution<int> pick(0, static_cast<int>(s.choices.size()) - 1);
            d.push_back(c == 0 ? 0 : pick(rng));  // candidate 0: nothing fused
          }
          return d;
        };
        auto opt = RunPipelineWithPolicy(**m, "fusion-only", policy);
        if (!opt.ok()) continue;
        bool ok = false;
        CostDistribution d = bench::MeasureModule(**opt, p, 0, threads, &ok);
        if (!ok) continue;
        AnalyticalCost a = ComputeAnalyticalCost(**opt, ao);
        roof.push_back(a.roofline_seconds);
        roof_ovh.push_back(a.roofline_seconds + overhead * EntryKernels(**opt));
        bytes.push_back(a.bytes_moved);
        ops.push_back(static_cast<double>(a.op_count));
        measured.push_back(d.median);
        measured_min.push_back(d.min);
      }
      if (measured.size() < 3) {
        std::printf("%-36s too few candidates ran (%zu)\n", name.c_str(), measured.size());
        return;
      }
      double tr = KendallTau(roof, measured);
      std::printf("%-36s %6zu %9.3f %9.3f %9.3f %9.3f %9.3f %12.4g %12.4g\n", name.c_str(),
                  measured.size(), tr, KendallTau(roof_ovh, measured), KendallTau(bytes, measured),
                  KendallTau(ops, measured), KendallTau(roof, measured_min),
                  *std::min_element(measured.begin(), measured.end()),
                  *std::max_element(measured.begin(), measured.end()));
    });  // each module in a forked child: a crashing kernel costs one line
    if (!err.empty()) std::printf("%-36s %s\n", name.c_str(), err.c_str());
  }
  return 0;
}
