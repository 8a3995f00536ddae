// Fusion on real modules. (1) Seeded random decision vectors for every fusion pass (and their
// default policies) on a sample of small corpus modules give modules that verify and whose
// outputs equal the unfused module's. (2) Every fusion of XLA's post-optimization modules that
// the block loop compiles gives the same values as running its fused computation unfused
// through the executor.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "runtime/core/executor.h"
#include "runtime/fused/program.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

using testing::CompareValues;
using testing::RunSeeded;

constexpr int64_t kMaxFileBytes = 16000;  // keeps the test set fast on 2 cores
constexpr size_t kMaxModules = 10;

// The sampled modules; HLOX_FUSION_ALL=1 takes every corpus module and HLOX_FUSION_FILE=F
// just F (slow; for manual sweeps).
std::vector<std::string> SmallCorpus() {
  if (const char* one = std::getenv("HLOX_FUSION_FILE")) return {one};
  const bool all = std::getenv("HLOX_FUSION_ALL") != nullptr;
  std::vector<std::string> out;
  for (const std::string& f : hlox::testing::CorpusFiles()) {
    if (all || (std::filesystem::file_size(f) <= kMaxFileBytes && out.size() < kMaxModules)) {
      out.push_back(f);
    }
  }
  return out;
}

std::vector<std::unique_ptr<Pass>> FusionPasses() {
  std::vector<std::unique_ptr<Pass>> p;
  p.push_back(CreateInstructionFusion());
  p.push_back(CreateSiblingFusion());
  p.push_back(CreateFusionMerger());
  p.push_back(CreateCodegenTuning());
  return p;
}

TEST(FusionCorpus, RandomDecisionsKeepOutputs) {
  HLOX_REQUIRE_CORPUS();
  int checked = 0;
  for (const std::string& file : SmallCorpus()) {
    SCOPED_TRACE(file);
    auto parsed = ParseModuleFile(file);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    if (std::getenv("HLOX_FUSION_ALL")) std::cerr << "module " << file << "\n";
    auto reference = RunSeeded(**parsed, 11);
    if (!reference.ok()) {  // the unfused module itself does not run yet
      std::cout << "skip " << file << ": " << reference.status().message() << "\n";
      continue;
    }
    for (int trial = 0; trial < 3; ++trial) {
      std::unique_ptr<Module> m = (*parsed)->Clone();
      std::mt19937 rng(1234 + trial);
      int64_t applied = 0;
      for (auto& pass : FusionPasses()) {
        auto sites = pass->FindSites(*m);
        ASSERT_TRUE(sites.ok()) << sites.status();
        DecisionVector d;
        for (const auto& s : *sites) {
          d.push_back(trial == 0 ? s.default_choice
                                 : static_cast<int32_t>(rng() % s.choices.size()));
        }
        auto r = pass->Apply(*m, *sites, d);
        ASSERT_TRUE(r.ok()) << pass->name() << ": " << r.status();
        applied += r->applied;
        ASSERT_TRUE(VerifyModule(*m).ok()) << pass->name() << ": " << VerifyModule(*m);
      }
      std::string printed = PrintModule(*m);
      auto reparsed = ParseModule(printed);
      ASSERT_TRUE(reparsed.ok()) << reparsed.status();
      if (std::getenv("HLOX_FUSION_ALL")) std::cerr << "  trial " << trial << "\n";
      auto out = RunSeeded(*m, 11);
      ASSERT_TRUE(out.ok()) << out.status() << "\n" << printed;
      EXPECT_EQ(CompareValues(*reference, *out, 10.0), "") << "trial " << trial << "\n" << printed;
      if (applied > 0) ++checked;
    }
  }
  std::cout << checked << " rewritten modules matched their reference\n";
  EXPECT_GT(checked, 0);
}

TEST(FusionCorpus, XlaFusionsMatchUnfusedExecution) {
  HLOX_REQUIRE_CORPUS();
  int compared = 0, unsupported = 0;
  for (const std::string& file : hlox::testing::CorpusFiles()) {
    if (file.find("_post.hlo") == std::string::npos) continue;
    SCOPED_TRACE(file);
    auto m = ParseModuleFile(file);
    ASSERT_TRUE(m.ok()) << m.status();
    auto exec = rt::Executor::Create(**m, rt::ExecOptions{});
    ASSERT_TRUE(exec.ok()) << exec.status();
    for (const auto& comp : (*m)->computations()) {
      for (const auto& instr : comp->instructions()) {
        if (instr->opcode() != Opcode::kFusion) continue;
        const Computation& body = *instr->called_computations()[0];
        auto prog = rt::FusedProgram::Compile(body, 0);
        if (!prog.ok()) {
          std::cout << "not compiled: " << prog.status().message() << "\n";
          ++unsupported;
          continue;
        }
        std::vector<rt::Value> args;
        for (int64_t k = 0; k < instr->operand_count(); ++k) {
          args.push_back(rt::MakeSeededValue(instr->operand(k)->shape(), 100 + k));
        }
        std::vector<const rt::Value*> ptrs;
        for (const auto& a : args) ptrs.push_back(&a);
        auto expect = (*exec)->RunComputation(body, ptrs);
        if (!expect.ok()) continue;  // the unfused kernels do not cover this body yet
        auto got = (*prog)->Run(ptrs, nullptr, rt::FusedRunOptions{});
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_EQ(CompareValues(*expect, *got), "") << instr->name();
        ++compared;
      }
    }
  }
  std::cout << "compared " << compared << " XLA fusions, " << unsupported << " not compilable\n";
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace hlox
