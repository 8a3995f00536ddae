// Kendall bench: for several corpus modules, decision vectors for the "fusion-only" pipeline
// (nothing fused, the default, uniform random vectors and random moves from the default, as
// searches make them), each candidate's roofline time
// (analytical, calibrated peaks) against its measured median. Reports Kendall's tau per module,
// in the same run, for the roofline under the old fused-FLOPs rule (FusionFlopsRule::kDemand,
// the comparison baseline) and the runtime's rule (kRuntime, the default), each also with the
// per-kernel and per-fusion overheads measured in the same run on chains of tiny kernels (+o),
// the new rule with the default overheads (MachinePeaks, +d), the per-kind kernel costs
// (OverheadRule::kPerKind, kind: what roofline_seconds reports), for bytes
// moved and op count as baselines, and for the new roofline against the per-candidate minimum
// (which contention disturbs less); then the median of each column over the modules.
//   cost_kendall_bench [--candidates N] [--modules a,b,...] [--time-cap S] [--threads T]
//                      [--verbose (one line per candidate)]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cost/bench_util.h"
#include "cost/analytical.h"
#include "cost/calibrate.h"
#include "cost/kernel_model.h"
#include "cost/stats.h"
#include "ir/parser.h"
#include "passes/pipeline.h"

using namespace hlox;

namespace {

// Seconds of runtime overhead per kernel: a chain of 64 tiny kernels (negates on 4 floats,
// each plain or each in its own fusion), per kernel.
double MeasureKernelOverhead(int threads, bool fused) {
  std::string text = "HloModule chain\n";
  for (int i = 1; fused && i <= 64; ++i) {
    text += absl::StrCat("f", i, " {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n");
  }
  text += "ENTRY e {\n  x0 = f32[4] parameter(0)\n";
  for (int i = 1; i <= 64; ++i) {
    text += absl::StrCat(i == 64 ? "  ROOT " : "  ", "x", i, " = f32[4] ",
                         fused ? absl::StrCat("fusion(x", i - 1, "), kind=kLoop, calls=f", i)
                               : absl::StrCat("negate(x", i - 1, ")"),
                         "\n");
  }
  text += "}\n";
  auto m = ParseModule(text);
  if (!m.ok()) return 0;
  TimingProtocol p;
  bool ok = false;
  CostDistribution d = bench::MeasureModule(**m, p, 0, threads, &ok);
  return ok ? d.median / 64 : 0;
}

// Columns of the table (the taus), in order.
constexpr const char* kColumns[] = {"tau_old", "tau_new", "tau_old+o", "tau_new+o", "tau_new+d",
                                    "tau_kind", "tau_bytes", "tau_ops", "tau_new_min"};
constexpr int kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);

}  // namespace

