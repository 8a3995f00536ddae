// End-to-end evaluation: a deliberately wrong rewrite (test-only pass: add -> subtract) is
// WRONG_OUTPUT at the right leaf and index, a benign reassociation is OK, NaN positions are
// checked, bad decisions and failing kernels get their statuses, and the record is complete.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

#include "cost/evaluate.h"
#include "cost/paired.h"
#include "cost/result_json.h"
#include "cost/reference_cache.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "nlohmann/json.hpp"
#include "passes/module_util.h"
#include "runtime/core/executor.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

// Test-only pass: every site is an instruction of opcode `from` in the entry; choice 1
// replaces it by the same instruction with opcode `to`.
class SwapOpcodePass : public Pass {
 public:
  SwapOpcodePass(Opcode from, Opcode to) : from_(from), to_(to) {}
  std::string_view name() const override { return "swap-opcode"; }
  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& m) override {
    std::vector<DecisionSite> sites;
    for (const Instruction* i : m.entry()->PostOrder()) {
      if (i->opcode() != from_) continue;
      DecisionSite s;
      s.id = i->name();
      s.rule = "swap";
      s.instructions = {i->name()};
      s.computation = m.entry()->name();
      s.choices = {"keep", "swap"};
      sites.push_back(s);
    }
    return sites;
  }
  absl::StatusOr<ApplyReport> Apply(Module& m, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& d) override {
    ApplyReport rep;
    for (size_t k = 0; k < sites.size(); ++k) {
      if (d[k] != 1) continue;
      Instruction* old = nullptr;
      for (const auto& i : m.entry()->instructions()) {
        if (i->name() == sites[k].id) old = i.get();
      }
      if (old == nullptr) continue;
      Instruction* fresh = m.entry()->AddInstruction(
          Instruction::Create(to_, old->shape(), old->operands()));
      m.entry()->ReplaceInstruction(old, fresh);
      ++rep.applied;
    }
    m.entry()->SortToPostOrder();
    return rep;
  }

 private:
  Opcode from_, to_;
};

EvalOptions FastOptions() {
  EvalOptions o;
  o.seed = 7;
  o.protocol.warmups = 1;
  o.protocol.min_samples = 3;
  o.protocol.max_samples = 5;
  o.protocol.time_cap_seconds = 0.05;
  o.protocol.min_sample_seconds = 1e-4;
  return o;
}

constexpr char kAddModule[] = R"(HloModule addmod
ENTRY e {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  n = f32[4,8] negate(p0)
  a = f32[4,8] add(p0, p1)
  ROOT t = (f32[4,8], f32[4,8]) tuple(n, a)
})";

TEST(EvaluateTest, NonePipelineIsOkAndRecordIsComplete) {
  auto m = Parse(kAddModule);
  ASSERT_TRUE(m);
  ResultRecord r = EvaluateCandidate(*m, "none", {}, FastOptions());
  ASSERT_EQ(r.status, JobStatus::kOk) << r.message;
  EXPECT_GT(r.cost.median, 0);
  EXPECT_GE(r.cost.samples.size(), 3u);
  EXPECT_LE(r.cost.ci_low, r.cost.median);
  EXPECT_EQ(r.module_hash.size(), 32u);
  EXPECT_FALSE(r.provenance.host.empty());
  EXPECT_FALSE(r.provenance.cpu.empty());
  EXPECT_GT(r.provenance.cores, 0);
  EXPECT_EQ(r.provenance.seed, 7u);
  EXPECT_NE(r.provenance.protocol.find("min_samples=3"), std::string::npos);
  EXPECT_EQ(r.analytical.op_count, 2);  // negate, add (tuple not counted)
  EXPECT_EQ(r.analytical.op_count, OpCount(*m));
  EXPECT_DOUBLE_EQ(r.analytical.flops, 64);
  EXPECT_FALSE(r.mismatch.has_value());
}

