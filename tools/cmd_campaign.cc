// hlox campaign --graphs DIR --algos a,b --budget N --seeds K [--resume]: many searches through one
// fleet, stored durably and resumable, summarised as Markdown/CSV tables and plots.
#include <iostream>

#include "absl/strings/str_split.h"
#include "agent/campaign.h"
#include "local/local_evaluator.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterCampaign(CLI::App& app) {
  auto* cmd = app.add_subcommand("campaign", "run searches over many graphs, algorithms and seeds");
  auto o = std::make_shared<CampaignOptions>();
  auto algos = std::make_shared<std::string>("random,greedy");
  auto objective = std::make_shared<std::string>("measured");
  o->session.progress = false;
  o->session.in_process_backend = LocalBackend();  // used with --in-process
  cmd->add_option("--graphs", o->graphs_dir, "folder of .hlo modules")->required();
  cmd->add_option("--algos", *algos, "comma-separated algorithms")->capture_default_str();
  cmd->add_option("--budget", o->session.search.budget, "evaluations per search")->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "searches per graph and algorithm (seeds 0..K-1)")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "campaign folder")->capture_default_str();
  cmd->add_flag("--resume", o->resume, "continue a campaign in --out, skipping finished runs");
  cmd->add_option("--pipeline", o->session.pipeline, "pipeline whose decision point is searched")
      ->capture_default_str();
  cmd->add_option("--point", o->session.point, "decision point key or prefix (default: the fusion pass)");
  cmd->add_option("--broker", o->session.broker, "broker address (default: embedded fleet)");
  cmd->add_option("--curve-key", o->session.curve_key, "own CURVE secret key file (for a secured --broker)");
  cmd->add_option("--broker-key", o->session.broker_key, "the broker's CURVE public key file (.pub)");
  cmd->add_option("--workers", o->session.workers, "embedded workers");
  cmd->add_option("--threads", o->session.threads, "runtime threads per evaluation")->capture_default_str();
  cmd->add_option("--objective", *objective, "measured|roofline|ops|scratchpad (traffic on --scratchpad-target)")->capture_default_str();
  cmd->add_option("--model", o->session.search.model_path, "advantage model for guided");
  cmd->add_option("--surrogate-children", o->session.search.surrogate_children,
                  "evolution: children per generation proposed by a surrogate model (0 = plain EA)")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  cmd->add_flag("--in-process", o->session.in_process, "evaluate in this process");
  auto sp_target = std::make_shared<std::string>();
  AddScratchpadTargetOption(cmd, sp_target.get());
  cmd->callback([o, algos, objective, sp_target] {
    if (!UseScratchpadTarget("campaign", *sp_target)) {
      ExitCode() = 2;
      return;
    }
    o->algos = absl::StrSplit(*algos, ',', absl::SkipEmpty());
    absl::StatusOr<Objective> obj = ParseObjective(*objective);
    absl::Status s = obj.status();
    if (s.ok()) {
      o->session.search.objective = *obj;
      o->session.verdict = *obj == Objective::kMeasured;
      s = RunCampaign(*o);
    }
    if (!s.ok()) {
      std::cerr << "hlox campaign: " << s.message() << "\n";
      ExitCode() = 1;
    }
  });
}

}  // namespace hlox::cli
