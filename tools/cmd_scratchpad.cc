// hlox scratchpad FILE [-p P] [-d F] [--target T] [--simulate] [--kernels] [--json]: the
// DRAM<->scratchpad traffic of a module after a pipeline (default: "scratchpad", the default
// pipeline plus the scratchpad tiling) on a scratchpad target, from the analytical model, and
// with --simulate from the trace-driven simulator next to it (cost/scratchpad.h).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <fstream>
#include <memory>
#include <random>
#include <set>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "passes/decisions_io.h"
#include "cost/scratchpad.h"
#include "ir/verifier.h"
#include "nlohmann/json.hpp"
#include "passes/pipeline.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct ScratchpadOptions {
  std::string file, pipeline, decisions, target;
  int64_t scratchpad_bytes = 0;  // 0: the target's
  bool simulate = false, kernels = false, json = false;
  int64_t max_touches = int64_t{2} << 30;
  int64_t random = -1;  // >= 0: random choices (this seed) at the invocations of random_labels
  std::string random_labels = "fusion,layout-assignment,scratchpad-tiling";
  std::string save_decisions;
};

// Random choices at the invocations whose pass label is in `labels`, the default elsewhere.
DecisionPolicy RandomPolicy(uint64_t seed, const std::string& labels) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  std::set<std::string> wanted;
  for (absl::string_view l : absl::StrSplit(labels, ',')) wanted.insert(std::string(l));
  return [rng, wanted](const std::string& key, const Module&, const std::vector<DecisionSite>& sites) {
    DecisionVector v;
    const bool random = wanted.count(key.substr(0, key.find('#'))) > 0;
    for (const DecisionSite& s : sites) {
      v.push_back(random ? static_cast<int32_t>((*rng)() % s.choices.size()) : s.default_choice);
    }
    return v;
  };
}

double RelDiff(double model, double sim) { return sim > 0 ? model / sim - 1 : (model > 0 ? INFINITY : 0); }

