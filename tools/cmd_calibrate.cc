// hlox calibrate: placeholder until its issue lands; says so and fails.
#include <iostream>

#include "tools/commands.h"

namespace hlox::cli {

void RegisterCalibrate(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate", "(not built yet)");
  cmd->allow_extras();
  cmd->callback([] {
    std::cerr << "hlox calibrate: not built yet\n";
    ExitCode() = 2;
  });
}

}  // namespace hlox::cli
