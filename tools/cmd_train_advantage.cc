// hlox train-advantage --logs DIR -o MODEL: train the local-advantage model on search logs.
// With --evaluate, load MODEL instead and print its rank correlation on each log (held-out check).
#include <filesystem>
#include <iostream>

#include "agent/train_advantage.h"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterTrainAdvantage(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-advantage", "train the learned advantage model on search logs");
  auto logs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto opts = std::make_shared<TrainOptions>();
  cmd->add_option("--logs", *logs, "folders or .jsonl files written by hlox search --out")->required();
  cmd->add_option("-o,--output", *out, "model file to write (with --evaluate: to read)")->required();
  auto evaluate = std::make_shared<bool>(false);
  cmd->add_flag("--evaluate", *evaluate, "rank-correlate the model's predictions with each log's measured advantages");
  cmd->add_option("--epochs", opts->epochs, "passes over the training samples")->capture_default_str();
  cmd->add_option("--lr", opts->learning_rate, "Adam learning rate")->capture_default_str();
  cmd->add_option("--seed", opts->seed)->capture_default_str();
  cmd->callback([logs, out, opts, evaluate] {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& p : *logs) {
      if (fs::is_directory(p)) {
        for (const auto& e : fs::recursive_directory_iterator(p)) {
          if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
        }
      } else {
        files.push_back(p);
      }
    }
    std::sort(files.begin(), files.end());
    if (*evaluate) {
      absl::StatusOr<AdvantageModel> loaded = AdvantageModel::Load(*out);
      absl::StatusOr<std::vector<RankReport>> reports =
          loaded.ok() ? EvaluateAdvantageModel(files, *loaded) : loaded.status();
      if (!reports.ok()) {
        std::cerr << "hlox train-advantage: " << reports.status().message() << "\n";
        ExitCode() = 1;
        return;
      }
      for (const RankReport& r : *reports) {
        std::cout << r.log << ": " << r.samples << " samples, spearman " << r.spearman << ", sign agreement "
                  << r.sign_agreement << "\n";
      }
      return;
    }
    AdvantageModel model(opts->seed);
    absl::StatusOr<TrainReport> r = TrainAdvantageModel(files, *opts, model);
    absl::Status saved = r.ok() ? model.Save(*out) : r.status();
    if (!saved.ok()) {
      std::cerr << "hlox train-advantage: " << saved.message() << "\n";
      ExitCode() = 1;
      return;
    }
    std::cout << "trained on " << r->graphs << " logs, " << r->samples << " labelled samples; loss "
              << r->initial_loss << " -> " << r->final_loss << "; wrote " << *out << "\n";
  });
}

}  // namespace hlox::cli
