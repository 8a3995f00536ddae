// Implementation of the corpus property check (see property_check.h). The reference outputs are
// computed once per module; each (pipeline, seed) result is verified, replayed from its recorded
// decisions (determinism), and executed only when its printed text is new for this module.
#include "tests/passes/property_check.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cost/peak_memory.h"
#include "cost/validate.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/decisions_io.h"
#include "passes/pipeline.h"
#include "runtime/core/buffer_pool.h"
#include "runtime/core/value.h"

namespace hlox::testing {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

DecisionVector RandomVector(const std::vector<DecisionSite>& sites, std::mt19937_64& rng) {
  DecisionVector d;
  for (const DecisionSite& s : sites) d.push_back(static_cast<int32_t>(rng() % s.choices.size()));
  return d;
}

// With HLOX_PROPERTY_DUMP=DIR, writes the decisions of a failing run to
// DIR/<module>.<pipeline>.seed<k>.decisions (compact form) for `hlox opt --decisions`.
void DumpDecisions(const Module& module, const std::string& pipeline, uint64_t seed,
                   const PipelineDecisions& used) {
  const char* dir = std::getenv("HLOX_PROPERTY_DUMP");
  if (!dir) return;
  std::string file = absl::StrCat(dir, "/", module.name(), ".", pipeline, ".seed", seed, ".decisions");
  for (size_t i = std::string(dir).size() + 1; i < file.size(); ++i) {
    if (file[i] == ':' || file[i] == '/') file[i] = '_';
  }
  std::ofstream(file) << DecisionsToCompact(DecisionsFile{pipeline, used}) << "\n";
}

// A field of /proc/self/status in bytes (VmRSS, VmHWM), 0 if unreadable.
int64_t ProcStatusBytes(const std::string& field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  }
  return 0;
}

// With HLOX_PROPERTY_VERBOSE=1, one line per execution on stderr: what ran, its seconds, its
// planned peak, the pool's state and the process's resident and peak resident bytes.
void LogExecution(const std::string& what, double seconds, int64_t planned_peak) {
  const char* v = std::getenv("HLOX_PROPERTY_VERBOSE");
  if (!v || std::string(v) != "1") return;
  const rt::BufferPoolStats pool = rt::GetBufferPoolStats();
  const double gb = 1e-9;
  std::cerr << absl::StrFormat(
                   "[property-exec] %s: %.1f s, planned peak %.2f GB, pool live %.2f cached %.2f peak %.2f "
                   "fresh %.2f GB, rss %.2f hwm %.2f GB\n",
                   what, seconds, planned_peak * gb, pool.live_large_bytes * gb, pool.cached_large_bytes * gb,
                   pool.peak_large_bytes * gb, pool.fresh_large_bytes * gb, ProcStatusBytes("VmRSS") * gb,
                   ProcStatusBytes("VmHWM") * gb);
}

// The memory budget for one execution: options, then HLOX_PROPERTY_MAX_PEAK_GB, then
// MemAvailable now.
int64_t MemoryBudget(const PropertyOptions& options) {
  if (options.max_planned_bytes > 0) return options.max_planned_bytes;
  if (const char* gb = std::getenv("HLOX_PROPERTY_MAX_PEAK_GB")) return static_cast<int64_t>(std::atof(gb) * 1e9);
  std::ifstream f("/proc/meminfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) return std::atoll(line.c_str() + 13) * 1024;
  }
  return int64_t{8} << 30;
}

}  // namespace

std::string CompareValues(const rt::Value& want, const rt::Value& got) {
  std::vector<rt::BufferPtr> a, b;
  want.Flatten(&a);
  got.Flatten(&b);
  if (a.size() != b.size()) return "different leaf counts";
  // The evaluator's own validation rule (cost/validate.h): the same tolerances and noise floor
  // a worker applies to a candidate's outputs.
  for (size_t leaf = 0; leaf < a.size(); ++leaf) {
    Literal la = rt::LiteralFromValue(rt::Value::Array(a[leaf]), a[leaf]->shape());
    Literal lb = rt::LiteralFromValue(rt::Value::Array(b[leaf]), b[leaf]->shape());
    if (auto m = CompareLeaf(la, lb, static_cast<int64_t>(leaf))) return m->detail;
  }
  return "";
}

absl::StatusOr<rt::Value> ExecuteModule(const Module& module, const std::vector<rt::Value>& inputs,
                                        int threads) {
  rt::ExecOptions options;
  options.threads = threads;
  options.seed = 7;
  auto exec = rt::Executor::Create(module, options);
  if (!exec.ok()) return exec.status();
  return (*exec)->Run(inputs);
}

