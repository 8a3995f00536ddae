// The hlox command-line tool: one binary with git-style subcommands. Flags fill an options
// struct in each cmd_*.cc, a library call does the work, its status becomes the exit code.
#include <iostream>

#include "common/build_info.h"
#include "common/logging.h"
#include "tools/commands.h"

namespace hlox::cli {
int& ExitCode() {
  static int code = 0;
  return code;
}
}  // namespace hlox::cli

int main(int argc, char** argv) {
  CLI::App app{"hlox: HLO graph rewrites, a CPU runtime and a distributed evaluation service"};
  app.require_subcommand(1);
  std::string log_level;
  app.add_option("--log", log_level, "log level: trace, debug, info, warn, error, off");
  app.set_version_flag("--version", std::string(HLOX_VERSION) + " (build " +
                                        std::string(hlox::BuildId()) + ")");
  app.parse_complete_callback([&] {
    if (!log_level.empty()) hlox::log::SetLevel(log_level);
  });
  using namespace hlox::cli;
  for (auto reg : {RegisterCheck, RegisterPrint, RegisterRun, RegisterSites, RegisterOpt,
                   RegisterEval, RegisterCalibrate, RegisterCalibrateVerdict, RegisterBroker, RegisterWorker,
                   RegisterSearch, RegisterCampaign, RegisterTrainAdvantage, RegisterDataset,
                   RegisterStatus, RegisterKeygen, RegisterCpu, RegisterPasses, RegisterScratchpad}) {
    reg(app);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return ExitCode();
}