TEST(EvaluateTest, WrongRewriteIsWrongOutputAtTheRightPlace) {
  auto m = Parse(kAddModule);
  ASSERT_TRUE(m);
  auto cand = m->Clone();
  SwapOpcodePass pass(Opcode::kAdd, Opcode::kSubtract);
  ASSERT_TRUE(pass.Run(*cand).ok());  // default policy keeps everything
  auto sites = pass.FindSites(*cand);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 1u);
  ASSERT_TRUE(pass.Apply(*cand, *sites, {1}).ok());
  EvalOptions o = FastOptions();
  o.measure = false;
  ResultRecord r = EvaluateOptimized(*m, *cand, o);
  ASSERT_EQ(r.status, JobStatus::kWrongOutput) << r.message;
  ASSERT_TRUE(r.mismatch.has_value());
  EXPECT_EQ(r.mismatch->output, 1);  // the add's leaf, not negate's
  // Independent expectation from the seeded inputs: first i where p0-p1 is not within f32
  // tolerance of p0+p1.
  auto in = rt::MakeSeededInputs(*m, o.seed);
  const float* p0 = in[0].array->as<float>();
  const float* p1 = in[1].array->as<float>();
  int64_t first = -1;
  for (int64_t i = 0; i < 32 && first < 0; ++i) {
    double e = static_cast<double>(p0[i] + p1[i]), a = static_cast<double>(p0[i] - p1[i]);
    if (std::fabs(a - e) > 1e-5 + 1e-4 * std::fabs(e)) first = i;
  }
  ASSERT_GE(first, 0);
  EXPECT_EQ(r.mismatch->index, first);
  EXPECT_FLOAT_EQ(static_cast<float>(r.mismatch->expected), p0[first] + p1[first]);
  EXPECT_FLOAT_EQ(static_cast<float>(r.mismatch->actual), p0[first] - p1[first]);
  EXPECT_EQ(r.cost.samples.size(), 0u);  // never measured, never rewarded
}

TEST(EvaluateTest, BenignReassociationIsOk) {
  auto orig = Parse(R"(HloModule assoc
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  c = f32[64] parameter(2)
  ab = f32[64] add(a, b)
  ROOT r = f32[64] add(ab, c)
})");
  auto cand = Parse(R"(HloModule assoc
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  c = f32[64] parameter(2)
  bc = f32[64] add(b, c)
  ROOT r = f32[64] add(a, bc)
})");
  ASSERT_TRUE(orig && cand);
  EvalOptions o = FastOptions();
  ResultRecord r = EvaluateOptimized(*orig, *cand, o);
  EXPECT_EQ(r.status, JobStatus::kOk) << r.message;
  EXPECT_GT(r.cost.median, 0);
}

TEST(EvaluateTest, NanPositionMismatchIsCaught) {
  // |x| computed as sqrt(x*x) versus a "rewrite" to sqrt(x): NaN where x < 0.
  auto orig = Parse(R"(HloModule nan
ENTRY e {
  x = f32[32] parameter(0)
  xx = f32[32] multiply(x, x)
  ROOT r = f32[32] sqrt(xx)
})");
  auto cand = Parse(R"(HloModule nan
ENTRY e {
  x = f32[32] parameter(0)
  ROOT r = f32[32] sqrt(x)
})");
  ASSERT_TRUE(orig && cand);
  EvalOptions o = FastOptions();
  o.measure = false;
  ResultRecord r = EvaluateOptimized(*orig, *cand, o);
  ASSERT_EQ(r.status, JobStatus::kWrongOutput) << r.message;
  auto in = rt::MakeSeededInputs(*orig, o.seed);
  const float* x = in[0].array->as<float>();
  int64_t first = -1;
  for (int64_t i = 0; i < 32 && first < 0; ++i) {
    if (x[i] < 0) first = i;
  }
  ASSERT_GE(first, 0);
  EXPECT_EQ(r.mismatch->index, first);
  EXPECT_TRUE(std::isnan(r.mismatch->actual));
  EXPECT_FALSE(std::isnan(r.mismatch->expected));
}

TEST(EvaluateTest, BadDecisionsAreInvalidDecisions) {
  auto m = Parse(kAddModule);
  ASSERT_TRUE(m);
  PipelineDecisions d{{"nosuchpass#0", {1, 1, 1}}};
  ResultRecord r = EvaluateCandidate(*m, "none", d, FastOptions());
  EXPECT_EQ(r.status, JobStatus::kInvalidDecisions) << r.message;
  EXPECT_FALSE(r.message.empty());
}

TEST(EvaluateTest, FailingKernelIsRunError) {
  auto m = Parse(R"(HloModule cc
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] custom-call(x), custom_call_target="hlox_no_such_target"
})");
  ASSERT_TRUE(m);
  ResultRecord r = EvaluateCandidate(*m, "none", {}, FastOptions());
  EXPECT_EQ(r.status, JobStatus::kRunError);
  EXPECT_NE(r.message.find("hlox_no_such_target"), std::string::npos) << r.message;
}

