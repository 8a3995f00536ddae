// The fusion passes on small hand-written HLO: sites (ids, order, defaults), the structure of
// the fused result, verification, print/parse round trip, INVALID_DECISIONS, stale sites, and
// equal outputs (executor on seeded inputs) before and after each pass.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "runtime/conv/tuning.h"
#include "runtime/core/executor.h"
#include "runtime/fused/program.h"
#include "runtime/gemm/dot_general.h"
#include "tests/fusion/fusion_test_util.h"

namespace hlox {
namespace {

using testing::CompareValues;
using testing::RunSeeded;

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<std::string> Ids(const std::vector<DecisionSite>& sites) {
  std::vector<std::string> ids;
  for (const auto& s : sites) ids.push_back(s.id);
  return ids;
}

// Applies `decisions` (or all-last-choice when empty) and checks verify, round trip and outputs.
ApplyReport ApplyAndCheck(Pass& pass, Module& m, DecisionVector decisions = {}) {
  auto before = RunSeeded(m, 3);
  EXPECT_TRUE(before.ok()) << before.status();
  auto sites = pass.FindSites(m);
  EXPECT_TRUE(sites.ok()) << sites.status();
  if (decisions.empty()) {
    for (const auto& s : *sites) decisions.push_back(static_cast<int32_t>(s.choices.size()) - 1);
  }
  auto report = pass.Apply(m, *sites, decisions);
  EXPECT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(VerifyModule(m).ok()) << VerifyModule(m) << "\n" << PrintModule(m);
  std::string printed = PrintModule(m);
  auto reparsed = ParseModule(printed);
  EXPECT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << printed;
  if (reparsed.ok()) {
    EXPECT_EQ(PrintModule(**reparsed), printed);
  }
  auto after = RunSeeded(m, 3);
  EXPECT_TRUE(after.ok()) << after.status() << "\n" << printed;
  if (before.ok() && after.ok()) {
    EXPECT_EQ(CompareValues(*before, *after), "") << printed;
  }
  return report.ok() ? *report : ApplyReport{};
}

constexpr char kChain[] = R"(HloModule chain
ENTRY main {
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  c = f32[] constant(2)
  b = f32[8,16] broadcast(c), dimensions={}
  m = f32[8,16] multiply(x, b)
  a = f32[8,16] add(m, y)
  t = f32[8,16] tanh(a)
  ROOT r = f32[8,16] exponential(t)
}
)";

TEST(InstructionFusion, SitesInConsumerFirstOrder) {
  auto m = Parse(kChain);
  ASSERT_TRUE(m);
  auto pass = CreateInstructionFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  EXPECT_EQ(Ids(*sites), (std::vector<std::string>{"fuse:t", "fuse:a", "fuse:m", "fuse:b", "fuse:c"}));
  for (const auto& s : *sites) {
    EXPECT_EQ(s.choices, (std::vector<std::string>{"keep", "fuse"}));
    EXPECT_EQ(s.default_choice, 1) << s.id;
    EXPECT_FALSE(s.features.empty());
  }
}

TEST(InstructionFusion, AllFuseGivesOneLoopFusion) {
  auto m = Parse(kChain);
  ASSERT_TRUE(m);
  auto pass = CreateInstructionFusion();
  ApplyReport r = ApplyAndCheck(*pass, *m);
  EXPECT_EQ(r.applied, 5);
  EXPECT_TRUE(r.stale.empty());
  const Computation* entry = m->entry();
  EXPECT_EQ(entry->instruction_count(), 3);  // x, y, fusion
  const Instruction* root = entry->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->attrs().fusion_kind, FusionKind::kLoop);
  EXPECT_EQ(root->operand_count(), 2);
  const Computation* body = root->called_computations()[0];
  EXPECT_TRUE(body->is_fusion_computation());
  EXPECT_EQ(body->instruction_count(), 8);  // 2 params + 6 ops
  EXPECT_EQ(body->root()->opcode(), Opcode::kExp);
}

TEST(InstructionFusion, KeepAllChangesNothing) {
  auto m = Parse(kChain);
  ASSERT_TRUE(m);
  std::string before = PrintModule(*m);
  auto pass = CreateInstructionFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  auto r = pass->Apply(*m, *sites, DecisionVector(sites->size(), 0));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->applied, 0);
  EXPECT_EQ(PrintModule(*m), before);
}

