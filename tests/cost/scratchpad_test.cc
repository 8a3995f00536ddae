// The scratchpad traffic model against its simulator (cost/scratchpad.h), the closed-form line
// counts against enumeration (cost/loop_nest.h), the tilings, and the targets.
#include <cmath>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "cost/analytical.h"
#include "cost/kernel_model.h"
#include "cost/loop_nest.h"
#include "cost/scratchpad.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "passes/pipeline.h"
#include "tests/test_util.h"

namespace hlox {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

ScratchpadTarget Target(int64_t bytes, int64_t line) {
  ScratchpadTarget t;
  t.name = "test";
  t.scratchpad_bytes = bytes;
  t.line_bytes = line;
  return t;
}

// Model and simulator on one computation; returns model / simulated - 1.
double Disagreement(const Computation& c, const ScratchpadTarget& t) {
  const TrafficReport model = ScratchpadTraffic(c, t);
  absl::StatusOr<TrafficReport> sim = SimulateScratchpadTraffic(c, t);
  EXPECT_TRUE(sim.ok()) << sim.status();
  if (!sim.ok() || sim->Total() == 0) return model.Total() == 0 ? 0 : INFINITY;
  return model.Total() / sim->Total() - 1;
}

constexpr char kDot[] = R"(HloModule dot
ENTRY e {
  a = f32[300,200] parameter(0)
  b = f32[200,260] parameter(1)
  ROOT d = f32[300,260] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

// Every tiling of a dot at scratchpads from much smaller than one operand (240 KB) to larger
// than all three: the model within 10% of the simulated LRU scratchpad, and tilings that fill
// more of a small scratchpad move less than the native one.
TEST(ScratchpadTraffic, DotTilingsAgreeWithTheSimulator) {
  for (int64_t s : {int64_t{16} << 10, int64_t{64} << 10, int64_t{256} << 10, int64_t{1} << 20}) {
    for (const std::string& tiling : sp::TilingNames()) {
      std::string text = kDot;
      if (tiling != "native") {
        text.replace(text.find("rhs_contracting_dims={0}"), 24,
                     "rhs_contracting_dims={0}, backend_config={\"hlox_sp_tiling\":\"" + tiling + "\"}");
      }
      auto m = Parse(text);
      ASSERT_TRUE(m);
      const double d = Disagreement(*m->entry(), Target(s, 64));
      EXPECT_LT(std::abs(d), 0.10) << tiling << " S=" << s;
    }
  }
}

TEST(ScratchpadTraffic, TilingsChangeTrafficAndTheBestBeatsNative) {
  auto traffic = [](const std::string& tiling, int64_t s) {
    std::string text = kDot;
    text.replace(text.find("rhs_contracting_dims={0}"), 24,
                 "rhs_contracting_dims={0}, backend_config={\"hlox_sp_tiling\":\"" + tiling + "\"}");
    auto m = Parse(text);
    return m ? ScratchpadTraffic(*m->entry(), Target(s, 64)).Total() : 0.0;
  };
  // 256 KiB holds the right-hand operand (208 KB) but not the result: keeping it stationary
  // (in1) reads everything once, where the native tiles reload it per row block.
  const int64_t s = int64_t{256} << 10;
  const double native = traffic("native", s);
  double best = native;
  for (const std::string& t : sp::TilingNames()) best = std::min(best, traffic(t, s));
  EXPECT_LT(best, 0.8 * native);
  // Compulsory traffic is a floor: operands read once, the result written once.
  EXPECT_GE(best, (300 * 200 + 200 * 260 + 300 * 260) * 4.0);
}

// Kernels of several kinds, fused and not, where tensors are larger than the scratchpad:
// convolution with padding and stride, reduce and reduce-window, a transposing fusion, slices,
// pads, concatenation, broadcasts, reshapes and a chain whose intermediates die.
// The reducers of the modules below.
constexpr char kAddMax[] = R"(add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
)";

const std::string kMix = std::string("HloModule mix\n") + kAddMax + R"(fused_t {
  p = f32[96,130] parameter(0)
  t = f32[130,96] transpose(p), dimensions={1,0}
  q = f32[130,96] parameter(1)
  ROOT m = f32[130,96] multiply(t, q)
}
ENTRY e {
  in = f32[2,33,33,16] parameter(0)
  k = f32[3,3,16,24] parameter(1)
  c = f32[2,16,16,24] convolution(in, k), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f
  r = f32[2,24] reduce(c, f32[] constant(0)), dimensions={1,2}, to_apply=add
  pool = f32[2,8,8,24] reduce-window(c, f32[] constant(-inf)), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
  a = f32[96,130] parameter(2)
  b = f32[130,96] parameter(3)
  f = f32[130,96] fusion(a, b), kind=kLoop, calls=fused_t
  s = f32[130,48] slice(f), slice={[0:130], [0:96:2]}
  pd = f32[132,50] pad(s, f32[] constant(0)), padding=1_1x1_1
  cat = f32[132,100] concatenate(pd, pd), dimensions={1}
  rs = f32[100,132] reshape(cat)
  bc = f32[2,100,132] broadcast(rs), dimensions={1,2}
  ex = f32[2,100,132] exponential(bc)
  ROOT out = (f32[2,24], f32[2,8,8,24], f32[2,100,132]) tuple(r, pool, ex)
})";

