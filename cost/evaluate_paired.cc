// Paired measurement of two modules through the runtime, for searches' final verdicts: several
// executor instances per side, built in a seeded random order (cost/paired.h says why); and the
// paired job a worker runs for a fleet verdict (pipelines, validation, then that measurement).
#include <algorithm>
#include <exception>
#include <new>
#include <optional>
#include <random>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "cost/evaluate.h"
#include "cost/evaluate_memory.h"
#include "cost/paired.h"
#include "cost/timing.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

// Bytes an executor of `m` holds for its constants (each instance has its own copies).
int64_t ConstantBytes(const Module& m) {
  int64_t bytes = 0;
  for (const auto& comp : m.computations()) {
    for (const auto& instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kConstant) bytes += instr->shape().ByteSize();
    }
  }
  return bytes;
}

// Instances per side: as asked, but no more than the time cap affords (a warm-up of every
// instance of both sides within about half of it; at least four, so the interval has three
// degrees of freedom), and fewer when 2 * instances copies of the larger module's constants
// would take more than an eighth of the machine's memory.
int InstancesFor(const Module& a, const Module& b, const TimingProtocol& p, double call_seconds) {
  int64_t k = std::max(1, p.paired_instances);
  if (call_seconds > 0) k = std::min<int64_t>(k, std::max(4.0, p.time_cap_seconds / (4 * call_seconds)));
  const int64_t per = std::max<int64_t>(1, std::max(ConstantBytes(a), ConstantBytes(b)));
  const int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (memory > 0) k = std::min<int64_t>(k, memory / 8 / (2 * per));
  return static_cast<int>(std::clamp<int64_t>(k, 1, std::max(1, p.paired_instances)));
}

}  // namespace

absl::StatusOr<PairedResult> MeasurePairedModules(const Module& baseline, const Module& candidate,
                                                  const EvalOptions& options,
                                                  const std::function<void()>& after_candidate) {
  const std::vector<rt::Value> inputs = rt::MakeSeededInputs(baseline, options.seed);
  if (candidate.entry() == nullptr ||
      candidate.entry()->parameter_count() != static_cast<int64_t>(inputs.size())) {
    return absl::InvalidArgumentError("paired measurement: entry signatures differ");
  }
  const rt::ExecOptions eo{options.threads, options.seed};
  std::vector<std::unique_ptr<rt::Executor>> execs[2];
  auto build = [&](int side) -> absl::Status {
    absl::StatusOr<std::unique_ptr<rt::Executor>> e = rt::Executor::Create(side == 0 ? baseline : candidate, eo);
    if (!e.ok()) return e.status();
    execs[side].push_back(*std::move(e));
    return absl::OkStatus();
  };
  // Build order: seeded random, so neither side is systematically built first (the earliest
  // built executors run slowest). The first pair is timed once to size the rest.
  std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + 7);
  const int first = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
  for (int side : {first, 1 - first}) HLOX_RETURN_IF_ERROR(build(side));
  double call = 0;
  for (int side = 0; side < 2; ++side) {
    const double t0 = SteadySeconds();
    HLOX_RETURN_IF_ERROR(execs[side][0]->Run(inputs).status());
    call = std::max(call, SteadySeconds() - t0);
  }
  const int instances = InstancesFor(baseline, candidate, options.protocol, call);
  std::vector<int> rest;
  for (int k = 1; k < instances; ++k) rest.insert(rest.end(), {0, 1});
  std::shuffle(rest.begin(), rest.end(), rng);
  for (int side : rest) HLOX_RETURN_IF_ERROR(build(side));
  // One callable for both sides (cost/paired.h): a closure per side measured 1% apart on a
  // 1.5 us module when they differed in code, and still leaned when they differed only in the
  // side they captured. The hook's presence is tested first, so without one both sides take
  // the same branch (testing the side first cost the candidate 0.1% on that module).
  const bool hook = static_cast<bool>(after_candidate);
  return MeasurePairedOrError(
      [&execs, &inputs, &after_candidate, hook](int side, int k) {
        absl::Status st = execs[side][k]->Run(inputs).status();
        if (hook && side == 1) after_candidate();
        return st;
      },
      instances, options.protocol, options.seed);
}

ResultRecord EvaluatePairedCandidate(const Module& original, const std::string& pipeline,
                                     const PipelineDecisions& decisions,
                                     const std::string& baseline_pipeline,
                                     const PipelineDecisions& baseline_decisions,
                                     const EvalOptions& options) {
  const double t0 = SteadySeconds();
  // The candidate as an evaluation sees it (status, analytical costs, provenance), unmeasured.
  EvalOptions check = options;
  check.validate = true;
  check.measure = false;
  ResultRecord r = EvaluateCandidate(original, pipeline, decisions, check);
  if (r.status != JobStatus::kOk) return r;
  auto fail = [&r](JobStatus status, std::string message) {
    r.status = status;
    r.message = std::move(message);
  };
  try {
    absl::StatusOr<std::unique_ptr<Module>> base = RunPipeline(original, baseline_pipeline, baseline_decisions);
    absl::StatusOr<std::unique_ptr<Module>> cand = RunPipeline(original, pipeline, decisions);
    if (!base.ok()) {
      fail(IsInvalidDecisions(base.status()) ? JobStatus::kInvalidDecisions : JobStatus::kRunError,
           absl::StrCat("baseline: ", base.status().message()));
    } else if (!cand.ok()) {  // it built a moment ago: only a broken pass gets here
      fail(JobStatus::kRunError, std::string(cand.status().message()));
    } else if (std::optional<std::string> over = OverBudgetMessage(
                   PlannedJobBytes(original, base->get()), options.memory_budget_bytes)) {
      fail(JobStatus::kResourceExhausted, absl::StrCat("baseline: ", *over));
    } else {
      absl::StatusOr<PairedResult> paired = MeasurePairedModules(**base, **cand, options);
      if (paired.ok()) {
        r.paired = FiguresOf(*paired);
      } else {
        fail(JobStatus::kRunError, absl::StrCat("paired measurement: ", paired.status().message()));
      }
    }
  } catch (const std::bad_alloc&) {
    fail(JobStatus::kResourceExhausted, OutOfMemoryMessage(options.memory_budget_bytes));
  } catch (const std::exception& e) {
    fail(JobStatus::kRunError, absl::StrCat("exception: ", e.what()));
  }
  r.provenance.protocol = options.protocol.ToString();
  r.eval_seconds = SteadySeconds() - t0;
  return r;
}

}  // namespace hlox