TEST(InstructionFusion, PartialDecisionsAndDuplication) {
  // e feeds two consumers: fusing it duplicates it into both.
  auto m = Parse(R"(HloModule dup
ENTRY main {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  e = f32[64] exponential(x)
  a = f32[64] add(e, y)
  s = f32[64] subtract(e, y)
  ROOT t = (f32[64], f32[64]) tuple(a, s)
}
)");
  ASSERT_TRUE(m);
  auto pass = CreateInstructionFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"fuse:e"}));
  EXPECT_EQ((*sites)[0].default_choice, 0);  // expensive with two consumers: keep
  ApplyReport r = ApplyAndCheck(*pass, *m, {1});
  EXPECT_EQ(r.applied, 1);
  int fusions = 0;
  for (const auto& i : m->entry()->instructions()) {
    if (i->opcode() == Opcode::kFusion) {
      ++fusions;
      EXPECT_EQ(i->called_computations()[0]->root()->operand(0)->opcode(), Opcode::kExp);
    }
    EXPECT_NE(i->opcode(), Opcode::kExp);
  }
  EXPECT_EQ(fusions, 2);
}

TEST(InstructionFusion, ReduceBecomesInputFusion) {
  auto m = Parse(R"(HloModule red
add {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT s = f32[] add(p0, p1)
}
ENTRY main {
  x = f32[4,8] parameter(0)
  e = f32[4,8] exponential(x)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(e, z), dimensions={1}, to_apply=add
}
)");
  ASSERT_TRUE(m);
  auto pass = CreateInstructionFusion();
  ApplyAndCheck(*pass, *m);
  const Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->attrs().fusion_kind, FusionKind::kInput);
  EXPECT_EQ(root->called_computations()[0]->root()->opcode(), Opcode::kReduce);
  // The reducer is not a fusion target.
  EXPECT_FALSE(m->FindComputation("add")->is_fusion_computation());
}

TEST(InstructionFusion, BadDecisionsAreInvalidDecisions) {
  auto m = Parse(kChain);
  ASSERT_TRUE(m);
  auto pass = CreateInstructionFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  auto short_vec = pass->Apply(*m, *sites, {1});
  EXPECT_TRUE(IsInvalidDecisions(short_vec.status()));
  auto out_of_range = pass->Apply(*m, *sites, DecisionVector(sites->size(), 2));
  EXPECT_TRUE(IsInvalidDecisions(out_of_range.status()));
}

TEST(SiblingFusion, MultiOutputFusionAndStaleSite) {
  auto m = Parse(R"(HloModule sib
ENTRY main {
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] negate(x)
  c = f32[256] abs(x)
  ROOT t = (f32[256], f32[256], f32[256]) tuple(a, b, c)
}
)");
  ASSERT_TRUE(m);
  auto pass = CreateSiblingFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"sibling:a+b", "sibling:b+c"}));
  ApplyReport r = ApplyAndCheck(*pass, *m, {1, 1});
  EXPECT_EQ(r.applied, 1);
  EXPECT_EQ(r.stale, (std::vector<std::string>{"sibling:b+c"}));
  int multi = 0;
  for (const auto& i : m->entry()->instructions()) {
    if (i->opcode() == Opcode::kFusion) {
      EXPECT_TRUE(i->shape().IsTuple());
      EXPECT_EQ(i->called_computations()[0]->root()->opcode(), Opcode::kTuple);
      ++multi;
    }
  }
  EXPECT_EQ(multi, 1);
}

constexpr char kTwoFusions[] = R"(HloModule merge
f1 {
  p = f32[32] parameter(0)
  ROOT n = f32[32] negate(p)
}
f2 {
  p0 = f32[32] parameter(0)
  p1 = f32[32] parameter(1)
  ROOT a = f32[32] add(p0, p1)
}
ENTRY main {
  x = f32[32] parameter(0)
  y = f32[32] parameter(1)
  fa = f32[32] fusion(x), kind=kLoop, calls=f1
  ROOT fb = f32[32] fusion(fa, y), kind=kLoop, calls=f2
}
)";

