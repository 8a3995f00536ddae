// hlox worker --broker ADDR [--threads N] [--class C] [--isa LEVEL] [--job-memory-mb MB]
// [--job-time-s S] [--supervise] [--curve-key
// FILE --broker-key FILE.pub]: evaluates jobs from a broker. The class it registers under ends in
// its ISA level ("cpu" -> "cpu-avx2"; worker/worker.h ApplyIsaAndResolveClass).
#include <unistd.h>

#include <csignal>
#include <iostream>

#include "tools/commands.h"
#include "worker/worker.h"

namespace hlox::cli {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

}  // namespace

void RegisterWorker(CLI::App& app) {
  auto opts = std::make_shared<worker::WorkerOptions>();
  auto supervise = std::make_shared<bool>(false);
  auto no_fork = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("worker", "evaluate jobs from a broker");
  cmd->add_option("--broker", opts->broker, "broker address")->required();
  cmd->add_option("--threads", opts->threads, "runtime threads per evaluation")->capture_default_str();
  cmd->add_option("--class", opts->hardware_class,
                  "hardware class; registered with the ISA level appended (cpu -> cpu-avx2) "
                  "unless it already ends in it")->capture_default_str();
  cmd->add_option("--isa", opts->isa,
                  "run kernels at this instruction-set level: generic | avx2 | avx512 (default: "
                  "the best the CPU supports, or $HLOX_ISA)");
  cmd->add_option("--credit", opts->credit, "jobs outstanding at once")->capture_default_str();
  cmd->add_option("--id", opts->worker_id, "worker id (default host-pid-random)");
  cmd->add_option("--test-mode", opts->test_mode, "benchmarks: echo | sleep-<ms> | sleep-<ms>-serial (old hand-off order) | spin-<ms> (CPU-bound)");
  cmd->add_option("--curve-key", opts->curve_key_file, "own CURVE secret key file (for a secured broker)");
  cmd->add_option("--broker-key", opts->broker_key_file, "the broker's CURVE public key file (.pub)");
  cmd->add_option("--cpu-latency-us", opts->cpu_latency_us,
                  "hold this CPU wake-up latency limit (PM QoS; 0: idle CPUs poll instead of "
                  "halting; needs root; default: no request)");
  cmd->add_option("--job-memory-mb", opts->job_memory_mb,
                  "memory budget per job in MiB: a module planned above it is refused "
                  "(RESOURCE_EXHAUSTED) and the job's child is limited to it (default 0: "
                  "MemAvailable less an eighth, at least 512 MiB of headroom; -1: no budget)")
      ->capture_default_str();
  cmd->add_option("--job-time-s", opts->job_time_s,
                  "time budget per job in seconds: caps each job's run timeout (default 0: the "
                  "job's own, 120 s unless the submitter says otherwise)")
      ->capture_default_str();
  cmd->add_flag("--no-fork", *no_fork, "evaluate in this process (a crash takes the worker down)");
  cmd->add_flag("--fresh-child", opts->fresh_child, "fork a new child per job, not a warm one per module");
  cmd->add_flag("--supervise", *supervise, "restart the worker when it crashes");
  cmd->callback([opts, supervise, no_fork] {
    // Checked here too, so a bad --isa or --class fails at once instead of in a supervised loop.
    if (absl::StatusOr<std::string> cls = worker::ApplyIsaAndResolveClass(*opts); !cls.ok()) {
      std::cerr << "hlox worker: " << cls.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    if (*supervise) {
      char self[4096];
      ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
      if (n <= 0) {
        std::cerr << "hlox worker: cannot find /proc/self/exe\n";
        ExitCode() = 1;
        return;
      }
      std::vector<std::string> argv = {std::string(self, static_cast<size_t>(n)), "worker",
                                       "--broker", opts->broker, "--threads",
                                       std::to_string(opts->threads), "--class",
                                       opts->hardware_class, "--credit",
                                       std::to_string(opts->credit)};
      if (!opts->worker_id.empty()) { argv.push_back("--id"); argv.push_back(opts->worker_id); }
      if (!opts->isa.empty()) { argv.push_back("--isa"); argv.push_back(opts->isa); }
      if (!opts->test_mode.empty()) { argv.push_back("--test-mode"); argv.push_back(opts->test_mode); }
      if (*no_fork) argv.push_back("--no-fork");
      if (opts->fresh_child) argv.push_back("--fresh-child");
      if (!opts->curve_key_file.empty()) { argv.push_back("--curve-key"); argv.push_back(opts->curve_key_file); }
      if (!opts->broker_key_file.empty()) { argv.push_back("--broker-key"); argv.push_back(opts->broker_key_file); }
      if (opts->job_memory_mb != 0) { argv.push_back("--job-memory-mb"); argv.push_back(std::to_string(opts->job_memory_mb)); }
      if (opts->job_time_s != 0) { argv.push_back("--job-time-s"); argv.push_back(std::to_string(opts->job_time_s)); }
      if (opts->cpu_latency_us >= 0) { argv.push_back("--cpu-latency-us"); argv.push_back(std::to_string(opts->cpu_latency_us)); }
      ExitCode() = worker::RunSupervised(argv);
      return;
    }
    opts->fork = !*no_fork;
    std::signal(SIGTERM, OnSignal);
    std::signal(SIGINT, OnSignal);
    absl::Status st = worker::RunWorker(*opts, &g_stop);
    if (!st.ok()) {
      std::cerr << "hlox worker: " << st.message() << "\n";
      ExitCode() = absl::IsFailedPrecondition(st) ? worker::kExitRefused : 1;
    }
  });
}

}  // namespace hlox::cli
