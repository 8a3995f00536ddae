// Paired measurement of two modules through the runtime, for searches' final verdicts: several
// executor instances per side, each on its own module copy, built pair by pair in a seeded
// alternating order (cost/paired.h says why); and the
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

// Instances per side: as asked, fewer when 4 * instances copies of the larger module's
// constants (a module copy and an executor per instance and side) would take more than an
// eighth of the machine's memory. Not fewer for a slow module: every instance pair gets at
// least one ABBA block (cost/paired.h), and four instance pairs were too few for the interval
// of a second-long module to hold its coverage.
int InstancesFor(const Module& a, const Module& b, const TimingProtocol& p) {
  int64_t k = std::max(1, p.paired_instances);
  const int64_t per = std::max<int64_t>(1, std::max(ConstantBytes(a), ConstantBytes(b)));
  const int64_t memory = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (memory > 0) k = std::min<int64_t>(k, memory / 8 / (4 * per));
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
  // Each instance runs its own copy of its side's module with its own fused programs. An
  // executor walks the module's instructions on every run and the fused programs hold the
  // generated code, so where the module and the code landed in memory is a property of the
  // side when its instances share them: A/A pairs of two separately optimized modules then
  // leaned by a different amount in each pair (15 of 40 intervals excluded 1 on a 2 us
  // module). Per instance, it is an instance effect the interval sees.
  rt::ExecOptions eo{options.threads, options.seed};
  eo.private_programs = true;
  std::vector<std::unique_ptr<Module>> copies;
  std::vector<std::unique_ptr<rt::Executor>> execs[2];
  auto build = [&](int side) -> absl::Status {
    copies.push_back((side == 0 ? baseline : candidate).Clone());
    absl::StatusOr<std::unique_ptr<rt::Executor>> e = rt::Executor::Create(*copies.back(), eo);
    if (!e.ok()) return e.status();
    execs[side].push_back(*std::move(e));
    return absl::OkStatus();
  };
  // Build order: instance pair k (the k-th executor of each side, measured together) is built
  // back to back, its first side alternating from pair to pair from a seeded start. Executors
  // differ with their place in the build order, so the two of a pair should sit next to each
  // other: in a shuffled order, the side that happened to be built earlier more often led in
  // every instance pair at once, a lean per measurement that made the instance pairs' batches
  // agree (medium module: 3 of 33 A/A intervals excluded 1, each with 7 or 8 of its 8 batches
  // on one side).
  std::mt19937_64 rng(options.seed * 0x9E3779B97F4A7C15ull + 7);
  const int instances = InstancesFor(baseline, candidate, options.protocol);
  const int first = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
  for (int k = 0; k < instances; ++k) {
    const int a = (first + k) % 2;
    HLOX_RETURN_IF_ERROR(build(a));
    HLOX_RETURN_IF_ERROR(build(1 - a));
  }
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
