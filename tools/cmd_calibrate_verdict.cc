// hlox calibrate-verdict FILE... [--pairs N] [--planted 0.03,0.1] [--planted-pairs N]
//   [--time-cap S] [--threads N] [--seed S] [--raw PATH] [--output PATH] [--no-save] [--json]:
// calibrates the paired verdict on this machine. For each module (its default pipeline's
// output) it runs A/A pairs (the module against itself: every interval should hold 1) and
// planted slowdowns (the same module plus a known busy loop), prints the false-gain and
// false-loss rates, the detection power per effect and the minimum effect delta it chooses,
// and stores delta per size class (cost/verdict.h) for every later verdict on this machine.
// --raw writes every pair (rounds included) as JSON lines, for analysis.
#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>

#include "absl/strings/str_format.h"
#include "common/cpu_isa.h"
#include "cost/verdict.h"
#include "ir/parser.h"
#include "nlohmann/json.hpp"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct CalibrateVerdictOptions {
  std::vector<std::string> files;
  VerdictCalibrationPlan plan;
  double time_cap = 0;  // 0: the verdict protocol's
  std::string raw, output;
  bool no_save = false, json = false;
};

std::string Today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// The share as a percentage with its count: "3.0% (3/100)".
std::string Share(int k, int n) { return absl::StrFormat("%.1f%% (%d/%d)", n ? 100.0 * k / n : 0.0, k, n); }

int RunCalibrateVerdict(CalibrateVerdictOptions& o) {
  if (o.time_cap > 0) o.plan.protocol.time_cap_seconds = o.time_cap;
  std::ofstream raw;
  if (!o.raw.empty()) {
    raw.open(o.raw, std::ios::trunc);
    if (!raw) {
      std::cerr << "hlox calibrate-verdict: cannot write " << o.raw << "\n";
      return 1;
    }
  }
  const std::string path = o.output.empty() ? VerdictCalibrationPath() : o.output;
  VerdictCalibration cal = DefaultVerdictCalibration();
  if (absl::StatusOr<VerdictCalibration> stored = LoadVerdictCalibration(path); stored.ok()) cal = *stored;
  std::array<bool, kNumSizeClasses> calibrated{};
  nlohmann::json report = nlohmann::json::array();
  for (const std::string& file : o.files) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleFile(file);
    if (!module.ok()) {
      std::cerr << "hlox calibrate-verdict: " << module.status().message() << "\n";
      return 1;
    }
    ClassCalibration c;
    int unstable = 0;
    auto on_pair = [&](const CalibrationPair& p) {
      if (p.result.unstable && p.planted == 0) ++unstable;
      const double s = 1 / p.result.ratio, lo = 1 / p.result.ci_high, hi = 1 / p.result.ci_low;
      std::fprintf(stderr, "  %s %s #%d: speedup %.4f [%.4f, %.4f] %zu rounds x %lld calls%s\n", file.c_str(),
                   p.planted == 0 ? "A/A" : absl::StrFormat("+%g%%", 100 * p.planted).c_str(), p.index, s, lo, hi,
                   p.result.ratios.size(), static_cast<long long>(p.result.calls_per_sample),
                   p.result.unstable ? " unstable" : "");
      if (raw) {
        nlohmann::json j{{"module", file},          {"planted", p.planted},
                         {"index", p.index},        {"ratio", p.result.ratio},
                         {"ci_low", p.result.ci_low}, {"ci_high", p.result.ci_high},
                         {"unstable", p.result.unstable}, {"calls_per_sample", p.result.calls_per_sample},
                         {"baseline", p.result.baseline.samples}, {"candidate", p.result.candidate.samples}};
        raw << j.dump() << "\n" << std::flush;
      }
    };
    if (absl::Status st = CalibrateModuleVerdicts(**module, file, o.plan, c, on_pair); !st.ok()) {
      std::cerr << "hlox calibrate-verdict: " << file << ": " << st.message() << "\n";
      return 1;
    }
    const SizeClass size = SizeClassOf(c.seconds_per_call);
    std::cout << absl::StrFormat("%s: %s (%.3g s per call)\n", file, SizeClassName(size), c.seconds_per_call)
              << "  A/A pairs          " << c.pairs << " (" << unstable << " unstable)\n"
              << "  false gain         " << Share(c.false_gain, c.pairs) << "   (interval wholly above 1)\n"
              << "  false loss         " << Share(c.false_loss, c.pairs) << "   (interval wholly below 1)\n"
              << absl::StrFormat("  delta              %.1f%%\n", 100 * c.delta);
    nlohmann::json planted = nlohmann::json::array();
    double smallest = 0;
    for (const ClassCalibration::Planted& p : c.planted) {
      std::cout << absl::StrFormat("  planted +%-7s   (measured %+.2f%%) detected %s, verdict 'slower' %s\n",
                                   absl::StrFormat("%g%%", 100 * p.effect), 100 * p.measured,
                                   Share(p.detected, p.pairs), Share(p.verdicts, p.pairs));
      if (smallest == 0 && p.pairs > 0 && p.detected >= 0.8 * p.pairs) smallest = p.measured;
      planted.push_back({{"effect", p.effect}, {"measured", p.measured}, {"pairs", p.pairs},
                         {"detected", p.detected}, {"verdicts", p.verdicts}});
    }
    if (smallest > 0) {
      std::cout << absl::StrFormat("  smallest planted effect detected in >= 80%% of pairs: %.2f%% (as measured)\n",
                                   100 * smallest);
    }
    report.push_back({{"module", file}, {"size_class", SizeClassName(size)}, {"seconds_per_call", c.seconds_per_call},
                      {"pairs", c.pairs}, {"unstable", unstable}, {"false_gain", c.false_gain},
                      {"false_loss", c.false_loss}, {"delta", c.delta}, {"planted", planted}});
    // Two modules of one class: the larger delta stands.
    ClassCalibration& slot = cal.classes[static_cast<int>(size)];
    if (!calibrated[static_cast<int>(size)] || c.delta > slot.delta) slot = c;
    calibrated[static_cast<int>(size)] = true;
  }
  cal.cpu = CpuModelName();
  cal.isa = std::string(IsaName(ActiveIsa()));
  cal.date = Today();
  if (o.json) std::cout << report.dump(2) << "\n";
  if (o.no_save) return 0;
  if (absl::Status st = SaveVerdictCalibration(cal, path); !st.ok()) {
    std::cerr << "hlox calibrate-verdict: " << st.message() << "\n";
    return 1;
  }
  std::cerr << "stored in " << path << "\n";
  return 0;
}

}  // namespace