TEST(FusionMerger, MergesProducerFusionIntoConsumer) {
  auto m = Parse(kTwoFusions);
  ASSERT_TRUE(m);
  auto pass = CreateFusionMerger();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"merge:fa"}));
  ApplyAndCheck(*pass, *m, {1});
  EXPECT_EQ(m->entry()->instruction_count(), 3);
  EXPECT_EQ(m->FindComputation("f1"), nullptr);
  const Computation* body = m->entry()->root()->called_computations()[0];
  EXPECT_EQ(body->root()->operand(0)->opcode(), Opcode::kNegate);
  EXPECT_EQ(m->entry()->root()->operand_count(), 2);
}

TEST(CodegenTuning, WritesBackendConfigThatTheKernelReads) {
  auto m = Parse(kTwoFusions);
  ASSERT_TRUE(m);
  auto pass = CreateCodegenTuning();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 2u);
  EXPECT_EQ((*sites)[0].choices.size(), 7u);
  ApplyAndCheck(*pass, *m, {3, 2});  // b4096_t1, b1024_tall
  const Instruction* fb = m->entry()->root();
  rt::FusedRunOptions o;
  rt::ParseFusedRunOptions(fb->attrs().backend_config, &o);
  EXPECT_EQ(o.block, 1024);
  EXPECT_EQ(o.threads, 0);
  const Instruction* fa = fb->operand(0);
  rt::ParseFusedRunOptions(fa->attrs().backend_config, &o);
  EXPECT_EQ(o.block, 4096);
  EXPECT_EQ(o.threads, 1);
  // Re-tuning replaces the keys instead of stacking them.
  auto again = pass->FindSites(*m);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(pass->Apply(*m, *again, {6, 0}).ok());
  EXPECT_EQ(fb->attrs().backend_config, "{\"hlox_block\":1024,\"hlox_threads\":0}");
}

// A fusion with a transpose also offers how its transposing output is walked: row by row, or in
// 16- or 32-edge tiles instead of the default 64. Every walk gives the same bits (each element
// is computed by the same ops), on 1 and 2 threads; a fusion without a transpose is not offered
// them.
TEST(CodegenTuning, TransposingFusionsOfferTheirWalk) {
  constexpr char kText[] = R"(HloModule walk
ft {
  p0 = f32[96,200] parameter(0)
  p1 = f32[200,96] parameter(1)
  t = f32[200,96] transpose(p0), dimensions={1,0}
  e = f32[200,96] exponential(t)
  ROOT a = f32[200,96] add(e, p1)
}
fe {
  q = f32[200,96] parameter(0)
  ROOT n = f32[200,96] negate(q)
}
ENTRY main {
  x = f32[96,200] parameter(0)
  y = f32[200,96] parameter(1)
  tr = f32[200,96] fusion(x, y), kind=kLoop, calls=ft
  ROOT el = f32[200,96] fusion(tr), kind=kLoop, calls=fe
}
)";
  auto m = Parse(kText);
  ASSERT_TRUE(m);
  auto pass = CreateCodegenTuning();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"tune:tr", "tune:el"}));
  EXPECT_EQ((*sites)[0].choices, (std::vector<std::string>{"keep", "b1024_t1", "b1024_tall", "b4096_t1", "b4096_tall",
                                                           "b16384_t1", "b16384_tall", "rows", "tile16", "tile32"}));
  EXPECT_EQ((*sites)[1].choices.size(), 7u);
  std::vector<rt::Value> runs;
  for (int32_t choice : {0, 7, 8, 9}) {
    auto copy = m->Clone();
    ApplyAndCheck(*pass, *copy, {choice, 0});
    rt::FusedRunOptions o;
    rt::ParseFusedRunOptions(copy->entry()->root()->operand(0)->attrs().backend_config, &o);
    EXPECT_EQ(o.tiled, choice != 7) << choice;
    EXPECT_EQ(o.tile, choice == 8 ? 16 : choice == 9 ? 32 : 64) << choice;
    for (int threads : {1, 2}) {
      auto r = RunSeeded(*copy, 5, threads);
      ASSERT_TRUE(r.ok()) << r.status();
      runs.push_back(*r);
    }
  }
  const rt::Buffer& first = *runs[0].array;
  for (const rt::Value& r : runs) {
    ASSERT_EQ(r.array->byte_size(), first.byte_size());
    EXPECT_EQ(std::memcmp(r.array->data(), first.data(), first.byte_size()), 0);
  }
}

