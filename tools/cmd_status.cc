// hlox status: placeholder until its issue lands; says so and fails.
#include <iostream>

#include "tools/commands.h"

namespace hlox::cli {

void RegisterStatus(CLI::App& app) {
  auto* cmd = app.add_subcommand("status", "(not built yet)");
  cmd->allow_extras();
  cmd->callback([] {
    std::cerr << "hlox status: not built yet\n";
    ExitCode() = 2;
  });
}

}  // namespace hlox::cli
