// Runs a sample of small corpus modules with 1 and 2 threads on seeded inputs and requires
// identical output bits (with HLOX_FULL=1: every corpus module, also counting non-finite float
// outputs; HLOX_FULL_FILTER=a,b limits that to names containing a or b); and runs `hlox run --inputs/--save-outputs` on a tiny module whose
// result NumPy (Debian's python3) recomputes independently.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"
#include "runtime/core/finite.h"
#include "tests/test_util.h"

namespace hlox::rt {
namespace {

// Small modules that cover reduce, dot, while, gather-free elementwise chains, rng and
// argmax; the big ones are timed in bench/runtime instead.
const char* kSample[] = {
    "hloenv_deeperwin_heaviside.hlo", "hloenv_jaxrl_diag.hlo",         "hloenv_jaxlie_round.hlo",
    "hloenv_muzero_var.hlo",          "alpa_argmax_reduce_pre.hlo",    "hloenv_toy_nn_loss.hlo",
    "hloenv_neural_tangents_kernel.hlo", "hloenv_mlp_regression_train_step.hlo", "gh_linear_adam.hlo",
};

std::vector<BufferPtr> RunLeaves(const Module& m, int threads) {
  ExecOptions o;
  o.threads = threads;
  o.seed = 3;
  auto ex = Executor::Create(m, o);
  EXPECT_TRUE(ex.ok()) << ex.status().message();
  if (!ex.ok()) return {};
  auto out = (*ex)->Run(MakeSeededInputs(m, 3));
  EXPECT_TRUE(out.ok()) << m.name() << ": " << out.status().message();
  std::vector<BufferPtr> leaves;
  if (out.ok()) out->Flatten(&leaves);
  return leaves;
}

TEST(CorpusRuntimeTest, SampleIsDeterministicAcrossThreadCounts) {
  HLOX_REQUIRE_CORPUS();
  for (const char* name : kSample) {
    std::string path = hlox::testing::CorpusDir() + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    auto m = ParseModuleFile(path);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<BufferPtr> a = RunLeaves(**m, 1), b = RunLeaves(**m, 2);
    ASSERT_FALSE(a.empty()) << name;
    ASSERT_EQ(a.size(), b.size()) << name;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i]->byte_size(), b[i]->byte_size());
      EXPECT_EQ(std::memcmp(a[i]->data(), b[i]->data(), a[i]->byte_size()), 0) << name << " output " << i;
    }
  }
}


bool MatchesFilter(const std::string& name) {
  const char* f = std::getenv("HLOX_FULL_FILTER");
  if (f == nullptr || *f == '\0') return true;
  std::string list = f;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string part = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty() && name.find(part) != std::string::npos) return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

// Opt-in (HLOX_FULL=1): every corpus module runs to completion with 1 and 2 threads and gives
// the same output bits; prints per module the time of each run and the non-finite float
// elements among its outputs.
TEST(CorpusRuntimeTest, FullCorpusIsDeterministicAcrossThreadCounts) {
  const char* full = std::getenv("HLOX_FULL");
  if (full == nullptr || std::string(full) != "1") GTEST_SKIP() << "set HLOX_FULL=1 to run every corpus module";
  HLOX_REQUIRE_CORPUS();
  double total = 0;
  int modules = 0;
  for (const std::string& path : hlox::testing::CorpusFiles()) {
    const std::string name = std::filesystem::path(path).filename().string();
    if (!MatchesFilter(name)) continue;
    SCOPED_TRACE(name);
    auto m = ParseModuleFile(path);
    ASSERT_TRUE(m.ok()) << m.status().message();
    double secs[2];
    std::vector<BufferPtr> leaves[2];
    for (int t = 0; t < 2; ++t) {
      auto t0 = std::chrono::steady_clock::now();
      leaves[t] = RunLeaves(**m, t + 1);
      secs[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    total += secs[0] + secs[1];
    ++modules;
    ASSERT_FALSE(leaves[0].empty()) << name;
    ASSERT_EQ(leaves[0].size(), leaves[1].size()) << name;
    int64_t bad = 0, elems = 0;
    for (size_t i = 0; i < leaves[0].size(); ++i) {
      const Buffer& a = *leaves[0][i];
      const Buffer& b = *leaves[1][i];
      ASSERT_EQ(a.byte_size(), b.byte_size()) << name << " output " << i;
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.byte_size()), 0) << name << " output " << i;
      const NonFinite nf = CountNonFinite(a);
      bad += nf.nan + nf.inf;
      elems += a.element_count();
    }
    std::printf("[corpus] %-42s 1t %8.3f s  2t %8.3f s  leaves %3zu  non-finite %lld/%lld\n",
                name.c_str(), secs[0], secs[1], leaves[0].size(), static_cast<long long>(bad),
                static_cast<long long>(elems));
    std::fflush(stdout);
  }
  std::printf("[corpus] %d modules, %.1f s in all\n", modules, total);
}