TEST(ScratchpadTraffic, KernelKindsAgreeWithTheSimulator) {
  auto m = Parse(kMix);
  ASSERT_TRUE(m);
  for (int64_t s : {int64_t{8} << 10, int64_t{32} << 10, int64_t{128} << 10, int64_t{4} << 20}) {
    for (int64_t line : {64, 512}) {
      if (line * 4 > s) continue;
      EXPECT_LT(std::abs(Disagreement(*m->entry(), Target(s, line))), 0.10) << "S=" << s << " line=" << line;
    }
  }
}

// A scratchpad that holds everything: each parameter read once, each result written once, and
// intermediates never leave the scratchpad.
TEST(ScratchpadTraffic, EverythingResidentMovesOnlyInputsAndOutputs) {
  auto m = Parse(kMix);
  ASSERT_TRUE(m);
  const Computation& e = *m->entry();
  const ScratchpadTarget t = Target(int64_t{1} << 30, 4);
  double compulsory = 0;
  for (const Instruction* p : e.parameters()) compulsory += static_cast<double>(p->shape().ByteSize());
  compulsory += static_cast<double>(e.root()->shape().ByteSize());
  for (const auto& i : e.instructions()) {
    if (i->opcode() == Opcode::kConstant) compulsory += static_cast<double>(i->shape().ByteSize());
  }
  EXPECT_DOUBLE_EQ(ScratchpadTraffic(e, t).Total(), compulsory);
  absl::StatusOr<TrafficReport> sim = SimulateScratchpadTraffic(e, t);
  ASSERT_TRUE(sim.ok());
  EXPECT_DOUBLE_EQ(sim->Total(), compulsory);
}

