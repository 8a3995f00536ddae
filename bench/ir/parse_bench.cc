// Parse and verify throughput over the HLO corpus: MB/s and instructions/s for the whole
// corpus and for the largest module alone, plus printing. The baseline, measured in the same
// run, is one pass over the same bytes that only counts newlines and '=' signs (the floor any
// text parser pays), so the ratio says how much the parser costs above reading its input.
//
// Usage: ir_parse_bench [--corpus DIR] [--min-seconds S]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Input {
  std::string name;
  std::string text;
};

std::vector<Input> LoadCorpus(const std::string& dir) {
  std::vector<Input> out;
  for (const auto& sub : {fs::path(dir), fs::path(dir) / "pass_pairs"}) {
    if (!fs::is_directory(sub)) continue;
    for (const auto& e : fs::directory_iterator(sub)) {
      if (e.path().extension() != ".hlo") continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out.push_back({e.path().filename().string(), ss.str()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.name < b.name; });
  return out;
}

// Runs `fn` over the inputs repeatedly until `min_seconds` pass; returns seconds per sweep.
template <typename Fn>
double TimeSweeps(const std::vector<const Input*>& inputs, double min_seconds, Fn fn) {
  int sweeps = 0;
  auto start = Clock::now();
  double elapsed = 0;
  do {
    for (const Input* in : inputs) fn(*in);
    ++sweeps;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < min_seconds);
  return elapsed / sweeps;
}

volatile size_t g_sink = 0;

void Report(const char* label, const std::vector<const Input*>& inputs, double min_seconds) {
  size_t bytes = 0;
  int64_t instrs = 0;
  for (const Input* in : inputs) {
    bytes += in->text.size();
    auto m = hlox::ParseModule(in->text, in->name);
    if (!m.ok()) {
      std::fprintf(stderr, "%s: %s\n", in->name.c_str(), std::string(m.status().message()).c_str());
      std::exit(1);
    }
    instrs += (*m)->InstructionCount();
  }
  double scan = TimeSweeps(inputs, min_seconds, [](const Input& in) {
    size_t n = 0;
    for (char c : in.text) n += (c == '\n') + (c == '=');
    g_sink = g_sink + n;
  });
  double parse = TimeSweeps(inputs, min_seconds, [](const Input& in) {
    auto m = hlox::ParseModule(in.text, in.name);
    g_sink = g_sink + (*m)->InstructionCount();
  });
  double parse_verify = TimeSweeps(inputs, min_seconds, [](const Input& in) {
    auto m = hlox::ParseModule(in.text, in.name);
    g_sink = g_sink + hlox::VerifyModule(**m).ok();
  });
  std::vector<std::unique_ptr<hlox::Module>> modules;
  for (const Input* in : inputs) modules.push_back(std::move(*hlox::ParseModule(in->text, in->name)));
  size_t idx = 0;
  double print = TimeSweeps(inputs, min_seconds, [&](const Input&) {
    g_sink = g_sink + hlox::PrintModule(*modules[idx++ % modules.size()]).size();
  });
  double mb = bytes / 1e6;
  std::printf("%s: %zu files, %.2f MB, %lld instructions\n", label, inputs.size(), mb,
              static_cast<long long>(instrs));
  std::printf("  baseline byte scan   %9.1f MB/s\n", mb / scan);
  std::printf("  parse                %9.1f MB/s  %12.0f instructions/s  (%.1fx the byte scan's time)\n",
              mb / parse, instrs / parse, parse / scan);
  std::printf("  parse + verify       %9.1f MB/s  %12.0f instructions/s  (verify adds %.0f%%)\n",
              mb / parse_verify, instrs / parse_verify, 100.0 * (parse_verify - parse) / parse);
  std::printf("  print                %9.1f MB/s  %12.0f instructions/s\n", mb / print, instrs / print);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir;
  double min_seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--corpus" && i + 1 < argc) dir = argv[++i];
    if (a == "--min-seconds" && i + 1 < argc) min_seconds = std::atof(argv[++i]);
  }
  if (dir.empty()) {
    const char* env = std::getenv("HLOX_CORPUS");
    dir = env ? env : std::string(HLOX_SOURCE_DIR) + "/../shared/hlo";
  }
  std::vector<Input> corpus = LoadCorpus(dir);
  if (corpus.empty()) {
    std::fprintf(stderr, "no .hlo files under %s (set HLOX_CORPUS or --corpus)\n", dir.c_str());
    return 1;
  }
  std::vector<const Input*> all;
  const Input* largest = &corpus[0];
  for (const Input& in : corpus) {
    all.push_back(&in);
    if (in.text.size() > largest->text.size()) largest = &in;
  }
  Report("whole corpus", all, min_seconds);
  std::string label = "largest module (" + largest->name + ")";
  Report(label.c_str(), {largest}, min_seconds);
  return 0;
}
