// EvaluateCandidate: pipeline -> verify -> validate against the cached reference -> measure ->
// analytical costs -> provenance. Every failure becomes a status in the record; nothing throws.
#include "cost/evaluate.h"

#include <exception>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cost/analytical.h"
#include "cost/calibrate.h"
#include "cost/evaluate_memory.h"
#include "cost/module_hash.h"
#include "cost/provenance.h"
#include "cost/reference_cache.h"
#include "cost/timing.h"
#include "cost/validate.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

void Fail(ResultRecord& r, JobStatus status, std::string message) {
  r.status = status;
  r.message = std::move(message);
}

// The unoptimized module's entry result on seeded inputs, as a literal.
absl::StatusOr<Literal> RunReference(const Module& original, uint64_t seed, int threads) {
  auto exec = rt::Executor::Create(original, rt::ExecOptions{threads, seed});
  if (!exec.ok()) return exec.status();
  auto out = (*exec)->Run(rt::MakeSeededInputs(original, seed));
  if (!out.ok()) return out.status();
  return rt::LiteralFromValue(*out, original.entry()->ResultShape());
}

void Evaluate(const Module& original, const Module& opt, const std::string& module_hash,
              const EvalOptions& options, ResultRecord& r) {
  if (absl::Status v = VerifyModule(opt); !v.ok()) {
    return Fail(r, JobStatus::kRunError, absl::StrCat("verifier: ", v.message()));
  }
  r.instruction_count = opt.InstructionCount();
  AnalyticalOptions ao;
  ao.peaks = CachedPeaks();
  ao.threads = options.threads;
  ao.scratchpad = options.scratchpad;
  r.analytical = ComputeAnalyticalCost(opt, ao);
  if (!options.validate && !options.measure) return;
  if (std::optional<std::string> over = OverBudgetMessage(
          PlannedJobBytes(original, &opt), options.memory_budget_bytes)) {
    return Fail(r, JobStatus::kResourceExhausted, *over);
  }

  auto exec = rt::Executor::Create(opt, rt::ExecOptions{options.threads, options.seed});
  if (!exec.ok()) return Fail(r, JobStatus::kRunError, std::string(exec.status().message()));
  const std::vector<rt::Value> inputs = rt::MakeSeededInputs(original, options.seed);
  auto out = (*exec)->Run(inputs);
  if (!out.ok()) return Fail(r, JobStatus::kRunError, std::string(out.status().message()));

  if (options.validate) {
    auto ref = GlobalReferenceCache().GetOrCompute(module_hash, options.seed, [&] {
      return RunReference(original, options.seed, options.threads);
    });
    if (!ref.ok()) {
      return Fail(r, JobStatus::kRunError,
                  absl::StrCat("reference run failed: ", ref.status().message()));
    }
    Literal actual = rt::LiteralFromValue(*out, opt.entry()->ResultShape());
    ValidationOptions vo;
    vo.tolerance_scale = options.tolerance_scale;
    auto mismatch = CompareOutputs(LiteralLeaves((*ref)->result), LiteralLeaves(actual), vo);
    if (mismatch) {
      r.mismatch = *mismatch;
      return Fail(r, JobStatus::kWrongOutput, mismatch->detail);
    }
  }
  if (options.measure) {
    rt::Executor& e = **exec;
    auto cost = MeasureCostOrError([&]() { return e.Run(inputs).status(); }, options.protocol,
                                   options.seed);
    if (!cost.ok()) return Fail(r, JobStatus::kRunError, std::string(cost.status().message()));
    r.cost = *std::move(cost);
  }
}

ResultRecord NewRecord(const EvalOptions& options) {
  ResultRecord r;
  r.provenance = MachineProvenance();
  r.provenance.threads = options.threads;
  r.provenance.protocol = options.protocol.ToString();
  r.provenance.seed = options.seed;
  r.provenance.worker_id = options.worker_id;
  r.provenance.hardware_class = options.hardware_class;
  return r;
}

// Runs `body`, turning an allocation failure into RESOURCE_EXHAUSTED (under a job budget the
// worker's limit refused it) and anything else thrown (a library exception) into RUN_ERROR.
template <typename F>
void Guard(ResultRecord& r, int64_t memory_budget_bytes, F body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    Fail(r, JobStatus::kResourceExhausted, OutOfMemoryMessage(memory_budget_bytes));
  } catch (const std::exception& e) {
    Fail(r, JobStatus::kRunError, absl::StrCat("exception: ", e.what()));
  } catch (...) {
    Fail(r, JobStatus::kRunError, "unknown exception");
  }
}

}  // namespace

ResultRecord EvaluateCandidate(const Module& original, const std::string& pipeline,
                               const PipelineDecisions& decisions, const EvalOptions& options) {
  const double t0 = SteadySeconds();
  ResultRecord r = NewRecord(options);
  r.pipeline = pipeline;
  Guard(r, options.memory_budget_bytes, [&] {
    r.module_hash = ModuleHash(original);
    auto opt = RunPipeline(original, pipeline, decisions);
    if (!opt.ok()) {
      return Fail(r,
                  IsInvalidDecisions(opt.status()) ? JobStatus::kInvalidDecisions
                                                   : JobStatus::kRunError,
                  std::string(opt.status().message()));
    }
    Evaluate(original, **opt, r.module_hash, options, r);
  });
  r.eval_seconds = SteadySeconds() - t0;
  return r;
}

ResultRecord EvaluateOptimized(const Module& original, const Module& optimized,
                               const EvalOptions& options) {
  const double t0 = SteadySeconds();
  ResultRecord r = NewRecord(options);
  Guard(r, options.memory_budget_bytes, [&] {
    r.module_hash = ModuleHash(original);
    Evaluate(original, optimized, r.module_hash, options, r);
  });
  r.eval_seconds = SteadySeconds() - t0;
  return r;
}

}  // namespace hlox
