// hlox cpu: what the runtime found on this machine: the CPU model, the instruction-set levels
// it supports and the one its kernels use (HLOX_ISA lowers it; common/cpu_isa.h). --json for
// scripts; --levels prints the supported levels one a line, lowest first (scripts/test.sh runs
// the runtime tests once per level). It also names this binary's build id (common/build_info.h).
#include <iostream>
#include <string>

#include "common/build_info.h"
#include "common/cpu_isa.h"
#include "nlohmann/json.hpp"
#include "tools/commands.h"

namespace hlox::cli {

void RegisterCpu(CLI::App& app) {
  auto* cmd = app.add_subcommand("cpu", "Show the CPU and the instruction-set level the kernels use");
  auto json = std::make_shared<bool>(false);
  auto levels = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "one JSON object");
  cmd->add_flag("--levels", *levels, "the supported levels, one a line, lowest first");
  cmd->callback([json, levels] {
    const IsaLevel cpu = CpuIsa(), active = ActiveIsa();
    std::vector<std::string> supported;
    for (int l = 0; l <= static_cast<int>(cpu); ++l) supported.emplace_back(IsaName(static_cast<IsaLevel>(l)));
    if (*levels) {
      for (const std::string& s : supported) std::cout << s << "\n";
    } else if (*json) {
      nlohmann::json j{{"cpu", CpuModelName()},
                       {"supported", supported},
                       {"best", std::string(IsaName(cpu))},
                       {"active", std::string(IsaName(active))},
                       {"build", std::string(BuildId())}};
      std::cout << j.dump() << "\n";
    } else {
      std::cout << "cpu:       " << CpuModelName() << "\n"
                << "supported: " << IsaName(cpu) << " (and every level below)\n"
                << "active:    " << IsaName(active) << (active != cpu ? "  (lowered by HLOX_ISA)" : "") << "\n"
                << "build:     " << BuildId() << "\n";
    }
    ExitCode() = 0;
  });
}

}  // namespace hlox::cli
