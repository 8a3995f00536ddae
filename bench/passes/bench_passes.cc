// bench_passes [--corpus DIR] [--filter SUBSTR] [--skip A,B] [--max-bytes N] [--threads T] [--seconds S]
//              [--min-samples N]
// Per corpus module: instruction count, op count and median run time (hlox runtime, seeded
// inputs) for the none, default, all-fuse and no-fuse pipelines, with the speedup of each over
// `none` measured in the same run. Then, for every alpa_*_pre/_post pair, our default pipeline
// on the pre module against XLA's post module, both run by hlox's runtime. Markdown output.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "ir/parser.h"
#include "passes/module_util.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"

namespace hlox {
namespace {

struct Options {
  std::string corpus = HLOX_SOURCE_DIR "/../shared/hlo";
  std::string filter;
  std::vector<std::string> skip;   // modules whose name contains one of these are left out
  uint64_t max_bytes = 64 * 1024;  // skip larger files (use a big value for all)
  int threads = 1;
  double seconds = 0.3;            // measuring time per (module, pipeline)
  int min_samples = 3;             // timed runs at least (after one untimed warm-up run)
};

struct Measure {
  int64_t instructions = 0, ops = 0;
  double median_ms = -1;  // -1: could not run
  std::string error;
};

Measure Time(const Module& m, const Options& o) {
  Measure r;
  r.instructions = m.InstructionCount();
  r.ops = OpCount(m);
  rt::ExecOptions eo;
  eo.threads = o.threads;
  auto exec = rt::Executor::Create(m, eo);
  if (!exec.ok()) {
    r.error = std::string(exec.status().message()).substr(0, 60);
    return r;
  }
  std::vector<rt::Value> inputs = rt::MakeSeededInputs(m, 1);
  if (auto w = (*exec)->Run(inputs); !w.ok()) {
    r.error = std::string(w.status().message()).substr(0, 60);
    return r;
  }
  std::vector<double> samples;
  auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(samples.size()) < o.min_samples ||
         (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < o.seconds &&
          samples.size() < 200)) {
    auto t0 = std::chrono::steady_clock::now();
    auto v = (*exec)->Run(inputs);
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (!v.ok()) break;
  }
  std::sort(samples.begin(), samples.end());
  r.median_ms = samples[samples.size() / 2];
  return r;
}

std::string Ms(const Measure& m) {
  if (m.median_ms < 0) return "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", m.median_ms);
  return b;
}

std::string Ratio(const Measure& base, const Measure& m) {
  if (base.median_ms <= 0 || m.median_ms <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", base.median_ms / m.median_ms);
  return b;
}

bool Skipped(const Options& o, const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  return std::any_of(o.skip.begin(), o.skip.end(), [&](const std::string& s) { return name.find(s) != std::string::npos; });
}

Measure RunAndTime(const Module& m, const std::string& pipeline, const Options& o) {
  auto out = RunPipeline(m, pipeline, {});
  if (!out.ok()) {
    Measure r;
    r.error = std::string(out.status().message()).substr(0, 60);
    return r;
  }
  return Time(**out, o);
}

int Main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--corpus") o.corpus = v;
    else if (a == "--filter") o.filter = v;
    else if (a == "--skip") o.skip = absl::StrSplit(v, ',', absl::SkipEmpty());
    else if (a == "--max-bytes") o.max_bytes = std::stoull(v);
    else if (a == "--threads") o.threads = std::stoi(v);
    else if (a == "--seconds") o.seconds = std::stod(v);
    else if (a == "--min-samples") o.min_samples = std::max(1, std::stoi(v));
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(o.corpus)) {
    std::string p = e.path().string();
    if (e.path().extension() != ".hlo" || p.find(o.filter) == std::string::npos) continue;
    if (std::filesystem::file_size(e.path()) > o.max_bytes || Skipped(o, p)) continue;
    files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  const std::vector<std::string> pipelines = {"none", "default", "all-fuse", "no-fuse"};
  std::printf("## Pipelines per corpus module (threads=%d, median ms; speedup vs none)\n\n", o.threads);
  std::printf("| module | instr none/default/all-fuse/no-fuse | ops none/default/all-fuse/no-fuse | ms none | ms default | ms all-fuse | ms no-fuse | default | all-fuse | no-fuse |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& f : files) {
    auto m = ParseModuleFile(f);
    std::string name = std::filesystem::path(f).stem().string();
    if (!m.ok()) {
      std::printf("| %s | parse error | | | | | | | | |\n", name.c_str());
      continue;
    }
    std::vector<Measure> r;
    for (const std::string& p : pipelines) r.push_back(RunAndTime(**m, p, o));
    std::printf("| %s | %lld/%lld/%lld/%lld | %lld/%lld/%lld/%lld | %s | %s | %s | %s | %s | %s | %s |\n", name.c_str(),
                (long long)r[0].instructions, (long long)r[1].instructions, (long long)r[2].instructions,
                (long long)r[3].instructions, (long long)r[0].ops, (long long)r[1].ops, (long long)r[2].ops,
                (long long)r[3].ops, Ms(r[0]).c_str(), Ms(r[1]).c_str(), Ms(r[2]).c_str(), Ms(r[3]).c_str(),
                Ratio(r[0], r[1]).c_str(), Ratio(r[0], r[2]).c_str(), Ratio(r[0], r[3]).c_str());
    for (size_t k = 0; k < r.size(); ++k) {
      if (!r[k].error.empty()) std::fprintf(stderr, "%s %s: %s\n", name.c_str(), pipelines[k].c_str(), r[k].error.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("\n## XLA pre/post pairs: hlox default(pre) vs XLA post, both on hlox's runtime\n\n");
  std::printf("| pair | ops pre | ops hlox default | ops XLA post | ms pre | ms hlox default | ms XLA post | hlox vs XLA |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto& e : std::filesystem::directory_iterator(o.corpus)) {
    std::string stem = e.path().stem().string();
    if (stem.rfind("alpa_", 0) != 0 || stem.size() < 4 || stem.substr(stem.size() - 4) != "_pre") continue;
    std::string base = stem.substr(0, stem.size() - 4);
    if (base.find(o.filter) == std::string::npos && stem.find(o.filter) == std::string::npos) continue;
    if (Skipped(o, e.path().string())) continue;
    auto pre = ParseModuleFile(e.path().string());
    auto post = ParseModuleFile((e.path().parent_path() / (base + "_post.hlo")).string());
    if (!pre.ok() || !post.ok()) continue;
    Measure mp = RunAndTime(**pre, "none", o), ours = RunAndTime(**pre, "default", o),
            xla = RunAndTime(**post, "none", o);
    std::printf("| %s | %lld | %lld | %lld | %s | %s | %s | %s |\n", base.c_str(), (long long)mp.ops,
                (long long)ours.ops, (long long)xla.ops, Ms(mp).c_str(), Ms(ours).c_str(), Ms(xla).c_str(),
                Ratio(xla, ours).c_str());
  }
  return 0;
}

}  // namespace
}  // namespace hlox

int main(int argc, char** argv) { return hlox::Main(argc, argv); }
