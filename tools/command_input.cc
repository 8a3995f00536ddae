#include "tools/command_input.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cost/scratchpad.h"
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

bool UseScratchpadTarget(std::string_view command, const std::string& path) {
  if (path.empty()) return true;
  absl::StatusOr<ScratchpadTarget> t = LoadScratchpadTarget(path);
  if (!t.ok()) {
    std::cerr << "hlox " << command << ": " << t.status().message() << "\n";
    return false;
  }
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).string();
  setenv("HLOX_SCRATCHPAD_TARGET", ec ? path.c_str() : abs.c_str(), 1);
  return true;
}

void AddScratchpadTargetOption(CLI::App* cmd, std::string* path) {
  cmd->add_option("--scratchpad-target", *path,
                  "scratchpad target file for the traffic figure and the scratchpad objective (targets/scratchpad/"
                  "*.json; default $HLOX_SCRATCHPAD_TARGET or the built-in inferentia2-core); the workers started "
                  "here use it too");
}

}  // namespace hlox::cli
