// Shared test helpers: where the real-HLO corpus is, and how tests react when it is missing.
//
// The corpus is found at $HLOX_CORPUS if set, else at <source>/../shared/hlo. A test that needs
// it calls HLOX_REQUIRE_CORPUS(): when missing, the test is skipped with a message, except under
// CI=true where missing data is a failure.
#pragma once

#include <string>
#include <vector>

#include "common/cpu_isa.h"
#include "gtest/gtest.h"

namespace hlox::testing {

// Calls f(level) once with each instruction-set level this CPU supports active (generic first,
// up to CpuIsa(); common/cpu_isa.h), with a trace naming the level for failures inside.
template <typename F>
void ForEachIsaLevel(F&& f) {
  for (int l = 0; l <= static_cast<int>(CpuIsa()); ++l) {
    const IsaLevel level = static_cast<IsaLevel>(l);
    SCOPED_TRACE(std::string("isa level ") + std::string(IsaName(level)));
    ScopedIsa scope(level);
    f(level);
  }
}

// The corpus folder, or "" when it does not exist.
std::string CorpusDir();
// Every *.hlo file of the corpus (top level), sorted; empty when missing.
std::vector<std::string> CorpusFiles();
// The pass_pairs/*.hlo files, sorted.
std::vector<std::string> PassPairFiles();
bool InCi();
// Reads a whole file; fails the test on error.
std::string ReadFileOrDie(const std::string& path);
// Path of the built hlox binary.
std::string HloxBinary();
struct CliRun {
  int code = -1;    // exit status
  std::string out;  // standard output (and standard error when asked for)
};
// Runs the hlox binary with `args` (a shell word list) and collects its output; with
// `timeout_s` > 0 it is killed after that long (code 124), so a command that loops fails
// instead of hanging the test.
CliRun RunHlox(const std::string& args, bool with_stderr = false, int timeout_s = 0);
std::string SourceDir();

}  // namespace hlox::testing

#define HLOX_REQUIRE_CORPUS()                                                          \
  do {                                                                                 \
    if (::hlox::testing::CorpusDir().empty()) {                                        \
      if (::hlox::testing::InCi()) FAIL() << "HLO corpus missing (set HLOX_CORPUS)";   \
      GTEST_SKIP() << "HLO corpus not found; set HLOX_CORPUS to ../shared/hlo";         \
    }                                                                                  \
  } while (0)
