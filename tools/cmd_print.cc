// hlox print FILE: parses an HLO text file and prints its canonical text; exit 1 with the
// parse error (file:line:col, source line, caret) on bad input.
#include <iostream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterPrint(CLI::App& app) {
  auto* cmd = app.add_subcommand("print", "Print the canonical text of an HLO module");
  auto file = std::make_shared<std::string>();
  auto no_metadata = std::make_shared<bool>(false);
  cmd->add_option("file", *file, "HLO text file")->required();
  cmd->add_flag("--no-metadata", *no_metadata, "omit metadata={...} attributes");
  cmd->callback([file, no_metadata] {
    auto m = ParseModuleFile(*file);
    if (!m.ok()) {
      std::cerr << m.status().message() << "\n";
      ExitCode() = 1;
      return;
    }
    PrintOptions opts;
    opts.print_metadata = !*no_metadata;
    std::cout << PrintModule(**m, opts);
    ExitCode() = 0;
  });
}

}  // namespace hlox::cli
