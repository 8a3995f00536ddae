// hlox eval FILE [--pipeline P] [--decisions F] [--broker ADDR | --workers N | --in-process]
//           [--seed S] [--threads N] [--json] [--paired-against B]: validates and measures one
// candidate (the module after pipeline P with decisions F) and prints its result record as a
// table or as JSON (docs/RESULTS.md). Like `hlox search`, it sends the job to a worker: of the
// broker at --broker, else of an embedded fleet started here, so a candidate that crashes or
// hangs costs that job, not the command. A job carries module, pipeline and decisions only, so
// the options that change the seed, the timing protocol or validation, and --paired-against,
// evaluate in this process (as --in-process does). With --paired-against, a validated candidate is also measured interleaved with pipeline B's
// module (paired speedup B/candidate with its 95% interval; JSON key "paired"), which is how a
// search's best decisions are re-checked on another machine or build. Exit status: 0 OK,
// 3 INVALID_DECISIONS, 4 WRONG_OUTPUT, 1 anything else.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/fleet_evaluator.h"
#include "cost/evaluate.h"
#include "cost/evaluate_memory.h"
#include "cost/paired.h"
#include "cost/verdict.h"
#include "cost/result_json.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/decisions_io.h"
#include "nlohmann/json.hpp"
#include "passes/pipeline.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct EvalCliOptions {
  std::string file, pipeline, decisions, paired_against;
  std::string candidate;    // --candidate: an already rewritten module to judge against `file`
  bool json = false, no_samples = false;
  bool in_process = false;  // --in-process, or set by an option only this process can honour
  std::string reference;    // --reference: a HostReferenceKind name
  FleetTarget fleet;          // workers: 1 (set in RegisterEval)
  EvalOptions eval;
};

// The record of one job through the fleet (remote or embedded). Bypasses the broker's result
// cache: eval is asked for a fresh measurement.
ResultRecord EvaluateOnFleet(const EvalCliOptions& o, const Module& module, const std::string& pipeline,
                             const PipelineDecisions& decisions) {
  FleetTarget target = o.fleet;
  target.threads = o.eval.threads;
  absl::StatusOr<FleetConnection> c = ConnectFleet(target);
  if (!c.ok()) {
    ResultRecord r;
    r.status = JobStatus::kRunError;
    r.message = absl::StrCat("fleet: ", c.status().message());
    return r;
  }
  FleetEvaluator evaluator(std::move(c->client), PrintModule(module), pipeline,
                           absl::StrCat("eval-", std::random_device{}()), 1);
  return evaluator.EvaluateFresh({decisions}, 1).front();
}

void PrintTable(const ResultRecord& r) {
  const CostDistribution& c = r.cost;
  const AnalyticalCost& a = r.analytical;
  const Provenance& p = r.provenance;
  std::printf("status          %s\n", std::string(JobStatusName(r.status)).c_str());
  if (!r.message.empty()) std::printf("message         %s\n", r.message.c_str());
  std::printf("module_hash     %s\n", r.module_hash.c_str());
  std::printf("pipeline        %s\n", r.pipeline.c_str());
  std::printf("instructions    %lld\n", static_cast<long long>(r.instruction_count));
  if (!c.samples.empty()) {
    std::printf("median          %.6g s  (95%% CI %.6g .. %.6g)\n", c.median, c.ci_low, c.ci_high);
    std::printf("mad             %.3g s  (%.2f%% of median)%s\n", c.mad,
                c.median > 0 ? 100 * c.mad / c.median : 0.0, c.unstable ? "  UNSTABLE" : "");
    std::printf("mean / min      %.6g / %.6g s\n", c.mean, c.min);
    if (!c.reference.empty()) {
      std::printf("normalized      %.6g s  (95%% CI %.6g .. %.6g; host slowdown %.3f against "
                  "quiet, reference %s)\n", c.normalized_median, c.normalized_ci_low,
                  c.normalized_ci_high, c.reference_slowdown, c.reference.c_str());
    }
    std::printf("samples         %zu x %lld calls (%lld disturbed, left out)\n", c.samples.size(),
                static_cast<long long>(c.calls_per_sample), static_cast<long long>(c.disturbed));
    if (c.sampled_seconds > 0) {
      std::printf("interference    steal %.2f%%, run-queue wait %.2f%% of %.3g s sampled\n",
                  100 * c.steal_seconds / c.sampled_seconds,
                  100 * c.run_wait_seconds / c.sampled_seconds, c.sampled_seconds);
    }
  }
  std::printf("op_count        %lld\n", static_cast<long long>(a.op_count));
  std::printf("flops           %.6g\n", a.flops);
  std::printf("bytes_moved     %.6g\n", a.bytes_moved);
  std::printf("roofline        %.6g s\n", a.roofline_seconds);
  std::printf("scratchpad      %.6g bytes of traffic with S = %lld, %.6g s on that target\n",
              a.scratchpad_traffic_bytes, static_cast<long long>(a.scratchpad_bytes), a.scratchpad_seconds);
  std::printf("peak_memory     %lld bytes\n", static_cast<long long>(a.peak_memory_bytes));
  if (r.mismatch) {
    std::printf("mismatch        output %lld index %lld expected %.9g actual %.9g\n",
                static_cast<long long>(r.mismatch->output),
                static_cast<long long>(r.mismatch->index), r.mismatch->expected,
                r.mismatch->actual);
  }
  std::printf("host / cpu      %s / %s (%s, %d cores, %d threads)\n", p.host.c_str(), p.cpu.c_str(),
              p.isa.empty() ? "isa unknown" : p.isa.c_str(), p.cores, p.threads);
  std::printf("protocol        %s seed=%llu\n", p.protocol.c_str(),
              static_cast<unsigned long long>(p.seed));
  std::printf("eval_seconds    %.3f\n", r.eval_seconds);
}