// Dots get "gemm:" sites with only the knobs that can change their run: a batched dot big
// enough to split offers threads, packed-GEMM and batch knobs; a GEMV-like dot (m <= 4) only the
// thread knob; a small or integer dot none. The written keys are what the dot kernel reads, and
// every knob keeps the module's outputs.
constexpr char kDots[] = R"(HloModule dots
ENTRY main {
  a = f32[4,64,96] parameter(0)
  b = f32[4,96,64] parameter(1)
  big = f32[4,64,64] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  v = f32[2,512] parameter(2)
  w = f32[512,1024] parameter(3)
  gemv = f32[2,1024] dot(v, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[8,8] parameter(4)
  small = f32[8,8] dot(s, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s32[64,64] parameter(5)
  int = s32[64,64] dot(i, i), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,64,64], f32[2,1024], f32[8,8], s32[64,64]) tuple(big, gemv, small, int)
}
)";

TEST(CodegenTuning, DotSitesOfferTheKnobsThatCanChangeTheRun) {
  auto m = Parse(kDots);
  ASSERT_TRUE(m);
  auto pass = CreateCodegenTuning();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"gemm:big", "gemm:gemv"}));
  EXPECT_EQ((*sites)[0].choices,
            (std::vector<std::string>{"keep", "t1", "rows", "columns", "mc8", "mc64", "nc4", "nc16", "b_in_l1", "split_batches",
                                      "split_each"}));
  EXPECT_EQ((*sites)[1].choices, (std::vector<std::string>{"keep", "t1"}));
  EXPECT_EQ((*sites)[0].features, (std::vector<float>{4, 64, 64, 96}));
  for (int32_t choice = 1; choice < static_cast<int32_t>((*sites)[0].choices.size()); ++choice) {
    auto copy = m->Clone();
    ApplyAndCheck(*pass, *copy, {choice, 1});
  }
  ApplyAndCheck(*pass, *m, {4, 1});  // mc8, t1
  const Instruction* big = m->entry()->root()->operand(0);
  rt::GemmTuning t = rt::ParseGemmTuning(big->attrs().backend_config);
  EXPECT_EQ(t.mc_panels, 8);
  EXPECT_EQ(t.threads, -1);
  EXPECT_EQ(rt::ParseGemmTuning(m->entry()->root()->operand(1)->attrs().backend_config).threads, 1);
  // Re-tuning replaces the dot's keys.
  auto again = pass->FindSites(*m);
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(pass->Apply(*m, *again, {10, 0}).ok());
  EXPECT_EQ(big->attrs().backend_config, "{\"hlox_gemm_batches\":2}");
  ASSERT_TRUE(pass->Apply(*m, *again, {8, 0}).ok());
  EXPECT_EQ(big->attrs().backend_config, "{\"hlox_gemm_order\":1}");
  EXPECT_TRUE(rt::ParseGemmTuning(big->attrs().backend_config).b_panel_in_l1);
}

// A site whose dot changed so that its knob no longer applies is stale, not given another knob.
TEST(CodegenTuning, DotSiteWhoseKnobNoLongerAppliesIsStale) {
  auto m = Parse(kDots);
  ASSERT_TRUE(m);
  auto pass = CreateCodegenTuning();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  auto other = Parse(absl::StrReplaceAll(kDots, {{"f32[4,64,96] parameter(0)", "f32[4,2,96] parameter(0)"},
                                                  {"big = f32[4,64,64]", "big = f32[4,2,64]"},
                                                  {"(f32[4,64,64]", "(f32[4,2,64]"}}));
  ASSERT_TRUE(other);
  auto report = pass->Apply(*other, *sites, {2, 0});  // "rows": not offered for a 2-row dot
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->stale, (std::vector<std::string>{"gemm:big"}));
  EXPECT_FALSE(other->entry()->root()->operand(0)->attrs().has_backend_config);
}

