// hlox opt: placeholder until its issue lands; says so and fails.
#include <iostream>

#include "tools/commands.h"

namespace hlox::cli {

void RegisterOpt(CLI::App& app) {
  auto* cmd = app.add_subcommand("opt", "(not built yet)");
  cmd->allow_extras();
  cmd->callback([] {
    std::cerr << "hlox opt: not built yet\n";
    ExitCode() = 2;
  });
}

}  // namespace hlox::cli