// The closed-form line count equals enumeration on boxes of single-term maps (transposed,
// strided, reversed, offset and clipped views; each loop indexing one dim, as HLO's maps do) at
// both line sizes.
TEST(LoopNest, ClosedFormLinesMatchEnumeration) {
  std::mt19937 rng(7);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    sp::Access a;
    a.elem_bytes = trial % 3 == 0 ? 2 : 4;
    const int rank = 1 + static_cast<int>(rng() % 3);
    const int loops = rank;
    sp::Box box;
    std::vector<int64_t> extents;
    for (int j = 0; j < loops; ++j) extents.push_back(1 + static_cast<int64_t>(rng() % 40));
    std::vector<int> perm(rank);
    for (int d = 0; d < rank; ++d) perm[d] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int d = 0; d < rank; ++d) {
      a.dims.push_back(1 + static_cast<int64_t>(rng() % 50));
      sp::DimIndex di;
      const int loop = perm[d];  // each loop indexes one dim, in any order (transposes)
      const int64_t coeff = 1 + static_cast<int64_t>(rng() % 3 == 0 ? rng() % 3 : 0);
      di.terms.push_back({loop, rng() % 5 == 0 ? -coeff : coeff});
      di.offset = static_cast<int64_t>(rng() % 7) - 3 + (di.terms[0].coeff < 0 ? a.dims.back() - 1 : 0);
      a.index.push_back(di);
    }
    for (int j = 0; j < loops; ++j) {
      const int64_t len = 1 + static_cast<int64_t>(rng() % extents[j]);
      box.lo.push_back(static_cast<int64_t>(rng() % (extents[j] - len + 1)));
      box.len.push_back(len);
    }
    for (int64_t line : {64, 512}) {
      const double exact = static_cast<double>(sp::BoxLines(a, box, line));
      const double closed = sp::ApproxBoxLines(a, box, line);
      // Groups at offsets that cycle within a line are averaged over the cycle: exact up to
      // the part of the cycle the box covers.
      std::string what;  // the case, to reproduce a failure
      for (size_t d = 0; d < a.dims.size(); ++d) {
        absl::StrAppend(&what, " dim ", a.dims[d], ":");
        for (const sp::IndexTerm& t : a.index[d].terms) absl::StrAppend(&what, " ", t.coeff, "*L", t.loop);
        absl::StrAppend(&what, " +", a.index[d].offset);
      }
      for (size_t j = 0; j < box.lo.size(); ++j) absl::StrAppend(&what, " L", j, "[", box.lo[j], "+", box.len[j], "]");
      EXPECT_NEAR(closed, exact, std::max(1.0, 0.05 * exact)) << "trial " << trial << " line " << line << " elem " << a.elem_bytes << what;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 800);
}

TEST(ScratchpadTarget, ShippedFilesLoadAndTheBuiltInIsTheDefaultFile) {
  const std::string dir = testing::SourceDir() + "/targets/scratchpad/";
  for (const char* f : {"inferentia2-core.json", "edge-2mib.json", "micro-256kib.json"}) {
    absl::StatusOr<ScratchpadTarget> t = LoadScratchpadTarget(dir + f);
    ASSERT_TRUE(t.ok()) << f << ": " << t.status();
    EXPECT_GT(t->scratchpad_bytes, t->line_bytes);
  }
  absl::StatusOr<ScratchpadTarget> def = LoadScratchpadTarget(dir + "inferentia2-core.json");
  ASSERT_TRUE(def.ok());
  const ScratchpadTarget b = DefaultScratchpadTarget();
  EXPECT_EQ(def->name, b.name);
  EXPECT_EQ(def->scratchpad_bytes, b.scratchpad_bytes);
  EXPECT_EQ(def->line_bytes, b.line_bytes);
  EXPECT_DOUBLE_EQ(def->dram_gbs, b.dram_gbs);
  EXPECT_DOUBLE_EQ(def->tflops, b.tflops);
}

