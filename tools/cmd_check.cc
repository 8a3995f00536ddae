// hlox check FILE... [--json]: parses each file, verifies it, and checks the text round trip
// (print -> parse -> structural compare, and print again -> identical text). One line per file,
// or a JSON array with --json; exit status 1 if any file fails.
#include <iostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/module_compare.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "nlohmann/json.hpp"
#include "tools/commands.h"

namespace hlox::cli {
namespace {

struct CheckResult {
  bool ok = false;
  int64_t instructions = 0, computations = 0, opcodes = 0;
  std::string error;
};

CheckResult CheckFile(const std::string& path) {
  CheckResult r;
  auto parsed = ParseModuleFile(path);
  if (!parsed.ok()) {
    r.error = std::string(parsed.status().message());
    return r;
  }
  const Module& m = **parsed;
  std::set<Opcode> ops;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) ops.insert(i->opcode());
  }
  r.instructions = m.InstructionCount();
  r.computations = static_cast<int64_t>(m.computations().size());
  r.opcodes = static_cast<int64_t>(ops.size());
  if (absl::Status s = VerifyModule(m); !s.ok()) {
    r.error = absl::StrCat(path, ": verifier: ", s.message());
    return r;
  }
  std::string text = PrintModule(m);
  auto reparsed = ParseModule(text, absl::StrCat(path, " (printed)"));
  if (!reparsed.ok()) {
    r.error = absl::StrCat(path, ": round trip: printed text does not parse: ", reparsed.status().message());
    return r;
  }
  if (absl::Status s = CompareModules(m, **reparsed); !s.ok()) {
    r.error = absl::StrCat(path, ": round trip: ", s.message());
    return r;
  }
  if (PrintModule(**reparsed) != text) {
    r.error = absl::StrCat(path, ": round trip: printing twice gives different text");
    return r;
  }
  r.ok = true;
  return r;
}

}  // namespace

void RegisterCheck(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Parse, verify and round-trip HLO text files");
  auto files = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("files", *files, "HLO text files")->required();
  cmd->add_flag("--json", *json, "print a JSON array of results");
  cmd->callback([files, json] {
    nlohmann::json out = nlohmann::json::array();
    bool all_ok = true;
    for (const std::string& f : *files) {
      CheckResult r = CheckFile(f);
      all_ok = all_ok && r.ok;
      if (*json) {
        out.push_back({{"file", f}, {"ok", r.ok}, {"instructions", r.instructions},
                       {"computations", r.computations}, {"opcodes", r.opcodes}, {"error", r.error}});
      } else if (r.ok) {
        std::cout << "OK " << f << ": " << r.instructions << " instructions, " << r.computations
                  << " computations, " << r.opcodes << " distinct opcodes\n";
      } else {
        std::cout << "FAIL " << r.error << "\n";
      }
    }
    if (*json) std::cout << out.dump(2) << "\n";
    ExitCode() = all_ok ? 0 : 1;
  });
}

}  // namespace hlox::cli
