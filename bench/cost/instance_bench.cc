// cost_instance_bench MODULE [--pairs N] [--seconds S]: A/A pairs of one module (its default
// pipeline's output against itself) under paired designs that differ in how the two sides get
// their executors, interleaved pair by pair so the host's state is shared:
//   same       one executor runs both sides: no instance can differ (the floor)
//   base-first one executor per side, the baseline's built first
//   cand-first one executor per side, the candidate's built first
//   instances  MeasurePairedModules: several instances per side, built in random order
// Each uses the paired protocol otherwise (ABBA rounds, one batch size, the verdict's time cap).
// Reported per design: the mean speedup over pairs (1 = no lean) with its standard error, the
// spread between pairs, the mean interval half-width, and how many intervals exclude 1.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cost/evaluate.h"
#include "cost/paired.h"
#include "cost/verdict.h"
#include "ir/parser.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

struct Tally {
  std::vector<double> speedups;
  double halfwidth = 0;
  int above = 0, below = 0;
  void Add(const PairedResult& r) {
    speedups.push_back(1 / r.ratio);
    halfwidth += (1 / r.ci_low - 1 / r.ci_high) / 2;
    above += r.ci_high < 1;
    below += r.ci_low > 1;
  }
};

// One executor per side (or one for both): the same closure type for both sides.
absl::StatusOr<PairedResult> OneEach(const Module& m, const EvalOptions& o, int design) {
  const rt::ExecOptions eo{o.threads, o.seed};
  std::unique_ptr<rt::Executor> e[2];
  const int first = design == 2 ? 1 : 0;
  for (int side : {first, 1 - first}) {
    if (design == 0 && side == 1) continue;
    absl::StatusOr<std::unique_ptr<rt::Executor>> x = rt::Executor::Create(m, eo);
    if (!x.ok()) return x.status();
    e[side] = *std::move(x);
  }
  const std::vector<rt::Value> in = rt::MakeSeededInputs(m, o.seed);
  rt::Executor* ex[2] = {e[0].get(), design == 0 ? e[0].get() : e[1].get()};
  return MeasurePairedOrError([&ex, &in](int side, int) { return ex[side]->Run(in).status(); }, 1, o.protocol,
                              o.seed);
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cost_instance_bench MODULE [--pairs N] [--seconds S]\n");
    return 2;
  }
  int pairs = 20;
  double seconds = VerdictProtocol().time_cap_seconds;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--pairs") pairs = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--seconds") seconds = std::atof(argv[i + 1]);
  }
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModuleFile(argv[1]);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s\n", std::string(parsed.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<std::unique_ptr<Module>> m = RunPipeline(**parsed, "default", {});
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", std::string(m.status().message()).c_str());
    return 1;
  }
  const char* names[] = {"same", "base-first", "cand-first", "instances"};
  Tally tallies[4];
  for (int i = 0; i < pairs; ++i) {
    for (int design = 0; design < 4; ++design) {
      EvalOptions o;
      o.seed = 1000 + i;
      o.protocol = VerdictProtocol();
      o.protocol.time_cap_seconds = seconds;
      absl::StatusOr<PairedResult> r = design == 3 ? MeasurePairedModules(**m, **m, o) : OneEach(**m, o, design);
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", std::string(r.status().message()).c_str());
        return 1;
      }
      tallies[design].Add(*r);
    }
    std::fprintf(stderr, "pair %d of %d\n", i + 1, pairs);
  }
  std::printf("module %s, %d A/A pairs per design, %.1f s each, 1 thread\n", argv[1], pairs, seconds);
  std::printf("%-11s %-22s %-10s %-12s %s\n", "design", "mean speedup +- SE", "sd pairs", "half-width", "intervals excluding 1 (above / below)");
  for (int d = 0; d < 4; ++d) {
    const Tally& t = tallies[d];
    double mean = 0, var = 0;
    for (double s : t.speedups) mean += s / t.speedups.size();
    for (double s : t.speedups) var += (s - mean) * (s - mean) / (t.speedups.size() - 1);
    std::printf("%-11s %.4f +- %.4f        %.4f     %.4f       %d / %d\n", names[d], mean,
                std::sqrt(var / t.speedups.size()), std::sqrt(var), t.halfwidth / t.speedups.size(), t.above, t.below);
  }
  return 0;
}

}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