int main(int argc, char** argv) {
  int candidates = 24, threads = 1;
  bool verbose = false;
  double time_cap = 0.3;
  std::string modules =
      "hloenv_mlp_regression_train_step,gh_simple_linear_train,hloenv_toy_nn_loss,"
      "gh_linear_adam,hloenv_maml_flax_train_step,gh_gpt2_decode_tp1,hloenv_gans_normal,"
      "hloenv_nngp_serial_kernel,alpa_truncated_normal_pre,hloenv_nux_randint";
  for (int i = 1; i < argc; ++i) {
    auto next = [&] { return i + 1 < argc ? argv[++i] : "0"; };
    if (!std::strcmp(argv[i], "--candidates")) candidates = std::atoi(next());
    else if (!std::strcmp(argv[i], "--modules")) modules = next();
    else if (!std::strcmp(argv[i], "--time-cap")) time_cap = std::atof(next());
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(next());
    else if (!std::strcmp(argv[i], "--verbose")) verbose = true;
  }
  // The roofline needs this machine's peaks: without a stored calibration (`hlox calibrate`),
  // measure them in this run rather than rank with the conservative defaults.
  MachinePeaks peaks = CachedPeaks();
  if (peaks.source == "defaults") peaks = MeasurePeaks(threads, 0.2);
  std::printf("# peaks (%s): %.1f GFLOP/s, %.1f GB/s (1 thread); threads=%d candidates=%d\n",
              peaks.source.c_str(), peaks.gflops_1, peaks.bandwidth_gbs_1, threads, candidates);
  const double overhead = MeasureKernelOverhead(threads, false);
  const double fusion_overhead = std::max(0.0, MeasureKernelOverhead(threads, true) - overhead);
  std::printf("# measured per-kernel overhead: %.3g s, %.3g s more per fusion (+o columns)\n",
              overhead, fusion_overhead);
  std::printf("%-36s %6s", "module", "cands");
  for (const char* c : kColumns) std::printf(" %11s", c);
  std::printf(" %11s %11s\n", "min_s", "max_s");
  TimingProtocol p;
  p.time_cap_seconds = time_cap;
  AnalyticalOptions ao;
  ao.peaks = peaks;
  ao.threads = threads;
  // Each module runs in a forked child; its taus come back through shared memory.
  double* shared = static_cast<double*>(mmap(nullptr, sizeof(double) * (kNumColumns + 1),
                                             PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) return 1;
  std::vector<std::vector<double>> columns(kNumColumns);
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
    shared[kNumColumns] = 0;  // set to 1 by a child that reports
    std::string err = bench::RunIsolated([&] {
      std::mt19937_64 rng(12345);
      // Roofline variants: old/new fused-FLOPs rule, without and with the kernel overhead.
      // +o: the overheads measured in this run; +d: the default overheads (MachinePeaks).
      // kind: the per-kind kernel costs (OverheadRule::kPerKind, the default); the others flat.
      std::vector<AnalyticalOptions> variants(6, ao);
      for (int v = 0; v < 5; ++v) variants[v].overhead = OverheadRule::kFlat;
      variants[0].fusion_flops = variants[2].fusion_flops = FusionFlopsRule::kDemand;
      for (int v : {0, 1}) variants[v].peaks.kernel_overhead_us = variants[v].peaks.fusion_overhead_us = 0;
      for (int v : {2, 3}) {
        variants[v].peaks.kernel_overhead_us = overhead * 1e6;
        variants[v].peaks.fusion_overhead_us = fusion_overhead * 1e6;
      }
      std::vector<std::vector<double>> roof(variants.size());
      std::vector<double> bytes, ops, measured, measured_min;
      for (int c = 0; c < candidates; ++c) {
        // Candidate 0 fuses nothing, 1 is the default policy; then, alternately, uniform random
        // vectors and the default with each site changed with probability 0.15 (the moves a
        // search from the default makes).
        DecisionPolicy policy = [&](const std::string&, const Module&,
                                    const std::vector<DecisionSite>& sites) {
          DecisionVector d;
          std::bernoulli_distribution flip(0.15);
          for (const DecisionSite& s : sites) {
            const int n = static_cast<int>(s.choices.size());
            std::uniform_int_distribution<int> pick(0, n - 1);
            const int other = n > 1 ? (s.default_choice + 1 + pick(rng) % (n - 1)) % n : 0;
            if (c == 0) d.push_back(0);
            else if (c == 1) d.push_back(s.default_choice);
            else if (c % 2 == 0) d.push_back(pick(rng));
            else d.push_back(flip(rng) ? other : s.default_choice);
          }
          return d;
        };
        auto opt = RunPipelineWithPolicy(**m, "fusion-only", policy);
        if (!opt.ok()) continue;
        bool ok = false;
        CostDistribution d = bench::MeasureModule(**opt, p, 0, threads, &ok);
        if (!ok) continue;
        for (size_t v = 0; v < variants.size(); ++v) {
          roof[v].push_back(ComputeAnalyticalCost(**opt, variants[v]).roofline_seconds);
        }
        AnalyticalCost a = ComputeAnalyticalCost(**opt, ao);
        if (verbose) {
          int kernels = 0, fusions = 0;
          for (const Kernel& k : BuildKernelModel(*(*opt)->entry()).kernels) {
            ++kernels;
            fusions += k.instr->opcode() == Opcode::kFusion;
          }
          std::printf("  cand %2d measured %.4g min %.4g roof_old %.4g roof_new %.4g roof_new+o %.4g roof_kind %.4g "
                      "flops_new %.4g bytes %.4g kernels %d fusions %d\n", c, d.median, d.min,
                      roof[0].back(), roof[1].back(), roof[3].back(), roof[5].back(), a.flops, a.bytes_moved,
                      kernels, fusions);
        }
        bytes.push_back(a.bytes_moved);
        ops.push_back(static_cast<double>(a.op_count));
        measured.push_back(d.median);
        measured_min.push_back(d.min);
      }
      if (measured.size() < 3) {
        std::printf("%-36s too few candidates ran (%zu)\n", name.c_str(), measured.size());
        return;
      }
      const double taus[kNumColumns] = {
          KendallTau(roof[0], measured), KendallTau(roof[1], measured), KendallTau(roof[2], measured),
          KendallTau(roof[3], measured), KendallTau(roof[4], measured), KendallTau(roof[5], measured),
          KendallTau(bytes, measured),
          KendallTau(ops, measured),     KendallTau(roof[1], measured_min)};
      std::printf("%-36s %6zu", name.c_str(), measured.size());
      for (double t : taus) std::printf(" %11.3f", t);
      std::printf(" %11.4g %11.4g\n", *std::min_element(measured.begin(), measured.end()),
                  *std::max_element(measured.begin(), measured.end()));
      std::fflush(stdout);
      for (int k = 0; k < kNumColumns; ++k) shared[k] = taus[k];
      shared[kNumColumns] = 1;
    });  // each module in a forked child: a crashing kernel costs one line
    if (!err.empty()) std::printf("%-36s %s\n", name.c_str(), err.c_str());
    if (shared[kNumColumns] == 1) {
      for (int k = 0; k < kNumColumns; ++k) columns[k].push_back(shared[k]);
    }
  }
  std::printf("%-36s %6zu", "median", columns[0].size());
  for (const auto& c : columns) std::printf(" %11.3f", Median(c));
  std::printf("\n");
  munmap(shared, sizeof(double) * (kNumColumns + 1));
  return 0;
}
