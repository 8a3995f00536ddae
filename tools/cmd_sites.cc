// hlox sites FILE --pipeline P [--decisions F] [--json]: lists the sites of the pipeline's next
// decision point (the first invocation that has sites and no decisions yet).
#include <iostream>
#include <memory>

#include "absl/strings/str_join.h"
#include "ir/parser.h"
#include "nlohmann/json.hpp"
#include "passes/decisions_io.h"
#include "passes/features.h"
#include "passes/pipeline.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct SitesOptions {
  std::string file;
  std::string pipeline = "default";
  std::string decisions;
  bool json = false;
  bool features = false;
};

int RunSites(const SitesOptions& o) {
  int exit_code = 0;
  std::optional<CommandInput> in = ReadCommandInput("sites", o.file, o.decisions, 1, &exit_code);
  if (!in) return exit_code;
  const Module& module = *in->module;
  const PipelineDecisions& decisions = in->decisions.decisions;
  auto point = NextDecisionPoint(module, o.pipeline, decisions);
  if (!point.ok()) {
    std::cerr << "hlox sites: " << point.status().message() << "\n";
    return 1;
  }
  if (o.json) {
    nlohmann::json j;
    j["pipeline"] = o.pipeline;
    j["key"] = point->has_value() ? nlohmann::json((*point)->key) : nlohmann::json(nullptr);
    j["sites"] = nlohmann::json::parse(SitesToJson(point->has_value() ? (*point)->sites
                                                                      : std::vector<DecisionSite>{}));
    if (o.features && point->has_value()) {
      j["graph"] = nlohmann::json::parse(
          GraphFeaturesToJson(ExtractGraphFeatures(*(*point)->module, (*point)->sites)));
    }
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  if (!point->has_value()) {
    std::cout << "no decision point left in pipeline " << o.pipeline << "\n";
    return 0;
  }
  const DecisionPoint& p = **point;
  std::cout << "decision point " << p.key << ": " << p.sites.size() << " sites\n";
  for (size_t k = 0; k < p.sites.size(); ++k) {
    const DecisionSite& s = p.sites[k];
    std::cout << k << "\t" << s.id << "\t" << s.rule << "\t[" << absl::StrJoin(s.instructions, ",") << "]\t{"
              << absl::StrJoin(s.choices, ",") << "}\tdefault=" << s.default_choice << "\n";
  }
  return 0;
}

}  // namespace

void RegisterSites(CLI::App& app) {
  auto o = std::make_shared<SitesOptions>();
  auto* cmd = app.add_subcommand("sites", "List the sites of a pipeline's next decision point");
  cmd->add_option("file", o->file, "HLO text file")->required();
  cmd->add_option("--pipeline,-p", o->pipeline, "pipeline name (default, none, fusion-only, ...)");
  cmd->add_option("--decisions,-d", o->decisions, "decisions already made (JSON or compact file)");
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->add_flag("--features", o->features, "with --json: include graph features of the module");
  cmd->callback([o] { ExitCode() = RunSites(*o); });
}

}  // namespace hlox::cli
