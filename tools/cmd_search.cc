// hlox search FILE --algo A --budget N [--broker ADDR | --workers N] [--out DIR] [--json]:
// search a pipeline's decision point for decisions faster than the default policy.
#include <iostream>

#include "agent/search_session.h"
#include "local/local_evaluator.h"
#include "tools/command_input.h"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterSearch(CLI::App& app) {
  auto* cmd = app.add_subcommand("search", "search decisions that beat the default pipeline");
  auto o = std::make_shared<SessionOptions>();
  o->in_process_backend = LocalBackend();  // used with --in-process
  auto start = std::make_shared<std::string>("default");
  auto objective = std::make_shared<std::string>("measured");
  auto json = std::make_shared<bool>(false);
  auto no_verdict = std::make_shared<bool>(false);
  cmd->add_option("file", o->module_path, "HLO module")->required();
  cmd->add_option("--algo", o->search.algo, "random|greedy|beam|anneal|gibbs|evolution|pass-order|guided")->capture_default_str();
  cmd->add_option("--budget", o->search.budget, "evaluations, the default baseline included")->capture_default_str();
  cmd->add_option("--pipeline", o->pipeline, "pipeline whose decision point is searched")->capture_default_str();
  cmd->add_option("--point", o->point, "decision point key or prefix (default: the fusion pass)");
  cmd->add_option("--broker", o->broker, "broker address (default: an embedded fleet on this machine)");
  cmd->add_option("--curve-key", o->curve_key, "own CURVE secret key file (for a secured --broker)");
  cmd->add_option("--broker-key", o->broker_key, "the broker's CURVE public key file (.pub)");
  cmd->add_option("--workers", o->workers, "embedded workers (default: one per core)");
  cmd->add_flag("--in-process", o->in_process, "evaluate in this process, without a fleet");
  cmd->add_option("--threads", o->threads, "runtime threads per evaluation")->capture_default_str();
  cmd->add_option("--seed", o->search.seed, "search and input seed")->capture_default_str();
  cmd->add_option("--start", *start, "default|random starting decisions")->capture_default_str();
  cmd->add_option("--objective", *objective, "measured|roofline|ops|scratchpad (traffic on --scratchpad-target)")->capture_default_str();
  cmd->add_option("--model", o->search.model_path, "advantage model for --algo guided");
  cmd->add_option("--temperature", o->search.temperature, "anneal start / gibbs tau (relative)")->capture_default_str();
  cmd->add_option("--beam-width", o->search.beam_width, "beam: configurations kept per step")->capture_default_str();
  cmd->add_option("--population", o->search.population, "evolution: population size")->capture_default_str();
  cmd->add_option("--surrogate-children", o->search.surrogate_children,
                  "evolution: children per generation proposed by a surrogate model (0 = plain EA)")
      ->capture_default_str()->check(CLI::Range(0, 1000));
  cmd->add_option("--top", o->search.top_fraction, "guided: alpha, fraction of top-predicted nodes")->capture_default_str();
  cmd->add_option("--hops", o->search.neighbourhood, "guided: k, neighbourhood mutated")->capture_default_str();
  cmd->add_option("--out", o->out_dir, "write best_decisions.json, log.jsonl, summary.json, progress.png");
  cmd->add_flag("--json", *json, "print a JSON summary on stdout");
  cmd->add_flag("--no-verdict", *no_verdict, "skip the paired final measurement");
  cmd->add_option("--race", o->race_k, "verdict: race this many top candidates (0 = measure only the search's best)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  cmd->add_option("--race-seconds", o->race_seconds, "verdict race selection time (the fresh confirmation adds ~3 s)")
      ->capture_default_str()->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--default-every", o->search.default_every,
                  "re-measure the default every N evaluations (0 = once, first)")
      ->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd->add_option("--noise-aware", o->search.noise_aware,
                  "median of re-measured, drift-corrected costs; winners re-measured (false = single samples)")
      ->capture_default_str();
  cmd->add_option("--confirm-samples", o->search.confirm_samples, "measurements a new best needs (noise-aware)")
      ->capture_default_str()->check(CLI::Range(1, 20));
  auto sp_target = std::make_shared<std::string>();
  AddScratchpadTargetOption(cmd, sp_target.get());
  cmd->callback([o, start, objective, json, no_verdict, sp_target] {
    if (!UseScratchpadTarget("search", *sp_target)) {
      ExitCode() = 2;
      return;
    }
    if (*start != "default" && *start != "random") {
      std::cerr << "hlox search: --start must be default or random\n";
      ExitCode() = 1;
      return;
    }
    o->search.start_random = *start == "random";
    absl::StatusOr<Objective> obj = ParseObjective(*objective);
    if (!obj.ok()) {
      std::cerr << "hlox search: " << obj.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    o->search.objective = *obj;
    o->verdict = !*no_verdict && *obj == Objective::kMeasured;
    absl::StatusOr<SessionResult> r = RunSearchSession(*o);
    if (!r.ok()) {
      std::cerr << "hlox search: " << r.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    if (*json) {
      std::cout << r->Summary(*o).dump(2) << "\n";
    } else {
      std::cout << FormatSessionTable(*o, *r);
      if (!o->out_dir.empty()) std::cout << "outputs in " << o->out_dir << "\n";
    }
  });
}

}  // namespace hlox::cli