int RunEval(EvalCliOptions& o) {
  if (!o.reference.empty() && !ParseHostReference(o.reference, &o.eval.protocol.host_reference)) {
    std::cerr << "hlox eval: --reference: compute, memory, mix or none\n";
    return 2;
  }
  int exit_code = 0;
  std::optional<CommandInput> in = ReadCommandInput("eval", o.file, o.decisions, 3, &exit_code);
  if (!in) return exit_code;
  const Module& module = *in->module;
  const DecisionsFile& decisions = in->decisions;
  std::string pipeline = EffectivePipeline(o.pipeline, decisions);
  std::unique_ptr<Module> given;  // --candidate
  if (!o.candidate.empty()) {
    absl::StatusOr<std::unique_ptr<Module>> read = ParseModuleFile(o.candidate);
    if (!read.ok()) {
      std::cerr << read.status().message() << "\n";
      return 1;
    }
    given = *std::move(read);
  }
  ResultRecord r;
  if (given) {
    r = EvaluateOptimized(module, *given, o.eval);
    r.pipeline = "candidate:" + o.candidate;
  } else {
    r = o.in_process ? EvaluateCandidate(module, pipeline, decisions.decisions, o.eval)
                     : EvaluateOnFleet(o, module, pipeline, decisions.decisions);
  }
  std::optional<PairedResult> paired;
  if (!o.paired_against.empty() && r.status == JobStatus::kOk) {
    auto base = RunPipeline(module, o.paired_against, {});
    absl::StatusOr<std::unique_ptr<Module>> cand =
        given ? absl::StatusOr<std::unique_ptr<Module>>(given->Clone()) : RunPipeline(module, pipeline, decisions.decisions);
    absl::StatusOr<PairedResult> p = !base.ok()   ? absl::StatusOr<PairedResult>(base.status())
                                     : !cand.ok() ? absl::StatusOr<PairedResult>(cand.status())
                                                  : MeasurePairedModules(**base, **cand, o.eval);
    if (!p.ok()) {
      std::cerr << "hlox eval: paired measurement against " << o.paired_against << ": " << p.status().message()
                << "\n";
      return 1;
    }
    paired = *std::move(p);
  }
  if (o.json) {
    if (!paired) {
      std::cout << ResultToJsonString(r, !o.no_samples, 2) << "\n";
    } else {
      nlohmann::json j = nlohmann::json::parse(ResultToJsonString(r, !o.no_samples, -1));
      // The calibrated verdict (cost/verdict.h): speedup, interval, outcome, delta and where
      // delta came from, plus the instances per side.
      j["paired"] = VerdictToJson(Judge(*paired));
      j["paired"]["baseline_pipeline"] = o.paired_against;
      j["paired"]["instances"] = paired->instance_count;
      std::cout << j.dump(2) << "\n";
    }
  } else {
    PrintTable(r);
    if (paired) {
      std::printf("paired          over '%s': %s, %d instances per side\n", o.paired_against.c_str(),
                  VerdictLine(Judge(*paired)).c_str(), paired->instance_count);
    }
  }
  switch (r.status) {
    case JobStatus::kOk: return 0;
    case JobStatus::kInvalidDecisions: return 3;
    case JobStatus::kWrongOutput: return 4;
    default: return 1;
  }
}

}  // namespace

