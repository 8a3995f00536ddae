// End-to-end benchmark: real evaluations (pipeline, validation, timing protocol) of a small
// corpus module through the service, next to the same evaluations run in this process
// (EvaluateCandidate in a loop) as the baseline measured in the same run. Reports
// evaluations/s for 1 and 2 `hlox worker` processes over TCP and for the embedded fleet
// (agent/embedded.h, what `hlox search --workers N` uses) with 1 and 2 workers.
//   e2e_bench [MODULE.hlo] [--jobs N]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "agent/embedded.h"
#include "bench/service/bench_util.h"
#include "cost/evaluate.h"
#include "cost/reference_cache.h"
#include "ir/parser.h"
#include "worker/evaluator.h"

using namespace hlox;
using namespace hlox::bench;

namespace {

std::string DefaultModule() {
  for (const char* p : {"../shared/hlo/hloenv_toy_nn_loss.hlo",
                        "/work/shared/hlo/hloenv_toy_nn_loss.hlo", "examples/mlp_train_small.hlo"}) {
    if (std::ifstream(p)) return p;
  }
  if (const char* c = std::getenv("HLOX_CORPUS")) return std::string(c) + "/hloenv_toy_nn_loss.hlo";
  return "examples/mlp_train_small.hlo";
}

// Submits `n` evaluations (default pipeline, cache off) and waits for all; evaluations/s.
// *eval_s: the mean evaluation time per job as the workers timed it (fork to reap).
double Throughput(agent::Client& c, std::shared_ptr<const std::string> text, int n, int* ok,
                  double* eval_s) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    agent::JobSpec j = NoopJob(text);
    j.pipeline = "default";
    (void)c.Submit(std::move(j));
  }
  int got = 0;
  *ok = 0;
  double busy = 0;
  while (got < n) {
    auto r = c.Next(std::chrono::milliseconds(60000));
    if (!r) break;
    ++got;
    *ok += r->record.status == JobStatus::kOk;
    busy += r->record.eval_seconds;
  }
  *eval_s = got ? busy / got : 0;
  return got / std::chrono::duration<double>(Clock::now() - t0).count();
}

// The worker's evaluation path (worker/evaluator.h: a forked child per job) in this process,
// interleaved over 3 rounds with the in-process loop: with the reference outputs kept in this
// process (what workers do) and recomputed in every child (the cache evicted first, as before).
void WorkerPathComparison(const std::string& text, std::shared_ptr<const Module> module, int n,
                          double direct_rate) {
  worker::EvalRequest req;
  req.module = std::move(module);
  req.module_hash = proto::ModuleHash(text);
  req.pipeline = "default";
  worker::EvalSettings kept, recomputed;
  recomputed.keep_reference = false;
  double best_kept = 0, best_recomputed = 0, best_direct = direct_rate;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 64; ++i) {  // evict: fill the LRU with empty entries
      GlobalReferenceCache().Insert("evict-" + std::to_string(i), 0,
                                    std::make_shared<ReferenceOutputs>());
    }
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) (void)worker::EvaluateJob(req, recomputed);
    best_recomputed =
        std::max(best_recomputed, n / std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    for (int i = 0; i < n; ++i) (void)worker::EvaluateJob(req, kept);
    best_kept = std::max(best_kept, n / std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    for (int i = 0; i < n; ++i) (void)EvaluateCandidate(*req.module, "default", {}, {});
    best_direct =
        std::max(best_direct, n / std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("worker path in this process (best of 3 interleaved): forked, reference kept %.1f ms "
              "per job; forked, reference recomputed per job %.1f ms; in-process %.1f ms\n",
              1e3 / best_kept, 1e3 / best_recomputed, 1e3 / best_direct);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = DefaultModule();
  int n = 40;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) n = std::atoi(argv[++i]);
    else path = argv[i];
  }
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  auto text = std::make_shared<const std::string>(ss.str());
  auto module = ParseModule(*text, path);
  if (!module.ok()) {
    std::fprintf(stderr, "%s\n", std::string(module.status().message()).c_str());
    return 1;
  }
  std::printf("module %s, %d evaluations per configuration\n", path.c_str(), n);
  // Baseline: the same evaluations in this process, one after another.
  auto t0 = Clock::now();
  int ok = 0;
  for (int i = 0; i < n; ++i) {
    ok += EvaluateCandidate(**module, "default", {}, EvalOptions{}).status == JobStatus::kOk;
  }
  double direct = n / std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("in-process EvaluateCandidate loop: %.2f evaluations/s (%d/%d OK), %.1f ms each\n",
              direct, ok, n, 1e3 / direct);
  WorkerPathComparison(*text, std::shared_ptr<const Module>(std::move(*module)), n, direct);
  for (int workers : {1, 2}) {
    std::string addr = "tcp://127.0.0.1:" + std::to_string(47940 + workers * 2);
    auto fleet = StartFleet(addr, workers, "", 2);
    auto c = std::move(*agent::Client::Connect(addr));
    double eval_s = 0, rate = Throughput(*c, text, n, &ok, &eval_s);
    std::printf("TCP broker, %d hlox worker(s): %.2f evaluations/s (%.2fx in-process, %d/%d OK); "
                "per job a worker spent %.1f ms evaluating, %.1f ms else\n", workers, rate,
                rate / direct, ok, n, 1e3 * eval_s, 1e3 * (workers / rate - eval_s));
  }
  for (int workers : {1, 2}) {
    agent::EmbeddedOptions eo;
    eo.hlox_binary = HloxPath();
    auto fleet = agent::StartEmbeddedFleet(workers, eo);
    if (!fleet.ok()) {
      std::fprintf(stderr, "embedded: %s\n", std::string(fleet.status().message()).c_str());
      return 1;
    }
    auto c = std::move(*agent::Client::Connect(fleet->address));
    double eval_s = 0, rate = Throughput(*c, text, n, &ok, &eval_s);  // start-up included
    std::printf("embedded fleet, %d worker(s): %.2f evaluations/s (%.2fx in-process, %d/%d OK, "
                "worker start-up included); per job %.1f ms evaluating, %.1f ms else\n", workers,
                rate, rate / direct, ok, n, 1e3 * eval_s, 1e3 * (workers / rate - eval_s));
  }
  return 0;
}