TEST(ScratchpadTarget, BadFilesAreRefusedWithTheReason) {
  const std::string path = ::testing::TempDir() + "/sp_target.json";
  auto load = [&](const std::string& text) {
    std::ofstream(path) << text;
    return LoadScratchpadTarget(path);
  };
  EXPECT_EQ(LoadScratchpadTarget(path + ".missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(load("[1, 2]").ok());
  EXPECT_FALSE(load("{\"line_bytes\": 64}").ok());  // no size
  EXPECT_FALSE(load("{\"scratchpad_bytes\": -5}").ok());
  EXPECT_FALSE(load("{\"scratchpad_bytes\": 1024, \"line_bytes\": 4096}").ok());
  EXPECT_FALSE(load("{\"scratchpad_bytes\": \"big\"}").ok());
  absl::StatusOr<ScratchpadTarget> ok = load("{\"scratchpad_bytes\": 65536, \"line_bytes\": 128}");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->line_bytes, 128);
}

// The scratchpad pipeline's tiling sites: one per planned kernel; a choice writes the key the
// model reads, and changes the modelled traffic but not a byte of what the CPU runtime runs
// except that key.
TEST(ScratchpadTiling, SitesWriteTheKeyTheModelReads) {
  auto m = Parse(kDot);
  ASSERT_TRUE(m);
  absl::StatusOr<std::optional<DecisionPoint>> point = NextDecisionPoint(*m, "only:scratchpad-tiling", {});
  ASSERT_TRUE(point.ok() && point->has_value()) << point.status();
  ASSERT_EQ((*point)->sites.size(), 1u);
  EXPECT_EQ((*point)->sites[0].id, "sp:d");
  EXPECT_EQ((*point)->sites[0].choices.size(), sp::TilingNames().size());
  PipelineDecisions d{{"scratchpad-tiling#0", {1}}};
  absl::StatusOr<std::unique_ptr<Module>> out = RunPipeline(*m, "only:scratchpad-tiling", d);
  ASSERT_TRUE(out.ok()) << out.status();
  const Instruction* dot = (*out)->entry()->root();
  EXPECT_EQ(sp::TilingKey(*dot), "out_l");
  const ScratchpadTarget t = Target(int64_t{64} << 10, 64);
  EXPECT_NE(ScratchpadTraffic(*(*out)->entry(), t).Total(), ScratchpadTraffic(*m->entry(), t).Total());
  // Re-tiling replaces the key instead of adding a second one.
  PipelineDecisions again{{"scratchpad-tiling#0", {3}}};
  absl::StatusOr<std::unique_ptr<Module>> twice = RunPipeline(**out, "only:scratchpad-tiling", again);
  ASSERT_TRUE(twice.ok());
  const std::string& config = (*twice)->entry()->root()->attrs().backend_config;
  EXPECT_EQ(sp::TilingKey(*(*twice)->entry()->root()), "in0_l");
  EXPECT_EQ(config.find("hlox_sp_tiling"), config.rfind("hlox_sp_tiling")) << config;
}

// A softmax over 1024 rows of 600 (2.4 KB each), 2.4 MB in all, on scratchpads far smaller: each
// op alone streams whole tensors through DRAM; staged (every op joined to the one before it),
// the rows each op writes are read by the next while they are in the scratchpad.
const std::string kSoftmax = std::string("HloModule softmax\n") + kAddMax + R"(ENTRY e {
  x = f32[1024,600] parameter(0)
  m = f32[1024] reduce(x, f32[] constant(-inf)), dimensions={1}, to_apply=max
  mb = f32[1024,600] broadcast(m), dimensions={0}, backend_config={"hlox_sp_stage":"join"}
  s = f32[1024,600] subtract(x, mb), backend_config={"hlox_sp_stage":"join"}
  ex = f32[1024,600] exponential(s), backend_config={"hlox_sp_stage":"join"}
  z = f32[1024] reduce(ex, f32[] constant(0)), dimensions={1}, to_apply=add, backend_config={"hlox_sp_stage":"join"}
  zb = f32[1024,600] broadcast(z), dimensions={0}, backend_config={"hlox_sp_stage":"join"}
  ROOT y = f32[1024,600] divide(ex, zb), backend_config={"hlox_sp_stage":"join"}
})";

std::string Unstaged(std::string text) {
  for (size_t p; (p = text.find(", backend_config={\"hlox_sp_stage\":\"join\"}")) != std::string::npos;) {
    text.erase(p, std::string(", backend_config={\"hlox_sp_stage\":\"join\"}").size());
  }
  return text;
}

TEST(ScratchpadStaging, JoinedKernelsKeepRowsInTheScratchpad) {
  auto staged = Parse(kSoftmax);
  auto split = Parse(Unstaged(kSoftmax));
  ASSERT_TRUE(staged && split);
  const double compulsory = 2 * 1024 * 600 * 4.0;  // x read once, y written once
  for (int64_t s : {int64_t{64} << 10, int64_t{256} << 10, int64_t{1} << 20}) {
    for (int64_t line : {64, 512}) {
      const ScratchpadTarget t = Target(s, line);
      const TrafficReport st = ScratchpadTraffic(*staged->entry(), t);
      const TrafficReport sp = ScratchpadTraffic(*split->entry(), t);
      EXPECT_LT(st.Total(), 1.05 * compulsory) << "S=" << s << " line=" << line;
      EXPECT_GT(sp.Total(), 2 * compulsory) << "S=" << s << " line=" << line;
      EXPECT_LT(std::abs(Disagreement(*staged->entry(), t)), 0.10) << "staged S=" << s << " line=" << line;
      EXPECT_LT(std::abs(Disagreement(*split->entry(), t)), 0.10) << "split S=" << s << " line=" << line;
      int members = 0;
      for (const KernelTraffic& k : st.kernels) members += k.tiling.find("staged") != std::string::npos;
      EXPECT_EQ(members, 7);
    }
  }
}

