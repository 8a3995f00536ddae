// Corpus discovery and small file helpers for tests.
#include "tests/test_util.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hlox::testing {
namespace fs = std::filesystem;

std::string SourceDir() {
  const char* env = std::getenv("HLOX_SOURCE_DIR");
  return env ? env : HLOX_SOURCE_DIR;
}

std::string CorpusDir() {
  if (const char* env = std::getenv("HLOX_CORPUS")) {
    return fs::is_directory(env) ? std::string(env) : std::string();
  }
  fs::path p = fs::path(SourceDir()) / ".." / "shared" / "hlo";
  return fs::is_directory(p) ? fs::canonical(p).string() : std::string();
}

static std::vector<std::string> HloFilesIn(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> CorpusFiles() {
  std::string d = CorpusDir();
  return d.empty() ? std::vector<std::string>{} : HloFilesIn(d);
}

std::vector<std::string> PassPairFiles() {
  std::string d = CorpusDir();
  return d.empty() ? std::vector<std::string>{} : HloFilesIn(fs::path(d) / "pass_pairs");
}

bool InCi() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string HloxBinary() {
  const char* env = std::getenv("HLOX_BIN");
  return env ? env : "build/bin/hlox";
}

CliRun RunHlox(const std::string& args, bool with_stderr, int timeout_s) {
  std::string cmd = (timeout_s > 0 ? "timeout " + std::to_string(timeout_s) + " " : std::string()) +
                    HloxBinary() + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace hlox::testing