PropertyResult CheckModuleProperty(const Module& original, const PropertyOptions& options) {
  PropertyResult result;
  const Clock::time_point start = Clock::now();
  rt::TrimBufferPool();  // an earlier module's cached buffers are no use here
  const int64_t budget = MemoryBudget(options);
  std::vector<rt::Value> inputs;
  absl::StatusOr<rt::Value> reference = absl::UnknownError("not executed");
  const int64_t reference_peak = AnalyticalPeakMemory(*original.entry());
  if (options.execute && reference_peak > budget) {
    result.runtime_note = absl::StrFormat("planned peak %.3g GB exceeds the memory budget %.3g GB",
                                          reference_peak * 1e-9, budget * 1e-9);
  } else if (options.execute) {
    Clock::time_point t = Clock::now();
    inputs = rt::MakeSeededInputs(original, 1);
    reference = ExecuteModule(original, inputs, options.threads);
    result.reference_seconds = Since(t);
    LogExecution("reference", result.reference_seconds, reference_peak);
    result.executed = reference.ok();
    if (!reference.ok()) result.runtime_note = std::string(reference.status().message());
  } else {
    result.runtime_note = "execution disabled for this module";
  }

  // Verdict per distinct printed module: "" = same outputs, else what went wrong.
  const std::string original_text = PrintModule(original);
  std::map<std::string, std::string> verdicts;

  std::vector<std::string> pipelines;
  for (const std::string& label : PassLabels()) pipelines.push_back("only:" + label);
  pipelines.push_back("default");
  pipelines.push_back("order");  // random pass sequences: every slot a random menu item or skip
  if (!options.only_pipelines.empty()) pipelines = options.only_pipelines;
  for (const std::string& pipeline : pipelines) {
    for (uint64_t seed = 1; seed <= static_cast<uint64_t>(options.seeds_per_pipeline); ++seed) {
      ++result.pipelines_run;
      const std::string where = absl::StrCat(pipeline, " seed ", seed, ": ");
      std::mt19937_64 rng(seed * 7919 + std::hash<std::string>{}(pipeline) % 1000);
      PipelineDecisions used;
      DecisionPolicy policy = [&](const std::string&, const Module&, const std::vector<DecisionSite>& sites) {
        DecisionVector v = RandomVector(sites, rng);
        if (pipeline == "order") {
          // The two menu items that change outputs by design (docs/DECISIONS.md, "Pass-ordering
          // mode": inexact simplifications, dropped bf16 roundings) are left out of random
          // orders; a search validates the orders it reports instead.
          for (size_t i = 0; i < v.size(); ++i) {
            const std::string& item = sites[i].choices[v[i]];
            if (item == "simplify:all" || item == "simplify-fp-conversions:all") v[i] = 0;
          }
        }
        return v;
      };
      Clock::time_point t = Clock::now();
      auto out = RunPipelineWithPolicy(original, pipeline, policy, &used);
      if (!out.ok()) {
        result.failures.push_back(where + "pipeline failed: " + std::string(out.status().ToString()));
        result.pass_seconds += Since(t);
        continue;
      }
      absl::Status verified = VerifyModule(**out);
      if (!verified.ok()) {
        result.failures.push_back(where + "does not verify: " + std::string(verified.ToString()));
        result.pass_seconds += Since(t);
        DumpDecisions(original, pipeline, seed, used);
        continue;
      }
      // Determinism: replaying the recorded decisions prints the same module.
      const std::string text = PrintModule(**out);
      auto again = RunPipeline(original, pipeline, used);
      result.pass_seconds += Since(t);
      if (!again.ok()) {
        result.failures.push_back(where + "replay failed: " + std::string(again.status().ToString()));
        continue;
      }
      if (PrintModule(**again) != text) result.failures.push_back(where + "replay prints a different module");

      if (text == original_text) {
        ++result.unchanged;
        continue;
      }
      if (!result.executed) continue;
      auto cached = verdicts.find(text);
      if (cached != verdicts.end()) {
        ++result.cache_hits;
        if (!cached->second.empty()) result.failures.push_back(where + cached->second);
        continue;
      }
      const int64_t planned = AnalyticalPeakMemory(*(*out)->entry());
      if (planned > budget) {
        ++result.memory_skips;
        LogExecution(where + absl::StrFormat("skipped, over the budget of %.2f GB", budget * 1e-9), 0, planned);
        continue;
      }
      t = Clock::now();
      absl::StatusOr<rt::Value> got = ExecuteModule(**out, inputs, options.threads);
      result.exec_seconds += Since(t);
      LogExecution(where, Since(t), planned);
      ++result.executions;
      std::string verdict = got.ok() ? CompareValues(*reference, *got)
                                     : "rewritten module fails to run: " + std::string(got.status().ToString());
      if (!verdict.empty()) {
        result.failures.push_back(where + verdict);
        DumpDecisions(original, pipeline, seed, used);
      }
      verdicts.emplace(text, std::move(verdict));
    }
  }
  result.total_seconds = Since(start);
  result.peak_rss_bytes = ProcStatusBytes("VmHWM");
  return result;
}

std::string FormatPropertyResult(const std::string& name, const PropertyResult& r) {
  return absl::StrFormat(
      "[property] %s: %d pipelines, %d unchanged, %d executions, %d cache hits, %d memory skips, "
      "%d failures, %s; seconds: total %.1f reference %.1f passes %.1f exec %.1f; peak rss %.2f GB",
      name, r.pipelines_run, r.unchanged, r.executions, r.cache_hits, r.memory_skips,
      static_cast<int>(r.failures.size()), r.executed ? "executed" : "verify-only", r.total_seconds,
      r.reference_seconds, r.pass_seconds, r.exec_seconds, r.peak_rss_bytes * 1e-9);
}

}  // namespace hlox::testing
