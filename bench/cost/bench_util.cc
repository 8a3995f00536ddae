// Cost bench helpers.
#include "bench/cost/bench_util.h"

#include <algorithm>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "cost/timing.h"
#include "runtime/core/executor.h"

namespace hlox::bench {

std::vector<std::string> CorpusFiles() {
  std::string dir;
  if (const char* env = std::getenv("HLOX_CORPUS"); env && *env) {
    dir = env;
  } else {
    dir = std::string(HLOX_SOURCE_DIR) + "/../shared/hlo";
  }
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ModuleName(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

std::string RunIsolated(const std::function<void()>& fn) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    fn();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return "wait failed";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return "timed out";
  if (WIFSIGNALED(status)) return "crashed with signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return "exit " + std::to_string(WEXITSTATUS(status));
  return "";
}

std::string ReferenceHlo(int64_t n) {
  std::string shape = "f32[" + std::to_string(n) + "]";
  return "HloModule ref\n\nENTRY e {\n  x = " + shape + " parameter(0)\n  y = " + shape +
         " parameter(1)\n  z = " + shape + " parameter(2)\n  m = " + shape +
         " multiply(x, y)\n  a = " + shape + " add(m, z)\n  ROOT r = " + shape + " exponential(a)\n}\n";
}

double TimeOneRun(const Module& module, int threads) {
  auto exec = rt::Executor::Create(module, rt::ExecOptions{threads, 0});
  if (!exec.ok()) return -1;
  auto inputs = rt::MakeSeededInputs(module, 0);
  double t0 = SteadySeconds();
  if (!(*exec)->Run(inputs).ok()) return -1;
  return SteadySeconds() - t0;
}

CostDistribution MeasureModule(const Module& module, const TimingProtocol& protocol, uint64_t seed,
                               int threads, bool* ok) {
  *ok = false;
  auto exec = rt::Executor::Create(module, rt::ExecOptions{threads, seed});
  if (!exec.ok()) return {};
  auto inputs = rt::MakeSeededInputs(module, seed);
  rt::Executor& e = **exec;
  auto d = MeasureCostOrError([&]() { return e.Run(inputs).status(); }, protocol, seed);
  if (!d.ok()) return {};
  *ok = true;
  return *d;
}

CostDistribution MeasureModuleBoundaries(const Module& module, const TimingProtocol& p,
                                         uint64_t seed, int threads, bool* ok,
                                         std::vector<double>* compute,
                                         std::vector<double>* memory) {
  *ok = false;
  auto exec = rt::Executor::Create(module, rt::ExecOptions{threads, seed});
  if (!exec.ok()) return {};
  auto inputs = rt::MakeSeededInputs(module, seed);
  rt::Executor& e = **exec;
  auto d = MeasureCostOrError([&]() { return e.Run(inputs).status(); }, p, seed, SteadySeconds,
                              TimingProbe{}, SchedSource{}, compute, memory);
  if (!d.ok()) return {};
  *ok = true;
  return *d;
}

}  // namespace hlox::bench