// A join takes effect only where the loop fusion is sound and fits: a transpose writes its
// output in columns of the shared loop (not rows); a scratchpad whose half holds less than one
// row leaves every kernel on its own, and one that holds a few rows ends a group where the next
// member's row would not fit.
TEST(ScratchpadStaging, JoinsThatCannotStageAreIgnored) {
  std::string text = kSoftmax;
  text.replace(text.find("ROOT y"), 6, "y");
  text.replace(text.rfind("}"), 1,
               "  ROOT t = f32[600,1024] transpose(y), dimensions={1,0}, backend_config={\"hlox_sp_stage\":\"join\"}\n}");
  auto m = Parse(text);
  ASSERT_TRUE(m);
  const TrafficReport r = ScratchpadTraffic(*m->entry(), Target(int64_t{256} << 10, 64));
  ASSERT_EQ(r.kernels.size(), 9u);  // 8 kernels and the end
  EXPECT_NE(r.kernels[6].tiling.find("staged 7/7"), std::string::npos) << r.kernels[6].tiling;
  EXPECT_EQ(r.kernels[7].tiling.find("staged"), std::string::npos) << r.kernels[7].tiling;
  auto softmax = Parse(kSoftmax);
  ASSERT_TRUE(softmax);
  const TrafficReport tiny = ScratchpadTraffic(*softmax->entry(), Target(int64_t{4} << 10, 64));
  for (const KernelTraffic& k : tiny.kernels) EXPECT_EQ(k.tiling.find("staged"), std::string::npos) << k.name;
  // 16 KiB: x, m, mb and s rows fit in 8 KiB (about 7.3 KB), ex's would not.
  const TrafficReport small = ScratchpadTraffic(*softmax->entry(), Target(int64_t{16} << 10, 64));
  EXPECT_NE(small.kernels[2].tiling.find("staged 3/3"), std::string::npos) << small.kernels[2].tiling;
  EXPECT_NE(small.kernels[3].tiling.find("staged 1/"), std::string::npos) << small.kernels[3].tiling;
  EXPECT_LT(std::abs(Disagreement(*softmax->entry(), Target(int64_t{16} << 10, 64))), 0.10);
}

// A member may reduce over the shared loop (a column sum of the rows the group makes): its result
// does not depend on that loop, stays resident across the steps and is written back once.
TEST(ScratchpadStaging, AMemberMayReduceOverTheSharedLoop) {
  std::string text = kSoftmax;
  text.replace(text.find("ROOT y"), 6, "y");
  text.replace(text.rfind("}"), 1,
               "  ROOT cs = f32[600] reduce(y, f32[] constant(0)), dimensions={0}, to_apply=add, "
               "backend_config={\"hlox_sp_stage\":\"join\"}\n}");
  auto m = Parse(text);
  ASSERT_TRUE(m);
  for (int64_t s : {int64_t{64} << 10, int64_t{256} << 10}) {
    const ScratchpadTarget t = Target(s, 64);
    const TrafficReport r = ScratchpadTraffic(*m->entry(), t);
    EXPECT_NE(r.kernels[7].tiling.find("staged 8/8"), std::string::npos) << r.kernels[7].tiling;
    // x read once, the column sums written once: nothing else moves.
    EXPECT_LT(r.Total(), 1.02 * (1024 * 600 + 600) * 4.0) << s;
    EXPECT_LT(std::abs(Disagreement(*m->entry(), t)), 0.10) << s;
  }
}