void RegisterCalibrateVerdict(CLI::App& app) {
  auto o = std::make_shared<CalibrateVerdictOptions>();
  auto* cmd = app.add_subcommand("calibrate-verdict",
                                 "A/A and planted-effect pairs: calibrate the paired verdict's minimum effect");
  cmd->add_option("files", o->files, "HLO modules (one per size class: tiny, medium, large)")->required();
  cmd->add_option("--pairs", o->plan.pairs, "A/A pairs per module")->check(CLI::Range(1, 100000));
  cmd->add_option("--planted", o->plan.planted, "planted slowdowns (fractions, e.g. 0.03,0.1)")
      ->delimiter(',')
      ->check(CLI::Range(0.0001, 10.0));
  cmd->add_option("--planted-pairs", o->plan.planted_pairs, "pairs per planted effect")->check(CLI::Range(0, 100000));
  cmd->add_option("--time-cap", o->time_cap, "seconds per pair (default: the verdict protocol's 3)")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--threads", o->plan.threads, "runtime threads")->check(CLI::Range(1, 1024));
  cmd->add_option("--seed", o->plan.seed, "seed of inputs and round order");
  cmd->add_option("--raw", o->raw, "write every pair as a JSON line here");
  cmd->add_option("--output,-o", o->output, "calibration file (default $HLOX_VERDICT_CALIBRATION or verdict.json beside the peaks)");
  cmd->add_flag("--no-save", o->no_save, "print only");
  cmd->add_flag("--json", o->json, "also print the figures as JSON");
  cmd->callback([o] { ExitCode() = RunCalibrateVerdict(*o); });
}

}  // namespace hlox::cli
