// hlox opt FILE --pipeline P [--decisions F] [-o OUT] [--report]: runs a pipeline with the
// given decisions (default policy elsewhere) and writes the rewritten module.
#include <fstream>
#include <iostream>
#include <memory>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/decisions_io.h"
#include "passes/module_util.h"
#include "passes/pipeline.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct OptOptions {
  std::string file;
  std::string pipeline;
  std::string decisions;
  std::string output;
  bool report = false;
};

int RunOpt(const OptOptions& o) {
  int exit_code = 0;
  std::optional<CommandInput> in = ReadCommandInput("opt", o.file, o.decisions, 1, &exit_code);
  if (!in) return exit_code;
  const Module& module = *in->module;
  const DecisionsFile& decisions = in->decisions;
  std::string pipeline = EffectivePipeline(o.pipeline, decisions);
  PipelineReport report;
  auto out = RunPipeline(module, pipeline, decisions.decisions, &report);
  if (!out.ok()) {
    std::cerr << "hlox opt: " << out.status().message() << "\n";
    return IsInvalidDecisions(out.status()) ? 3 : 1;
  }
  if (absl::Status v = VerifyModule(**out); !v.ok()) {
    std::cerr << "hlox opt: rewritten module does not verify: " << v.message() << "\n";
    return 1;
  }
  if (o.report) {
    for (const auto& inv : report.invocations) {
      std::cerr << inv.key << ": " << inv.sites << " sites, " << inv.report.applied << " applied, "
                << inv.report.stale.size() << " stale\n";
    }
    std::cerr << "instructions " << module.InstructionCount() << " -> " << (*out)->InstructionCount()
              << ", op count " << OpCount(module) << " -> " << OpCount(**out) << "\n";
  }
  std::string text = PrintModule(**out);
  if (o.output.empty()) {
    std::cout << text;
  } else {
    std::ofstream f(o.output, std::ios::binary);
    f << text;
    if (!f) {
      std::cerr << "hlox opt: cannot write " << o.output << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

void RegisterOpt(CLI::App& app) {
  auto o = std::make_shared<OptOptions>();
  auto* cmd = app.add_subcommand("opt", "Run a pipeline with decisions and write the rewritten module");
  cmd->add_option("file", o->file, "HLO text file")->required();
  cmd->add_option("--pipeline,-p", o->pipeline, "pipeline (default: the decisions file's, else 'default')");
  cmd->add_option("--decisions,-d", o->decisions, "decisions file (JSON or compact, docs/DECISIONS.md)");
  cmd->add_option("-o,--output", o->output, "output file (default stdout)");
  cmd->add_flag("--report", o->report, "print per-invocation site counts to stderr");
  cmd->callback([o] { ExitCode() = RunOpt(*o); });
}

}  // namespace hlox::cli