// The pass offers a staging site per kernel that reads the kernel before it; "join" writes the
// key the model reads.
TEST(ScratchpadStaging, SitesWriteTheKeyTheModelReads) {
  auto m = Parse(Unstaged(kSoftmax));
  ASSERT_TRUE(m);
  absl::StatusOr<std::optional<DecisionPoint>> point = NextDecisionPoint(*m, "only:scratchpad-tiling", {});
  ASSERT_TRUE(point.ok() && point->has_value()) << point.status();
  std::vector<int> all_join;
  int stage_sites = 0;
  for (const DecisionSite& site : (*point)->sites) {
    const bool stage = site.rule == "sp_stage";
    stage_sites += stage;
    all_join.push_back(stage ? 1 : 0);
  }
  EXPECT_EQ(stage_sites, 6);  // every op but the first reads the one before it
  absl::StatusOr<std::unique_ptr<Module>> out =
      RunPipeline(*m, "only:scratchpad-tiling", PipelineDecisions{{"scratchpad-tiling#0", all_join}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(sp::BackendKey(*(*out)->entry()->root(), "hlox_sp_stage"), "join");
  const ScratchpadTarget t = Target(int64_t{256} << 10, 64);
  EXPECT_LT(ScratchpadTraffic(*(*out)->entry(), t).Total(), 0.5 * ScratchpadTraffic(*m->entry(), t).Total());
}

// AwsNeuronTransferWithStaticRing of its operand's exact shape is an identity the runtime runs by
// sharing the buffer: no kernel, no bytes; with another shape it copies, and is a kernel.
TEST(ScratchpadTraffic, SharedIdentityCallsMoveNothing) {
  auto m = Parse(R"(HloModule t
ENTRY e {
  w = f32[512,256] parameter(0)
  x = f32[8,512] parameter(1)
  same = f32[512,256] custom-call(w), custom_call_target="AwsNeuronTransferWithStaticRing"
  d = f32[8,256] dot(x, same), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  other = f32[256,512] custom-call(w), custom_call_target="AwsNeuronTransferWithStaticRing"
  ROOT out = (f32[8,256], f32[256,512]) tuple(d, other)
})");
  ASSERT_TRUE(m);
  const KernelModel km = BuildKernelModel(*m->entry());
  std::vector<std::string> kernels;
  for (const Kernel& k : km.kernels) kernels.push_back(k.instr->name());
  EXPECT_EQ(kernels, (std::vector<std::string>{"d", "other"}));
  // Everything resident: w and x read once, d and other written once.
  const double all = ScratchpadTraffic(*m->entry(), Target(int64_t{1} << 30, 64)).Total();
  EXPECT_DOUBLE_EQ(all, (512 * 256 + 8 * 512 + 8 * 256 + 256 * 512) * 4.0);
}

// Corpus modules (the default pipeline's output plus native tiling) on the small targets: the
// model within 10% of the simulator on every module the simulator finishes within its budget.
TEST(ScratchpadTraffic, CorpusModulesAgreeWithTheSimulator) {
  HLOX_REQUIRE_CORPUS();
  int compared = 0;
  for (const char* name : {"gh_bert_optimizer_tp1", "hloenv_mlp_regression_train_step", "gh_gpt2_decode_tp1",
                           "hloenv_nux_flow_loss", "hloenv_maml_flax_train_step", "alpa_embed_sgd_spmd_pre"}) {
    auto m = ParseModuleFile(testing::CorpusDir() + "/" + name + ".hlo");
    ASSERT_TRUE(m.ok()) << name;
    absl::StatusOr<std::unique_ptr<Module>> opt = RunPipeline(**m, "scratchpad", {});
    ASSERT_TRUE(opt.ok()) << name << ": " << opt.status();
    for (int64_t s : {int64_t{256} << 10, int64_t{2} << 20}) {
      const ScratchpadTarget t = Target(s, 64);
      const TrafficReport model = ScratchpadTraffic(*(*opt)->entry(), t);
      absl::StatusOr<TrafficReport> sim = SimulateScratchpadTraffic(*(*opt)->entry(), t, int64_t{40} << 20);
      if (!sim.ok()) continue;  // over the budget
      ++compared;
      EXPECT_NEAR(model.Total(), sim->Total(), 0.10 * sim->Total()) << name << " S=" << s;
    }
  }
  EXPECT_GE(compared, 6);
}

}  // namespace
}  // namespace hlox
