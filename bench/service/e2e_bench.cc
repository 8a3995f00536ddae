// End-to-end benchmark: real evaluations (pipeline, validation, timing protocol) of a small
// corpus module through the service, next to the same evaluations run in this process
// (EvaluateCandidate in a loop) as the baseline measured in the same run. Reports
// evaluations/s for 1 and 2 `hlox worker` processes over TCP and for the embedded fleet
// (client/embedded.h, what `hlox search --workers N` uses) with 1 and 2 workers.
//   e2e_bench [MODULE.hlo] [--jobs N]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bench/service/bench_util.h"
#include "client/embedded.h"
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

// Where a job's evaluation time goes: the timing protocol's samples (adaptive: a noisier
// machine takes more of them, up to its time cap) against everything else (fork, pipeline,
// executor build, validation, warm-ups).
struct Breakdown {
  int n = 0;
  double eval_s = 0, sampling_s = 0, samples = 0;
  void Add(const ResultRecord& r) {
    ++n;
    eval_s += r.eval_seconds;
    samples += double(r.cost.samples.size());
    for (double v : r.cost.samples) sampling_s += v * double(r.cost.calls_per_sample);
  }
  std::string Str() const {
    if (!n) return "no jobs";
    char buf[160];
    std::snprintf(buf, sizeof(buf), "per job %.1f ms: %.1f samples taking %.1f ms, %.1f ms else",
                  1e3 * eval_s / n, samples / n, 1e3 * sampling_s / n,
                  1e3 * (eval_s - sampling_s) / n);
    return buf;
  }
};

// Submits `n` evaluations (default pipeline, cache off) and waits for all; evaluations/s.
// *eval_s: the mean evaluation time per job as the workers timed it (fork to reap).
double Throughput(client::Client& c, std::shared_ptr<const std::string> text, int n, int* ok,
                  double* eval_s, Breakdown* bd) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    client::JobSpec j = NoopJob(text);
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
    bd->Add(r->record);
  }
  *eval_s = got ? busy / got : 0;
  return got / std::chrono::duration<double>(Clock::now() - t0).count();
}

// The worker's evaluation path (worker/evaluator.h) in this process, interleaved over 3 rounds
// with the in-process loop: the warm child per module (the default), a fresh child per job with
// the reference outputs kept in this process, and a fresh child per job recomputing them.
void WorkerPathComparison(const std::string& text, std::shared_ptr<const Module> module, int n,
                          double direct_rate) {
  worker::EvalRequest req;
  req.module = std::move(module);
  req.module_hash = proto::TextHash(text);
  req.pipeline = "default";
  worker::EvalSettings warm, fresh, recomputed;
  fresh.warm_child = false;
  recomputed.warm_child = false;
  recomputed.keep_reference = false;
  double best_warm = 0, best_fresh = 0, best_recomputed = 0, best_direct = direct_rate;
  Breakdown bd_warm, bd_fresh, bd_direct;
  auto rate = [&](auto&& one) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) one();
    return n / std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 64; ++i) {  // evict: fill the LRU with empty entries
      GlobalReferenceCache().Insert("evict-" + std::to_string(i), 0,
                                    std::make_shared<ReferenceOutputs>());
    }
    best_recomputed = std::max(best_recomputed,
                               rate([&] { (void)worker::EvaluateJob(req, recomputed); }));
    best_fresh =
        std::max(best_fresh, rate([&] { bd_fresh.Add(worker::EvaluateJob(req, fresh).record); }));
    best_warm =
        std::max(best_warm, rate([&] { bd_warm.Add(worker::EvaluateJob(req, warm).record); }));
    best_direct = std::max(best_direct, rate([&] {
      bd_direct.Add(EvaluateCandidate(*req.module, "default", {}, {}));
    }));
  }
  std::printf("worker path in this process (best of 3 interleaved), ms per job: warm child %.1f; "
              "fresh child per job, reference kept %.1f; fresh child, reference recomputed %.1f; "
              "in-process %.1f\n    warm child: %s\n    fresh child: %s\n    in-process: %s\n",
              1e3 / best_warm, 1e3 / best_fresh, 1e3 / best_recomputed, 1e3 / best_direct,
              bd_warm.Str().c_str(), bd_fresh.Str().c_str(), bd_direct.Str().c_str());
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
  Breakdown bd;
  for (int i = 0; i < n; ++i) {
    ResultRecord r = EvaluateCandidate(**module, "default", {}, EvalOptions{});
    ok += r.status == JobStatus::kOk;
    bd.Add(r);
  }
  double direct = n / std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("in-process EvaluateCandidate loop: %.2f evaluations/s (%d/%d OK), %.1f ms each\n"
              "    %s\n", direct, ok, n, 1e3 / direct, bd.Str().c_str());
  WorkerPathComparison(*text, std::shared_ptr<const Module>(std::move(*module)), n, direct);
  for (int workers : {1, 2}) {
    for (bool fresh : {true, false}) {  // a fresh child per job (before) next to the warm child
      std::string addr = "tcp://127.0.0.1:" + std::to_string(47940 + workers * 2 + fresh * 10);
      auto fleet = StartFleet(addr, workers, "", 2, {},
                              fresh ? std::vector<std::string>{"--fresh-child"}
                                    : std::vector<std::string>{});
      auto c = std::move(*client::Client::Connect(addr));
      Breakdown bd;
      double eval_s = 0, rate = Throughput(*c, text, n, &ok, &eval_s, &bd);
      std::printf("TCP broker, %d hlox worker(s), %s: %.2f evaluations/s (%.2fx in-process, %d/%d "
                  "OK); per job a worker spent %.1f ms evaluating, %.1f ms else\n    %s\n",
                  workers, fresh ? "fresh child per job" : "warm child", rate, rate / direct, ok,
                  n, 1e3 * eval_s, 1e3 * (workers / rate - eval_s), bd.Str().c_str());
    }
  }
  for (int workers : {1, 2}) {
    client::EmbeddedOptions eo;
    eo.hlox_binary = HloxPath();
    auto fleet = client::StartEmbeddedFleet(workers, eo);
    if (!fleet.ok()) {
      std::fprintf(stderr, "embedded: %s\n", std::string(fleet.status().message()).c_str());
      return 1;
    }
    auto c = std::move(*client::Client::Connect(fleet->address));
    Breakdown bd;
    double eval_s = 0, rate = Throughput(*c, text, n, &ok, &eval_s, &bd);  // start-up included
    std::printf("embedded fleet, %d worker(s): %.2f evaluations/s (%.2fx in-process, %d/%d OK, "
                "worker start-up included); per job %.1f ms evaluating, %.1f ms else\n    %s\n",
                workers, rate, rate / direct, ok, n, 1e3 * eval_s, 1e3 * (workers / rate - eval_s),
                bd.Str().c_str());
  }
  return 0;
}
