// hlox train-advantage: placeholder until its issue lands; says so and fails.
#include <iostream>

#include "tools/commands.h"

namespace hlox::cli {

void RegisterTrainAdvantage(CLI::App& app) {
  auto* cmd = app.add_subcommand("train-advantage", "(not built yet)");
  cmd->allow_extras();
  cmd->callback([] {
    std::cerr << "hlox train-advantage: not built yet\n";
    ExitCode() = 2;
  });
}

}  // namespace hlox::cli
