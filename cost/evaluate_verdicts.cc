// Verdict calibration runs: A/A pairs and planted slowdowns of one module through the runtime.
#include <algorithm>
#include <cmath>

#include "cost/evaluate.h"
#include "cost/stats.h"
#include "cost/timing.h"
#include "cost/verdict.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

// A busy loop of known length: a dependent multiply-add chain the compiler cannot fold. Its
// cost is fitted as a + b * iterations from batches of short spins (short spins are what a
// planted effect runs, and they pay the call and loop set-up), so `Seconds(s)` spins about s
// seconds without reading a clock: a clock read costs tens of nanoseconds, more than a 3%
// effect on a microsecond module.
class BusyLoop {
 public:
  BusyLoop() {
    const double t_short = Time(kShort), t_long = Time(kLong);
    per_iter_ = std::max(1e-12, (t_long - t_short) / static_cast<double>(kLong - kShort));
    fixed_ = std::max(0.0, t_short - per_iter_ * kShort);
  }
  void Seconds(double s) const {
    if (s > fixed_) Spin(static_cast<int64_t>(std::llround((s - fixed_) / per_iter_)));
  }

 private:
  static constexpr int64_t kShort = 16, kLong = 4096, kCalls = 2000;
  // Best of several batches of kCalls spins of `iters`, per spin.
  static double Time(int64_t iters) {
    double best = INFINITY;
    for (int rep = 0; rep < 9; ++rep) {
      const double t0 = SteadySeconds();
      for (int64_t c = 0; c < kCalls; ++c) Spin(iters);
      best = std::min(best, (SteadySeconds() - t0) / kCalls);
    }
    return best;
  }
  [[gnu::noinline]] static void Spin(int64_t iters) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int64_t i = 0; i < iters; ++i) {
      x = x * 0x5851F42D4C957F2Dull + 0x14057B7EF767814Full;
      asm volatile("" : "+r"(x));
    }
  }
  double per_iter_ = 1e-9, fixed_ = 0;
};

}  // namespace

absl::Status CalibrateModuleVerdicts(const Module& module, const std::string& name,
                                     const VerdictCalibrationPlan& plan, ClassCalibration& out,
                                     const std::function<void(const CalibrationPair&)>& on_pair) {
  // Two modules, each the default pipeline's output, as a real pair has (a baseline and a
  // candidate optimized apart): nothing compiled for one side is shared with the other.
  absl::StatusOr<std::unique_ptr<Module>> optimized = RunPipeline(module, "default", {});
  if (!optimized.ok()) return optimized.status();
  absl::StatusOr<std::unique_ptr<Module>> twin = RunPipeline(module, "default", {});
  if (!twin.ok()) return twin.status();
  const Module& m = **optimized;
  // Pilot: the module's median time per call on the inputs of `seed` (its running time can
  // depend on them: gh_bert_optimizer_tp1 takes 2-6 ms by seed).
  auto per_call = [&](uint64_t seed, double cap) -> absl::StatusOr<double> {
    const rt::ExecOptions eo{plan.threads, seed};
    absl::StatusOr<std::unique_ptr<rt::Executor>> ex = rt::Executor::Create(m, eo);
    if (!ex.ok()) return ex.status();
    const std::vector<rt::Value> in = rt::MakeSeededInputs(m, seed);
    TimingProtocol pilot;
    pilot.time_cap_seconds = std::min(cap, plan.protocol.time_cap_seconds);
    absl::StatusOr<CostDistribution> d = MeasureCostOrError([&] { return (*ex)->Run(in).status(); }, pilot, seed);
    if (!d.ok()) return d.status();
    return d->median;
  };
  absl::StatusOr<double> pilot = per_call(plan.seed, 2.0);  // for the size class
  if (!pilot.ok()) return pilot.status();
  out.seconds_per_call = *pilot;
  out.module = name;
  out.pairs = out.false_gain = out.false_loss = 0;
  out.planted.clear();
  const BusyLoop busy;
  std::vector<std::pair<double, double>> aa;  // A/A speedup intervals
  std::vector<double> planted_ratios;         // this planted level's candidate/baseline ratios
  VerdictCalibration judged;                  // every class at out.delta (set after the A/A pairs)
  auto run_pairs = [&](double effect, int count) -> absl::Status {
    for (int i = 0; i < count; ++i) {
      EvalOptions eval;
      eval.threads = plan.threads;
      eval.protocol = plan.protocol;
      eval.seed = plan.seed * 100003 + static_cast<uint64_t>(effect * 1e4) * 1009 + i;
      // A planted effect is sized on the pair's own inputs (sized on the pilot's, a nominal 3%
      // on that module measured 1.9% in one run and 4.2% in another).
      double extra = 0;
      if (effect > 0) {
        absl::StatusOr<double> call = per_call(eval.seed, 0.5);
        if (!call.ok()) return call.status();
        extra = effect * *call;
      }
      absl::StatusOr<PairedResult> r =
          MeasurePairedModules(m, **twin, eval, extra > 0 ? std::function<void()>([&] { busy.Seconds(extra); }) : nullptr);
      if (!r.ok()) return r.status();
      if (on_pair) on_pair({effect, i, *r});
      const Verdict v = Judge(*r, judged);  // speedups; the planted pairs' delta is the A/A one
      if (effect == 0) {
        ++out.pairs;
        out.false_gain += r->CandidateFaster();
        out.false_loss += r->CandidateSlower();
        aa.emplace_back(v.low, v.high);
      } else {
        ClassCalibration::Planted& p = out.planted.back();
        ++p.pairs;
        planted_ratios.push_back(r->ratio);
        p.detected += r->CandidateSlower();
        p.verdicts += v.outcome == "slower";
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status st = run_pairs(0, plan.pairs); !st.ok()) return st;
  out.delta = ChooseDelta(aa);
  for (ClassCalibration& k : judged.classes) k.delta = out.delta;
  for (double effect : plan.planted_pairs > 0 ? plan.planted : std::vector<double>{}) {
    out.planted.push_back({effect, 0, 0, 0, 0});
    planted_ratios.clear();
    if (absl::Status st = run_pairs(effect, plan.planted_pairs); !st.ok()) return st;
    out.planted.back().measured = Median(planted_ratios) - 1;
  }
  return absl::OkStatus();
}

}  // namespace hlox
