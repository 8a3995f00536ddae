// hlox passes [--json]: every pass label a pipeline step or the pass-order menu can name, with
// what it does and the site kinds its decision sites carry (passes/pipeline.h PassInfos).
#include <algorithm>
#include <iostream>

#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "passes/pipeline.h"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterPasses(CLI::App& app) {
  auto* cmd = app.add_subcommand("passes", "List every pass with what it does and its site kinds");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "a JSON array");
  cmd->callback([json] {
    nlohmann::json out = nlohmann::json::array();
    const std::vector<PassInfo> infos = PassInfos();
    size_t width = 0;  // the widest label, so every description starts in one column
    for (const PassInfo& p : infos) width = std::max(width, p.label.size());
    for (const PassInfo& p : infos) {
      if (*json) {
        out.push_back({{"label", p.label}, {"description", p.description}, {"site_kinds", p.site_kinds}});
      } else {
        std::cout << p.label << std::string(width + 2 - p.label.size(), ' ') << p.description
                  << "  [" << absl::StrJoin(p.site_kinds, ", ") << "]\n";
      }
    }
    if (*json) std::cout << out.dump(1) << "\n";
    ExitCode() = 0;
  });
}

}  // namespace hlox::cli