void RegisterEval(CLI::App& app) {
  auto o = std::make_shared<EvalCliOptions>();
  o->fleet.workers = 1;
  auto* cmd = app.add_subcommand("eval", "Validate and measure one candidate; print its result record");
  cmd->add_option("file", o->file, "HLO module")->required();
  cmd->add_option("--pipeline", o->pipeline, "pipeline (default: the decisions file's, else 'default')");
  cmd->add_option("--decisions", o->decisions, "decisions file (JSON or compact form)");
  cmd->add_option("--broker", o->fleet.broker, "broker address (default: an embedded fleet on this machine)");
  cmd->add_option("--curve-key", o->fleet.curve_key, "own CURVE secret key file (for a secured --broker)");
  cmd->add_option("--broker-key", o->fleet.broker_key, "the broker's CURVE public key file (.pub)");
  cmd->add_option("--workers", o->fleet.workers, "embedded workers (one candidate needs one)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_flag("--in-process", o->in_process, "evaluate in this process, without a fleet");
  cmd->add_option("--candidate", o->candidate,
                  "judge this already rewritten module (e.g. XLA's optimized dump) against FILE instead of "
                  "running a pipeline; in this process")
      ->excludes("--decisions");
  cmd->add_option("--seed", o->eval.seed, "seed for inputs, elided constants and rng");
  cmd->add_option("--threads", o->eval.threads, "runtime threads")->check(CLI::Range(1, 1024));
  cmd->add_flag("--json", o->json, "print the record as JSON");
  cmd->add_option("--paired-against", o->paired_against,
                  "also measure interleaved with this pipeline's module (paired speedup, 95% CI)");
  cmd->add_flag("--no-samples", o->no_samples, "leave the sample list out of the JSON");
  cmd->add_option("--time-cap", o->eval.protocol.time_cap_seconds, "measurement time cap, seconds");
  cmd->add_option("--target-error", o->eval.protocol.target_rel_error,
                  "stop when the median's relative standard error is under this");
  cmd->add_option("--min-samples", o->eval.protocol.min_samples, "minimum timed samples");
  cmd->add_option("--max-samples", o->eval.protocol.max_samples, "maximum timed samples");
  cmd->add_option("--warmups", o->eval.protocol.warmups, "untimed warm-up runs");
  cmd->add_option("--interference-threshold", o->eval.protocol.interference_threshold,
                  "leave out samples next to a probe this much slower than its fastest (0: off)");
  cmd->add_option("--sched-threshold", o->eval.protocol.sched_threshold,
                  "leave out samples whose steal + run-queue wait exceed this share (0: off)");
  cmd->add_option("--reference", o->reference,
                  "host-speed reference at sample boundaries: none, compute, memory or mix "
                  "(adds the normalized cost to the record)")
      ->check(CLI::IsMember({"none", "compute", "memory", "mix"}));
  cmd->add_option("--reference-weight", o->eval.protocol.reference_compute_weight,
                  "compute reference's weight in the mix (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  auto target = std::make_shared<std::string>();
  AddScratchpadTargetOption(cmd, target.get());
  cmd->add_option("--scratchpad", o->eval.scratchpad.scratchpad_bytes, "scratchpad bytes (overrides the target's)");
  cmd->add_option("--tolerance-scale", o->eval.tolerance_scale, "multiply validation tolerances");
  cmd->add_flag("!--no-validate", o->eval.validate, "skip output validation");
  cmd->add_flag("!--no-measure", o->eval.measure, "skip timing (analytical costs only)");
  auto memory_mb = std::make_shared<int64_t>(0);
  cmd->add_option("--job-memory-mb", *memory_mb,
                  "in this process: refuse (RESOURCE_EXHAUSTED) a module planned above this many "
                  "MiB (default 0: the machine's share, as `hlox worker`; -1: no budget)");
  cmd->callback([o, cmd, memory_mb, target] {
    if (!UseScratchpadTarget("eval", *target)) {
      ExitCode() = 2;
      return;
    }
    const int64_t bytes = o->eval.scratchpad.scratchpad_bytes;
    o->eval.scratchpad = CachedScratchpadTarget();
    if (cmd->count("--scratchpad") > 0) o->eval.scratchpad.scratchpad_bytes = bytes;
    o->eval.memory_budget_bytes = *memory_mb < 0    ? 0
                                  : *memory_mb == 0 ? DefaultJobMemoryBytes()
                                                    : std::min<int64_t>(*memory_mb, int64_t{1} << 40) << 20;
    // A job carries module, pipeline and decisions; these options need this process.
    for (const char* local : {"--candidate", "--paired-against", "--seed", "--time-cap", "--target-error", "--min-samples", "--max-samples",
                              "--warmups", "--interference-threshold", "--sched-threshold", "--reference",
                              "--reference-weight", "--scratchpad", "--tolerance-scale", "--no-validate",
                              "--no-measure", "--job-memory-mb"}) {
      if (cmd->count(local) > 0) o->in_process = true;
    }
    if (o->in_process && !o->fleet.broker.empty()) {
      std::cerr << "hlox eval: --broker cannot carry --in-process, --candidate, --seed, --paired-against or the protocol "
                   "options; drop --broker to evaluate here\n";
      ExitCode() = 2;
      return;
    }
    ExitCode() = RunEval(*o);
  });
}

}  // namespace hlox::cli