int RunScratchpad(const ScratchpadOptions& o) {
  int exit_code = 0;
  std::optional<CommandInput> in = ReadCommandInput("scratchpad", o.file, o.decisions, 3, &exit_code);
  if (!in) return exit_code;
  ScratchpadTarget target = CachedScratchpadTarget();
  if (!o.target.empty()) {
    absl::StatusOr<ScratchpadTarget> t = LoadScratchpadTarget(o.target);
    if (!t.ok()) {
      std::cerr << "hlox scratchpad: " << t.status().message() << "\n";
      return 2;
    }
    target = *t;
  }
  if (o.scratchpad_bytes > 0) target.scratchpad_bytes = o.scratchpad_bytes;
  const std::string pipeline = o.pipeline.empty() ? (in->decisions.pipeline.empty() ? "scratchpad"
                                                                                    : in->decisions.pipeline)
                                                  : o.pipeline;
  // Decisions are recorded (--save-decisions) as a policy makes them: random ones, or those of
  // the decisions file with every undecided invocation at its default.
  PipelineDecisions used;
  const PipelineDecisions& given = in->decisions.decisions;
  DecisionPolicy policy = o.random >= 0 ? RandomPolicy(static_cast<uint64_t>(o.random), o.random_labels)
                                        : DecisionPolicy([&given](const std::string& key, const Module&,
                                                                  const std::vector<DecisionSite>& sites) {
                                            auto it = given.find(key);
                                            if (it != given.end()) return it->second;
                                            DecisionVector v;
                                            for (const DecisionSite& s : sites) v.push_back(s.default_choice);
                                            return v;
                                          });
  absl::StatusOr<std::unique_ptr<Module>> m = RunPipelineWithPolicy(*in->module, pipeline, policy, &used);
  if (!m.ok()) {
    std::cerr << "hlox scratchpad: " << m.status().message() << "\n";
    return IsInvalidDecisions(m.status()) ? 3 : 1;
  }
  if (absl::Status v = VerifyModule(**m); !v.ok()) {
    std::cerr << "hlox scratchpad: rewritten module does not verify: " << v.message() << "\n";
    return 1;
  }
  if (!o.save_decisions.empty()) {
    std::ofstream f(o.save_decisions);
    f << DecisionsToJson(DecisionsFile{pipeline, used}) << "\n";
    if (!f) {
      std::cerr << "hlox scratchpad: cannot write " << o.save_decisions << "\n";
      return 1;
    }
  }
  const Computation& entry = *(*m)->entry();
  const TrafficReport model = ScratchpadTraffic(entry, target);
  std::optional<TrafficReport> sim;
  if (o.simulate) {
    absl::StatusOr<TrafficReport> s = SimulateScratchpadTraffic(entry, target, o.max_touches);
    if (!s.ok()) {
      std::cerr << "hlox scratchpad: " << s.status().message() << "\n";
      return 1;
    }
    sim = *s;
  }
  if (o.json) {
    nlohmann::json j{{"module", o.file},
                     {"pipeline", pipeline},
                     {"target", {{"name", target.name}, {"scratchpad_bytes", target.scratchpad_bytes},
                                 {"line_bytes", target.line_bytes}, {"dram_gbs", target.dram_gbs},
                                 {"tflops", target.tflops}}},
                     {"model", {{"read_bytes", model.read_bytes}, {"write_bytes", model.write_bytes},
                                {"traffic_bytes", model.Total()}, {"seconds", model.seconds}}}};
    if (sim) {
      j["simulated"] = {{"read_bytes", sim->read_bytes}, {"write_bytes", sim->write_bytes},
                        {"traffic_bytes", sim->Total()}, {"seconds", sim->seconds}};
      j["model_vs_simulated"] = RelDiff(model.Total(), sim->Total());
    }
    if (o.kernels) {
      nlohmann::json ks = nlohmann::json::array();
      for (size_t k = 0; k < model.kernels.size(); ++k) {
        nlohmann::json e{{"name", model.kernels[k].name}, {"tiling", model.kernels[k].tiling},
                         {"tiles", model.kernels[k].tiles},
                         {"model_bytes", model.kernels[k].Total()}};
        if (sim && k < sim->kernels.size()) e["simulated_bytes"] = sim->kernels[k].Total();
        ks.push_back(e);
      }
      j["kernels"] = ks;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::printf("target     %s\n", target.ToString().c_str());
  std::printf("pipeline   %s\n", pipeline.c_str());
  if (o.kernels) {
    std::printf("%-40s %-12s %14s%s\n", "kernel", "tiling", "model bytes", sim ? "   simulated      diff" : "");
    for (size_t k = 0; k < model.kernels.size(); ++k) {
      const KernelTraffic& kt = model.kernels[k];
      std::printf("%-40s %-12s %14.0f", kt.name.c_str(), kt.tiling.c_str(), kt.Total());
      if (!sim) std::printf("  %s", kt.tiles.c_str());
      if (sim && k < sim->kernels.size()) {
        std::printf(" %14.0f %+8.1f%%", sim->kernels[k].Total(), 100 * RelDiff(kt.Total(), sim->kernels[k].Total()));
      }
      std::printf("\n");
    }
  }
  std::printf("model      %.6g bytes (read %.6g, written %.6g), %.6g s on the target\n", model.Total(),
              model.read_bytes, model.write_bytes, model.seconds);
  if (sim) {
    std::printf("simulated  %.6g bytes (read %.6g, written %.6g); model %+.2f%%\n", sim->Total(), sim->read_bytes,
                sim->write_bytes, 100 * RelDiff(model.Total(), sim->Total()));
  }
  return 0;
}

}  // namespace

void RegisterScratchpad(CLI::App& app) {
  auto o = std::make_shared<ScratchpadOptions>();
  auto* cmd = app.add_subcommand("scratchpad", "DRAM<->scratchpad traffic on a scratchpad accelerator (model, simulator)");
  cmd->add_option("file", o->file, "HLO text file")->required();
  cmd->add_option("--pipeline,-p", o->pipeline, "pipeline (default: the decisions file's, else 'scratchpad')");
  cmd->add_option("--decisions,-d", o->decisions, "decisions file (JSON or compact, docs/DECISIONS.md)");
  cmd->add_option("--target,--scratchpad-target", o->target,
                  "scratchpad target file (targets/scratchpad/*.json; default $HLOX_SCRATCHPAD_TARGET or the built-in "
                  "inferentia2-core)");
  cmd->add_option("--scratchpad", o->scratchpad_bytes, "scratchpad bytes (overrides the target's)");
  cmd->add_flag("--simulate", o->simulate, "also replay the tile steps on an LRU scratchpad and compare");
  cmd->add_flag("--kernels", o->kernels, "one line per kernel");
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->add_option("--max-touches", o->max_touches, "stop the simulation past this many line touches");
  cmd->add_option("--random", o->random, "random choices with this seed at the invocations of --random-labels");
  cmd->add_option("--random-labels", o->random_labels, "pass labels --random decides (comma-separated)")
      ->capture_default_str();
  cmd->add_option("--save-decisions", o->save_decisions, "write the decisions used (JSON) here");
  cmd->callback([o] { ExitCode() = RunScratchpad(*o); });
}

}  // namespace hlox::cli