// RunStats::profile records one time per executed entry kernel, in execution order.
TEST(ExecutorProfileTest, RecordsEveryEntryKernel) {
  auto m = ParseModule(R"(HloModule p
ENTRY e {
  a = f32[64,64] parameter(0)
  c = f32[] constant(2)
  b = f32[64,64] broadcast(c), dimensions={}
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[64,64] tanh(d)
}
)");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto ex = Executor::Create(**m, ExecOptions());
  ASSERT_TRUE(ex.ok());
  RunStats stats;
  stats.profile = true;
  ASSERT_TRUE((*ex)->Run(MakeSeededInputs(**m, 1), &stats).ok());
  ASSERT_EQ(stats.profile_times.size(), 3u);
  EXPECT_EQ(stats.profile_times[0].instr->name(), "b");
  EXPECT_EQ(stats.profile_times[1].instr->name(), "d");
  EXPECT_EQ(stats.profile_times[2].instr->name(), "t");
  for (const InstrTime& t : stats.profile_times) EXPECT_GE(t.seconds, 0.0);
  stats.profile = false;
  ASSERT_TRUE((*ex)->Run(MakeSeededInputs(**m, 1), &stats).ok());
  EXPECT_TRUE(stats.profile_times.empty());
}

TEST(RunCliTest, NpyInputsAndOutputsMatchNumpy) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hlox_run_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir / "in");
  {
    std::ofstream f(dir / "m.hlo");
    f << R"(HloModule m
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[4,2] parameter(1)
  c = s32[2] parameter(2)
  d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[3,2] tanh(d)
  cf = f32[2] convert(c)
  bc = f32[3,2] broadcast(cf), dimensions={1}
  s = f32[3,2] add(t, bc)
  m = s32[2] multiply(c, c)
  ROOT out = (f32[3,2], s32[2]) tuple(s, m)
}
)";
  }
  std::string py = R"(
import sys, subprocess, numpy as np
d = sys.argv[1]; hlox = sys.argv[2]
rng = np.random.default_rng(0)
a = rng.standard_normal((3, 4)).astype(np.float32)
b = rng.standard_normal((4, 2)).astype(np.float32)
c = np.array([3, -2], dtype=np.int32)
np.save(d + '/in/0.npy', a); np.save(d + '/in/1.npy', b); np.save(d + '/in/2.npy', c)
r = subprocess.run([hlox, 'run', d + '/m.hlo', '--inputs', d + '/in', '--save-outputs', d + '/out', '--json'],
                   capture_output=True, text=True)
if r.returncode != 0:
    print('hlox run failed:', r.stderr); sys.exit(2)
import json
j = json.loads(r.stdout.strip().splitlines()[-1])
assert len(j['outputs']) == 2 and j['outputs'][0]['dtype'] == 'f32', j
s = np.load(d + '/out/0.npy'); m = np.load(d + '/out/1.npy')
want = np.tanh(a.astype(np.float64) @ b.astype(np.float64)) + c.astype(np.float64)[None, :]
if not np.allclose(s, want, rtol=1e-5, atol=1e-5): print('mismatch', s, want); sys.exit(3)
if m.dtype != np.int32 or list(m) != [9, 4]: print('bad ints', m); sys.exit(4)
bad = subprocess.run([hlox, 'run', d + '/m.hlo', '--inputs', d + '/missing'], capture_output=True, text=True)
if bad.returncode != 1 or 'missing' not in bad.stderr: print('bad error path', bad.returncode, bad.stderr); sys.exit(5)
print('ok')
)";
  {
    std::ofstream f(dir / "check.py");
    f << py;
  }
  std::string bin = hlox::testing::HloxBinary();
  if (!fs::exists(bin)) GTEST_SKIP() << "hlox binary not built: " << bin;
  std::string cmd = "/usr/bin/python3 " + (dir / "check.py").string() + " " + dir.string() + " " + bin;
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlox::rt
