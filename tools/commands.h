// Subcommands of the `hlox` binary. Each lives in its own cmd_<name>.cc and registers itself
// on the CLI11 app; main.cc calls every Register function below, in this order.
#pragma once

#include "CLI/CLI.hpp"

namespace hlox::cli {

void RegisterCheck(CLI::App& app);      // hlox check FILE...
void RegisterPrint(CLI::App& app);      // hlox print FILE
void RegisterRun(CLI::App& app);        // hlox run FILE
void RegisterSites(CLI::App& app);      // hlox sites FILE --pipeline P
void RegisterOpt(CLI::App& app);        // hlox opt FILE --pipeline P
void RegisterEval(CLI::App& app);       // hlox eval FILE
void RegisterCalibrate(CLI::App& app);  // hlox calibrate
void RegisterCalibrateVerdict(CLI::App& app);  // hlox calibrate-verdict FILE...
void RegisterBroker(CLI::App& app);     // hlox broker --bind ADDR --db PATH
void RegisterWorker(CLI::App& app);     // hlox worker --broker ADDR
void RegisterSearch(CLI::App& app);     // hlox search FILE --algo A --budget N
void RegisterCampaign(CLI::App& app);   // hlox campaign --graphs DIR ...
void RegisterTrainAdvantage(CLI::App& app);  // hlox train-advantage --logs DIR -o MODEL
void RegisterDataset(CLI::App& app);    // hlox dataset FILE ... (submodules, fusions, subgraphs)
void RegisterStatus(CLI::App& app);     // hlox status --broker ADDR
void RegisterKeygen(CLI::App& app);     // hlox keygen
void RegisterCpu(CLI::App& app);        // hlox cpu
void RegisterPasses(CLI::App& app);     // hlox passes
void RegisterScratchpad(CLI::App& app); // hlox scratchpad FILE [--simulate]

// Exit status a subcommand callback stores; main returns it.
int& ExitCode();

}  // namespace hlox::cli