TEST(EvaluateTest, ReferenceIsComputedOncePerModuleAndSeed) {
  auto m = Parse(R"(HloModule once
ENTRY e {
  x = f32[8] parameter(0)
  ROOT y = f32[8] exponential(x)
})");
  ASSERT_TRUE(m);
  EvalOptions o = FastOptions();
  o.measure = false;
  int64_t misses = GlobalReferenceCache().misses();
  EXPECT_EQ(EvaluateCandidate(*m, "none", {}, o).status, JobStatus::kOk);
  EXPECT_EQ(EvaluateCandidate(*m, "none", {}, o).status, JobStatus::kOk);
  EXPECT_EQ(GlobalReferenceCache().misses(), misses + 1);
  o.seed = 8;
  EXPECT_EQ(EvaluateCandidate(*m, "none", {}, o).status, JobStatus::kOk);
  EXPECT_EQ(GlobalReferenceCache().misses(), misses + 2);
}

}  // namespace
}  // namespace hlox

namespace hlox {
namespace {

TEST(EvaluatePairedTest, SameModuleRatioIntervalContainsOne) {
  auto m = Parse(R"(HloModule same
ENTRY e {
  x = f32[256] parameter(0)
  ROOT y = f32[256] exponential(x)
})");
  ASSERT_TRUE(m);
  EvalOptions o = FastOptions();
  o.protocol.min_samples = 9;
  o.protocol.max_samples = 9;
  o.protocol.target_rel_error = 0;
  o.protocol.time_cap_seconds = 10;
  o.protocol.interference_threshold = 0;  // count rounds exactly (the guard is tested apart)
  auto r = MeasurePairedModules(*m, *m, o);
  ASSERT_TRUE(r.ok()) << r.status();
  // Nine rounds asked, but every one of the 8 instance pairs (the default) gets its ABBA block.
  EXPECT_EQ(r->instance_count, 8);
  EXPECT_EQ(r->ratios.size(), 16u);
  ASSERT_EQ(r->instances.size(), r->ratios.size());
  for (int k = 0; k < 8; ++k) EXPECT_EQ(std::count(r->instances.begin(), r->instances.end(), k), 2) << k;
  EXPECT_LE(r->ci_low, r->ratio);
  EXPECT_GE(r->ci_high, r->ratio);
  EXPECT_GT(r->ratio, 0);
}

TEST(EvaluateCorpusTest, DefaultPipelineIsOkOnSmallModules) {
  HLOX_REQUIRE_CORPUS();
  // The smallest corpus modules by file size keep this fast.
  std::vector<std::pair<uintmax_t, std::string>> files;
  for (const std::string& f : testing::CorpusFiles()) {
    files.push_back({std::filesystem::file_size(f), f});
  }
  std::sort(files.begin(), files.end());
  EvalOptions o = FastOptions();
  o.measure = false;
  int checked = 0;
  for (size_t k = 0; k < files.size() && checked < 4; ++k) {
    auto m = ParseModuleFile(files[k].second);
    if (!m.ok()) continue;
    ResultRecord r = EvaluateCandidate(**m, "default", {}, o);
    if (r.status == JobStatus::kRunError) continue;  // runtime gaps are the runtime's tests' job
    EXPECT_EQ(r.status, JobStatus::kOk) << files[k].second << ": " << r.message;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace hlox

namespace hlox {
namespace {

// Runs a shell command, returning stdout and the exit status.
std::pair<std::string, int> Shell(const std::string& cmd) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return {"", -1};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  int st = pclose(f);
  return {out, WIFEXITED(st) ? WEXITSTATUS(st) : -1};
}

TEST(EvalCliTest, JsonRecordParsesAndDecisionErrorsExitThree) {
  std::string bin = testing::HloxBinary();
  if (bin.empty() || !std::filesystem::exists(bin)) GTEST_SKIP() << "hlox binary not built";
  std::string dir = std::filesystem::temp_directory_path() / ("hlox_eval_cli." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string hlo = dir + "/m.hlo";
  {
    std::ofstream(hlo) << kAddModule;
  }
  auto [out, rc] = Shell(bin + " eval " + hlo + " --pipeline none --json --time-cap 0.05 --seed 3");
  EXPECT_EQ(rc, 0) << out;
  auto rec = ResultFromJsonString(out);
  ASSERT_TRUE(rec.ok()) << rec.status() << "\n" << out;
  EXPECT_EQ(rec->status, JobStatus::kOk);
  EXPECT_GT(rec->cost.median, 0);
  EXPECT_FALSE(rec->cost.samples.empty());
  EXPECT_FALSE(rec->provenance.host.empty());
  EXPECT_EQ(rec->provenance.seed, 3u);
  // --paired-against: the candidate measured interleaved with another pipeline's module.
  auto [out3, rc3] = Shell(bin + " eval " + hlo + " --pipeline default --paired-against none --json --no-samples" +
                           " --time-cap 0.05");
  EXPECT_EQ(rc3, 0) << out3;
  nlohmann::json pj = nlohmann::json::parse(out3, nullptr, false);
  ASSERT_TRUE(pj.is_object() && pj.contains("paired")) << out3;
  EXPECT_EQ(pj["paired"]["baseline_pipeline"], "none");
  EXPECT_GE(pj["paired"]["rounds"].get<int>(), 3);
  EXPECT_TRUE(pj["paired"]["outcome"].is_string());
  EXPECT_GE(pj["paired"]["delta"].get<double>(), 0.0);
  double sp = pj["paired"]["speedup"].get<double>();
  EXPECT_GT(sp, 0);
  EXPECT_LE(pj["paired"]["ci_low"].get<double>(), sp);
  EXPECT_GE(pj["paired"]["ci_high"].get<double>(), sp);
  auto [out4, rc4] = Shell(bin + " eval " + hlo + " --paired-against nosuchpipeline --time-cap 0.05");
  EXPECT_EQ(rc4, 1) << out4;
  std::string dec = dir + "/d.json";
  {
    std::ofstream(dec) << R"({"pipeline": "none", "decisions": {"nosuchpass#0": [1]}})";
  }
  auto [out2, rc2] = Shell(bin + " eval " + hlo + " --decisions " + dec + " --json --no-measure");
  EXPECT_EQ(rc2, 3) << out2;
  auto rec2 = ResultFromJsonString(out2);
  ASSERT_TRUE(rec2.ok()) << out2;
  EXPECT_EQ(rec2->status, JobStatus::kInvalidDecisions);
  std::filesystem::remove_all(dir);
}

// Without --in-process (and without options only this process can honour) eval sends the job to
// a worker of an embedded fleet: the record is a worker's, and a candidate that kills its
// evaluation ends as a record instead of killing the command.
TEST(EvalCliTest, EmbeddedFleetEvaluatesAndSurvivesACrashingCandidate) {
  std::string bin = testing::HloxBinary();
  if (bin.empty() || !std::filesystem::exists(bin)) GTEST_SKIP() << "hlox binary not built";
  std::string dir = std::filesystem::temp_directory_path() / ("hlox_eval_fleet." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string hlo = dir + "/m.hlo", crash = dir + "/crash.hlo";
  std::ofstream(hlo) << kAddModule;
  std::ofstream(crash) << "HloModule cc\n\nENTRY main {\n  a = f32[4] parameter(0)\n"
                          "  ROOT c = f32[4] custom-call(a), custom_call_target=\"__hlox$abort\"\n}\n";
  auto [fleet_out, fleet_rc] = Shell(bin + " eval " + hlo + " --json --no-samples");
  auto [local_out, local_rc] = Shell(bin + " eval " + hlo + " --json --no-samples --in-process");
  ASSERT_EQ(fleet_rc, 0) << fleet_out;
  ASSERT_EQ(local_rc, 0) << local_out;
  auto fleet = ResultFromJsonString(fleet_out), local = ResultFromJsonString(local_out);
  ASSERT_TRUE(fleet.ok() && local.ok()) << fleet_out << local_out;
  EXPECT_EQ(fleet->status, JobStatus::kOk);
  EXPECT_GT(fleet->cost.median, 0);
  EXPECT_EQ(fleet->module_hash, local->module_hash);
  EXPECT_EQ(fleet->instruction_count, local->instruction_count);
  // The same candidate in this process dies with it; through the fleet it is a failed record.
  auto [crash_out, crash_rc] = Shell("HLOX_TEST_TARGETS=1 " + bin + " eval " + crash + " --pipeline none --json");
  EXPECT_EQ(crash_rc, 1) << crash_out;
  auto crashed = ResultFromJsonString(crash_out);
  ASSERT_TRUE(crashed.ok()) << crash_out;
  EXPECT_NE(crashed->status, JobStatus::kOk);
  auto [both_out, both_rc] = Shell(bin + " eval " + hlo + " --broker tcp://127.0.0.1:1 --seed 2 2>&1");
  EXPECT_EQ(both_rc, 2) << both_out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hlox
