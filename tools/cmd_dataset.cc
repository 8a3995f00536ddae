// hlox dataset FILE --out DIR [--fusions] [--computations] [--subgraphs N --seed S --size K]:
// writes HloEnv-style standalone modules (fusion bodies, called computations, random
// connected subgraphs of the entry) as DIR/<stem>.<kind>.<name>.hlo, each verified first.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/dataset.h"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct DatasetOptions {
  std::string file, out;
  bool fusions = false, computations = false;
  int subgraphs = 0;
  uint64_t seed = 0;
  int size = 8;
};

int RunDataset(const DatasetOptions& o) {
  auto module = ParseModuleFile(o.file);
  if (!module.ok()) {
    std::cerr << module.status().message() << "\n";
    return 1;
  }
  std::vector<ExtractedModule> all;
  auto take = [&all](std::vector<ExtractedModule> v) {
    for (auto& e : v) all.push_back(std::move(e));
  };
  bool any = o.fusions || o.computations || o.subgraphs > 0;
  if (o.fusions || !any) take(ExtractFusions(**module));
  if (o.computations || !any) take(ExtractCalledComputations(**module));
  if (o.subgraphs > 0) take(ExtractRandomSubgraphs(**module, o.subgraphs, o.seed, o.size));
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    std::cerr << "hlox dataset: cannot create " << o.out << ": " << ec.message() << "\n";
    return 1;
  }
  std::string stem = std::filesystem::path(o.file).stem().string();
  int written = 0, rejected = 0;
  for (const ExtractedModule& e : all) {
    if (absl::Status v = VerifyModule(*e.module); !v.ok()) {
      std::cerr << "skipped " << e.kind << " " << e.name << ": " << v.message() << "\n";
      ++rejected;
      continue;
    }
    std::filesystem::path p = std::filesystem::path(o.out) / (stem + "." + e.kind + "." + e.name + ".hlo");
    std::ofstream f(p, std::ios::binary);
    f << PrintModule(*e.module);
    if (!f) {
      std::cerr << "hlox dataset: cannot write " << p << "\n";
      return 1;
    }
    ++written;
  }
  std::cout << "wrote " << written << " modules to " << o.out << " (" << rejected << " rejected)\n";
  return 0;
}

}  // namespace

void RegisterDataset(CLI::App& app) {
  auto o = std::make_shared<DatasetOptions>();
  auto* cmd = app.add_subcommand("dataset", "Extract standalone training modules (fusions, computations, subgraphs)");
  cmd->add_option("file", o->file, "HLO text file")->required();
  cmd->add_option("--out", o->out, "output directory")->required();
  cmd->add_flag("--fusions", o->fusions, "each fusion's computation (default when nothing is chosen)");
  cmd->add_flag("--computations", o->computations, "each non-trivial called computation");
  cmd->add_option("--subgraphs", o->subgraphs, "number of random connected entry subgraphs");
  cmd->add_option("--seed", o->seed, "seed for --subgraphs");
  cmd->add_option("--size", o->size, "instructions per subgraph (at most)");
  cmd->callback([o] { ExitCode() = RunDataset(*o); });
}

}  // namespace hlox::cli
