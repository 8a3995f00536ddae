// hlox calibrate [--threads N] [--seconds S] [--output PATH] [--no-save]: measures this machine's
// peak f32 GFLOP/s and memory bandwidth for 1 and N threads, prints them and stores them as
// JSON (default $HLOX_CALIBRATION or ~/.cache/hlox/calibration.json) for the roofline model.
// It also measures what one small kernel of each kind costs in this runtime (--kernel-seconds,
// cmd_calibrate_kernels.h) for the roofline's per-kind rule, and times the host-speed references (cost/host_reference.h) --reference-runs times and
// stores their fastest runs as their quiet times (cost/host_reference_store.h).
#include <iostream>

#include "cost/calibrate.h"
#include "cost/host_reference_store.h"
#include "cost/provenance.h"
#include "tools/cmd_calibrate_kernels.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct CalibrateOptions {
  int threads = 0;  // 0: all cores
  double seconds = 0.3;
  std::string output;
  bool no_save = false;
  double kernel_seconds = 3;  // 0: keep the default per-kind kernel costs
  int reference_runs = 200;  // 0: leave the reference quiet times alone
};

int RunCalibrate(const CalibrateOptions& o) {
  int threads = o.threads > 0 ? o.threads : CoreCount();
  MachinePeaks p = MeasurePeaks(threads, o.seconds);
  if (o.kernel_seconds > 0) {
    p.kinds = MeasureKernelKindCosts(o.kernel_seconds, p.kinds);
    p.kinds_source = "measured";
  }
  std::cout << PeaksToJsonString(p) << "\n";
  if (o.no_save) return 0;
  std::string path = o.output.empty() ? CalibrationPath() : o.output;
  if (absl::Status st = SavePeaks(p, path); !st.ok()) {
    std::cerr << "hlox calibrate: " << st.message() << "\n";
    return 1;
  }
  std::cerr << "stored in " << path << "\n";
  if (o.reference_runs <= 0) return 0;
  const ReferenceQuiet q = CalibrateReferenceQuiet(o.reference_runs);
  const std::string ref_path = ReferenceQuietPath();
  if (absl::Status st = SaveReferenceQuiet(q, ref_path); !st.ok()) {
    std::cerr << "hlox calibrate: " << st.message() << "\n";
    return 1;
  }
  std::cerr << "host reference quiet times: compute " << q.compute << " s, memory " << q.memory
            << " s; stored in " << ref_path << "\n";
  return 0;
}

}  // namespace

void RegisterCalibrate(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate", "Measure and store this machine's peak GFLOP/s and bandwidth");
  cmd->add_option("--threads", o->threads, "threads for the multi-threaded figures (default: all cores)");
  cmd->add_option("--seconds", o->seconds, "seconds per test")->check(CLI::Range(0.01, 60.0));
  cmd->add_option("--output,-o", o->output, "file to store (default $HLOX_CALIBRATION or ~/.cache/hlox/calibration.json)");
  cmd->add_option("--kernel-seconds", o->kernel_seconds,
                  "seconds for the per-kind kernel costs (0: keep the defaults)")
      ->check(CLI::Range(0.0, 600.0));
  cmd->add_flag("--no-save", o->no_save, "print only");
  cmd->add_option("--reference-runs", o->reference_runs,
                  "runs of each host-speed reference for its stored quiet time (0: skip)")
      ->check(CLI::Range(0, 100000));
  cmd->callback([o] { ExitCode() = RunCalibrate(*o); });
}

}  // namespace hlox::cli
