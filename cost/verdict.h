// Calibrated verdicts. A paired measurement (cost/paired.h) gives a ratio with a 95% interval;
// a VERDICT turns it into gain / slower / unconfirmed with a minimum effect delta: a gain needs
// the speedup's lower bound above 1 + delta, a slowdown its upper bound under 1 / (1 + delta),
// and an unstable measurement (stopped before its precision target) is never either.
//
// delta comes from calibration: `hlox calibrate-verdict` runs A/A pairs (a module against
// itself) and planted effects (the same module with a known amount of extra work) on this
// machine, counts false gains, false losses and detections per module size, and stores delta
// per size class at $HLOX_VERDICT_CALIBRATION, else verdict.json beside the peaks file
// (cost/calibrate.h). Without a stored file the built-in figures (docs/MEASUREMENTS.md,
// "Calibrated verdicts") are used, and every verdict names its source.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cost/eval_options.h"
#include "cost/paired.h"
#include "nlohmann/json.hpp"

namespace hlox {

class Module;

// The protocol of a verdict's paired measurement (a search's confirmation, the calibration):
// a 3 s cap (up to 2000 rounds).
TimingProtocol VerdictProtocol();

// Modules by the baseline's time per call: the noise of a paired round differs by size.
enum class SizeClass { kTiny = 0, kMedium = 1, kLarge = 2 };
inline constexpr int kNumSizeClasses = 3;
inline constexpr double kTinyBelowSeconds = 1e-4;   // under 100 us per call
inline constexpr double kMediumBelowSeconds = 0.1;  // under 100 ms per call; larger: large
SizeClass SizeClassOf(double seconds_per_call);
const char* SizeClassName(SizeClass c);

// What the calibration measured for one size class.
struct ClassCalibration {
  double delta = 0.01;           // minimum effect for a verdict
  std::string module;            // the module calibrated on
  double seconds_per_call = 0;   // its baseline time per call
  int pairs = 0;                 // A/A pairs
  int false_gain = 0, false_loss = 0;  // A/A intervals wholly above / below a speedup of 1
  struct Planted {
    double effect = 0;           // planted slowdown (0.03: the candidate takes 3% longer)
    int pairs = 0;
    // The slowdown the pairs measured (median ratio - 1): the hook and the busy loop's call
    // cost tens of nanoseconds, so on a microsecond module it exceeds `effect`.
    double measured = 0;
    int detected = 0;            // intervals wholly on the slow side of 1
    int verdicts = 0;            // verdicts "slower" (with delta)
  };
  std::vector<Planted> planted;
};

struct VerdictCalibration {
  std::array<ClassCalibration, kNumSizeClasses> classes;
  std::string source = "built-in";  // "built-in", or the file it was loaded from
  std::string cpu, isa, date;       // where and when it was measured
  // The delta of the class of a module taking `seconds_per_call`; the largest delta when that
  // is unknown (not finite or not positive).
  double DeltaFor(double seconds_per_call) const;
};

// The built-in figures (measured on the hosts docs/MEASUREMENTS.md names).
VerdictCalibration DefaultVerdictCalibration();
// $HLOX_VERDICT_CALIBRATION if set, else verdict.json in CalibrationPath()'s folder.
std::string VerdictCalibrationPath();
absl::Status SaveVerdictCalibration(const VerdictCalibration& c, const std::string& path);
absl::StatusOr<VerdictCalibration> LoadVerdictCalibration(const std::string& path);
// LoadVerdictCalibration(VerdictCalibrationPath()), else the defaults; read once per process.
const VerdictCalibration& CachedVerdictCalibration();
nlohmann::json VerdictCalibrationToJson(const VerdictCalibration& c);

// A paired measurement judged with the calibrated rule. Speedups are baseline/candidate.
struct Verdict {
  std::string outcome = "unconfirmed";  // "gain", "slower" or "unconfirmed"
  double speedup = 1, low = 1, high = 1;  // the measurement's speedup and its 95% interval
  double delta = 0;                      // minimum effect applied
  SizeClass size = SizeClass::kMedium;   // by the baseline's median time per call
  bool unstable = false;                 // no verdict: stopped before the precision target
  int rounds = 0;
  std::string calibration;               // the calibration's source
};
Verdict Judge(const PairedResult& paired, const VerdictCalibration& calibration = CachedVerdictCalibration());
// {"outcome", "speedup", "ci_low", "ci_high", "delta", "size_class", "unstable", "rounds",
//  "calibration"} for reports.
nlohmann::json VerdictToJson(const Verdict& v);
// "gain 1.073x [1.051, 1.094] (delta 0.5%, medium, 48 rounds)".
std::string VerdictLine(const Verdict& v);

// --- Calibration runs (in hlox_cost: they need the runtime) ---

struct VerdictCalibrationPlan {
  int pairs = 100;                        // A/A pairs per module
  std::vector<double> planted = {0.03, 0.10};
  int planted_pairs = 40;                 // pairs per planted effect
  TimingProtocol protocol = VerdictProtocol();  // of every pair
  int threads = 1;
  uint64_t seed = 1;
};

// One measured pair, for progress lines and the raw record.
struct CalibrationPair {
  double planted = 0;  // 0 for A/A
  int index = 0;
  PairedResult result;
};

// Runs the plan on one module (its default pipeline's output): pilot timing, the A/A pairs,
// then each planted effect (the candidate runs the module, then a calibrated busy loop of
// `effect` times the pilot's median time per call). Fills `out`, its delta from the A/A pairs
// (ChooseDelta) before the planted pairs are judged with it; `on_pair` sees every pair.
absl::Status CalibrateModuleVerdicts(const Module& module, const std::string& name,
                                     const VerdictCalibrationPlan& plan, ClassCalibration& out,
                                     const std::function<void(const CalibrationPair&)>& on_pair = {});
// The smallest delta (0.1% steps, at least 0.5%) at which no more than 1% of the A/A pairs'
// intervals (rounded down, at least one pair allowed per 100) lie wholly beyond it on either
// side, from their speedup intervals.
double ChooseDelta(const std::vector<std::pair<double, double>>& aa_speedup_intervals);

}  // namespace hlox