// Convolutions get "conv:" sites listing the algorithms their form allows (runtime/conv/tuning.h);
// each choice keeps the outputs and writes the key the convolution kernel reads.
TEST(CodegenTuning, ConvolutionSitesOfferTheAlgorithmsOfTheirForm) {
  auto m = Parse(R"(HloModule convs
ENTRY main {
  x = f32[2,16,16,16] parameter(0)
  w = f32[16,16,3,3] parameter(1)
  fwd = f32[2,16,16,16] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  d = f32[2,16,16,16] parameter(2)
  small = f32[2,2,4,4] parameter(3)
  k = f32[2,2,1,1] parameter(4)
  tiny = f32[2,2,4,4] convolution(small, k), window={size=1x1}, dim_labels=bf01_oi01->bf01
  ROOT t = (f32[2,16,16,16], f32[2,2,4,4]) tuple(fwd, tiny)
}
)");
  ASSERT_TRUE(m);
  auto pass = CreateCodegenTuning();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(Ids(*sites), (std::vector<std::string>{"conv:fwd"}));  // 8192 outputs x 144 terms: 2^20+
  EXPECT_EQ((*sites)[0].choices, (std::vector<std::string>{"keep", "t1", "tiles", "wide_k", "planes"}));
  for (int32_t choice = 1; choice < 5; ++choice) {
    auto copy = m->Clone();
    ApplyAndCheck(*pass, *copy, {choice});
    const Instruction* fwd = copy->entry()->root()->operand(0);
    rt::ConvTuning t = rt::ParseConvTuning(fwd->attrs().backend_config);
    EXPECT_EQ(choice == 1 ? t.threads : static_cast<int>(t.algorithm), choice == 1 ? 1 : choice - 1);
  }
}

TEST(FusionKernel, FallbackRunsUnsupportedBodiesUnfused) {
  auto m = Parse(R"(HloModule fb
fused {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  p = f32[4,4] parameter(0)
  ROOT f = f32[4,4] fusion(p), kind=kOutput, calls=fused
}
)");
  ASSERT_TRUE(m);
  auto ref = Parse(R"(HloModule ref
ENTRY main {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  int64_t before = rt::GetFusionKernelStats().fallback_runs;
  auto out = RunSeeded(*m, 5);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(rt::GetFusionKernelStats().fallback_runs, before + 1);
  auto expect = RunSeeded(*ref, 5);
  ASSERT_TRUE(expect.ok()) << expect.status();
  EXPECT_EQ(CompareValues(*expect, *out), "");
}

TEST(FusionKernel, PrivateProgramsCompileOncePerExecutor) {
  // Executors of one module share its compiled fused programs; an executor with
  // private_programs (paired measurement's instances) compiles its own, with the same bits.
  auto m = Parse(R"(HloModule pp
fused {
  a = f32[64] parameter(0)
  e = f32[64] exponential(a)
  ROOT t = f32[64] tanh(e)
}
ENTRY main {
  p = f32[64] parameter(0)
  ROOT f = f32[64] fusion(p), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(m);
  const std::vector<rt::Value> in = rt::MakeSeededInputs(*m, 3);
  auto compiles_of = [&](bool own, int executors, std::vector<rt::Value>* outs) {
    const int64_t before = rt::GetFusionKernelStats().compiles;
    rt::ExecOptions eo{1, 3};
    eo.private_programs = own;
    for (int k = 0; k < executors; ++k) {
      auto ex = rt::Executor::Create(*m, eo);
      EXPECT_TRUE(ex.ok());
      if (!ex.ok()) return int64_t{-1};
      for (int rep = 0; rep < 2; ++rep) {  // a second run reuses the executor's program
        auto out = (*ex)->Run(in);
        EXPECT_TRUE(out.ok()) << out.status();
        if (out.ok()) outs->push_back(*std::move(out));
      }
    }
    return rt::GetFusionKernelStats().compiles - before;
  };
  std::vector<rt::Value> outs;
  compiles_of(false, 1, &outs);  // fills the shared cache for this module
  EXPECT_EQ(compiles_of(false, 3, &outs), 0);
  EXPECT_EQ(compiles_of(true, 3, &outs), 3);
  for (const rt::Value& v : outs) EXPECT_EQ(CompareValues(outs[0], v, 0.0), "");
}

}  // namespace
}  // namespace hlox
