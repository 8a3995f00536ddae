// Instruction fusion's default policy must not duplicate computation: on every corpus module up
// to resnext50's size, running it after "no-fuse" adds no instruction of any computing opcode
// (fusion bodies included). Only trivially cheap producers (broadcast, constant, iota,
// reshape, bitcast) may be copied into several consumers. Catches producers whose users get
// fused away before them (a select with one reshape user was copied into 48 fusions of
// gh_bert_optimizer_tp1). The fusion merger's small bounded duplication is a separate policy.
#include <filesystem>
#include <map>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

// Opcodes that copying into consumers does not recompute, or that only structure the graph.
bool FreeToCopy(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kFusion:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBroadcast:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kReshape:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

// Instructions per computing opcode over all computations (fusion bodies included).
std::map<std::string, int64_t> ComputingOps(const Module& m) {
  std::map<std::string, int64_t> counts;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (!FreeToCopy(i->opcode())) ++counts[std::string(OpcodeName(i->opcode()))];
    }
  }
  return counts;
}

// exp(z) has one user, a reshape, but the reshape is copied into two broadcast fusions first:
// the default must keep exp (judged by the consumers it will have), fusing only the cheap ones.
TEST(DefaultFusion, JudgesProducersByPlannedConsumers) {
  auto m = ParseModule(R"(HloModule plan
ENTRY main {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  z = f32[1] parameter(2)
  e = f32[1] exponential(z)
  r = f32[] reshape(e)
  b1 = f32[64] broadcast(r), dimensions={}
  b2 = f32[64] broadcast(r), dimensions={}
  m1 = f32[64] multiply(x, b1)
  m2 = f32[64] multiply(y, b2)
  ROOT t = (f32[64], f32[64]) tuple(m1, m2)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto pass = CreateInstructionFusion();
  auto sites = pass->FindSites(**m);
  ASSERT_TRUE(sites.ok()) << sites.status();
  std::map<std::string, int32_t> defaults;
  for (const DecisionSite& s : *sites) defaults[s.id] = s.default_choice;
  EXPECT_EQ(defaults["fuse:b1"], 1);
  EXPECT_EQ(defaults["fuse:b2"], 1);
  EXPECT_EQ(defaults["fuse:r"], 1);  // cheap: copied into both fusions
  EXPECT_EQ(defaults["fuse:e"], 0);  // would be computed twice
  ASSERT_TRUE(pass->Run(**m).ok());
  EXPECT_EQ(ComputingOps(**m)["exponential"], 1);
}

TEST(DefaultFusion, DuplicatesNoComputationOnCorpus) {
  HLOX_REQUIRE_CORPUS();
  int checked = 0;
  for (const std::string& path : testing::CorpusFiles()) {
    if (std::filesystem::file_size(path) > 600'000) continue;  // keeps the test to seconds
    auto m = ParseModuleFile(path);
    ASSERT_TRUE(m.ok()) << path << ": " << m.status();
    auto unfused = RunPipeline(**m, "no-fuse", {});
    ASSERT_TRUE(unfused.ok()) << path << ": " << unfused.status();
    auto fused = RunPipeline(**unfused, "only:fusion", {});
    ASSERT_TRUE(fused.ok()) << path << ": " << fused.status();
    std::map<std::string, int64_t> before = ComputingOps(**unfused), after = ComputingOps(**fused);
    for (const auto& [op, n] : after) {
      EXPECT_LE(n, before[op]) << std::filesystem::path(path).stem().string() << ": default fusion copies " << op;
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

}  // namespace
}  // namespace hlox
