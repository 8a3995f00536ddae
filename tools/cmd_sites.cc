// hlox sites FILE --pipeline P [--decisions F] [--json]: lists the sites of the pipeline's next
// decision point (the first invocation that has sites and no decisions yet). With --broker ADDR
// it asks a fleet instead (a sites job, client::RequestSites) and lists every decision point of
// the run, as a client in another language would see them.
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "absl/strings/str_join.h"
#include "client/client.h"
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
  std::string broker;                   // ask this fleet instead of running the passes here
  std::string curve_key, broker_key;    // for a secured broker
  double timeout_s = 120;
};

// One point as the text listing prints it: a header line, then one line per site.
void PrintPoint(const nlohmann::json& p) {
  std::cout << "decision point " << p["key"].get<std::string>() << ": " << p["sites"].size()
            << " sites" << (p.value("decided", false) ? " (decided)" : "") << "\n";
  for (const nlohmann::json& s : p["sites"]) {
    std::cout << s["index"].get<int64_t>() << "\t" << s["id"].get<std::string>() << "\t"
              << s["rule"].get<std::string>() << "\t["
              << absl::StrJoin(s["instructions"].get<std::vector<std::string>>(), ",") << "]\t{"
              << absl::StrJoin(s["choices"].get<std::vector<std::string>>(), ",")
              << "}\tdefault=" << s["default"].get<int>() << "\n";
  }
}

// --broker: the module's text as the file holds it, the decisions read as locally, one sites job.
int RunSitesOnFleet(const SitesOptions& o, const PipelineDecisions& decisions) {
  std::ifstream f(o.file, std::ios::binary);
  std::ostringstream text;
  text << f.rdbuf();
  absl::StatusOr<proto::CurveClientKeys> curve = proto::LoadCurveClientKeys(o.curve_key, o.broker_key);
  if (!curve.ok()) {
    std::cerr << "hlox sites: " << curve.status().message() << "\n";
    return 1;
  }
  client::ClientOptions options;
  options.curve = *curve;
  absl::StatusOr<ResultRecord> r = client::RequestSites(
      o.broker, text.str(), o.pipeline, decisions,
      std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000)), options);
  if (!r.ok()) {
    std::cerr << "hlox sites: " << r.status().message() << "\n";
    return 1;
  }
  if (r->status != JobStatus::kOk) {
    std::cerr << "hlox sites: " << JobStatusName(r->status) << ": " << r->message << "\n";
    return 1;
  }
  nlohmann::json points = nlohmann::json::parse(r->sites, nullptr, false);
  if (!points.is_array()) {
    std::cerr << "hlox sites: the fleet sent a malformed sites list\n";
    return 1;
  }
  if (o.json) {
    std::cout << nlohmann::json{{"pipeline", o.pipeline}, {"points", points}}.dump(1) << "\n";
    return 0;
  }
  if (points.empty()) std::cout << "no decision point in pipeline " << o.pipeline << "\n";
  for (const nlohmann::json& p : points) PrintPoint(p);
  return 0;
}

int RunSites(const SitesOptions& o) {
  int exit_code = 0;
  std::optional<CommandInput> in = ReadCommandInput("sites", o.file, o.decisions, 1, &exit_code);
  if (!in) return exit_code;
  const Module& module = *in->module;
  const PipelineDecisions& decisions = in->decisions.decisions;
  if (!o.broker.empty()) return RunSitesOnFleet(o, decisions);
  auto point = NextDecisionPoint(module, o.pipeline, decisions);
  if (!point.ok()) {
    std::cerr << "hlox sites: " << point.status().message() << "\n";
    return 1;
  }
  // The same object a sites job lists per point (passes/features.h), plus the pipeline.
  DecisionPointSites next;
  if (point->has_value()) {
    const DecisionPoint& p = **point;
    next = {p.key, p.key.substr(0, p.key.rfind('#')), false, p.sites};
  }
  nlohmann::json j = nlohmann::json::parse(DecisionPointToJson(next));
  if (!o.json) {
    if (point->has_value()) {
      PrintPoint(j);
    } else {
      std::cout << "no decision point left in pipeline " << o.pipeline << "\n";
    }
    return 0;
  }
  j["pipeline"] = o.pipeline;
  if (!point->has_value()) {
    j["key"] = nullptr;
    j["pass"] = nullptr;
  }
  if (o.features && point->has_value()) {
    j["graph"] = nlohmann::json::parse(
        GraphFeaturesToJson(ExtractGraphFeatures(*(*point)->module, (*point)->sites)));
  }
  std::cout << j.dump(1) << "\n";
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
  cmd->add_option("--broker", o->broker,
                  "ask this fleet (a sites job) and list every decision point of the run");
  cmd->add_option("--timeout", o->timeout_s, "with --broker: seconds to wait for the answer")
      ->capture_default_str();
  cmd->add_option("--curve-key", o->curve_key, "own CURVE secret key file (for a secured broker)");
  cmd->add_option("--broker-key", o->broker_key, "the broker's CURVE public key file (.pub)");
  cmd->callback([o] { ExitCode() = RunSites(*o); });
}

}  // namespace hlox::cli
