// What the rewriting commands (opt, sites, eval) read before they do anything: the module file
// and an optional decisions file, with one way of reporting a bad input.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "ir/module.h"
#include "passes/decisions_io.h"

namespace hlox::cli {

struct CommandInput {
  std::unique_ptr<Module> module;
  DecisionsFile decisions;  // empty when no decisions file was given
};

// Parses the HLO file `file` and reads `decisions_path` (empty: none). On failure prints the
// reason on stderr (the decisions file's prefixed with "hlox <command>: ") and returns nullopt
// with *exit_code set: 1 for the module, `decisions_exit` for the decisions file.
std::optional<CommandInput> ReadCommandInput(std::string_view command, const std::string& file,
                                             const std::string& decisions_path, int decisions_exit,
                                             int* exit_code);

// --scratchpad-target FILE: checks that the file is a scratchpad target and sets
// $HLOX_SCRATCHPAD_TARGET to its absolute path, so this process and the workers it starts count
// scratchpad traffic for it. Empty: nothing to do. On a bad file prints the reason and returns
// false.
bool UseScratchpadTarget(std::string_view command, const std::string& path);
void AddScratchpadTargetOption(CLI::App* cmd, std::string* path);

}  // namespace hlox::cli
