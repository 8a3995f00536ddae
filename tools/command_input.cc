#include "tools/command_input.h"

#include <iostream>

#include "ir/parser.h"

namespace hlox::cli {

std::optional<CommandInput> ReadCommandInput(std::string_view command, const std::string& file,
                                             const std::string& decisions_path, int decisions_exit,
                                             int* exit_code) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseModuleFile(file);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    *exit_code = 1;
    return std::nullopt;
  }
  absl::StatusOr<DecisionsFile> decisions = ReadDecisionsFile(decisions_path);
  if (!decisions.ok()) {
    std::cerr << "hlox " << command << ": " << decisions.status().message() << "\n";
    *exit_code = decisions_exit;
    return std::nullopt;
  }
  return CommandInput{std::move(*module), std::move(*decisions)};
}

}  // namespace hlox::cli
