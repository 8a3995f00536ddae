// Output fusion (passes/fusion/output_fusion.cc, runtime/kernels/output_fusion.h): which dots and
// convolutions get a site, the kOutput fusion the pass builds, and the runtime's kernel giving
// the same bits as the dot or convolution followed by the unfused epilogue, over the GEMM's
// schedules (row and column mode, few rows, batched, narrow C), the convolution's paths
// (pointwise, im2col tiles, depthwise rows, wide-k, grouped, NCHW), thread counts and element
// types.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "runtime/core/executor.h"
#include "runtime/fused/program.h"
#include "tests/fusion/fusion_test_util.h"

namespace hlox {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

// Every output leaf byte for byte ("" when equal).
std::string SameBits(const rt::Value& a, const rt::Value& b) {
  std::vector<rt::BufferPtr> x, y;
  a.Flatten(&x);
  b.Flatten(&y);
  if (x.size() != y.size()) return "leaf count differs";
  for (size_t k = 0; k < x.size(); ++k) {
    if (x[k]->byte_size() != y[k]->byte_size()) return absl::StrCat("leaf ", k, " size differs");
    if (std::memcmp(x[k]->data(), y[k]->data(), x[k]->byte_size()) != 0) {
      return absl::StrCat("leaf ", k, " bits differ: ", testing::CompareValues(a, b));
    }
  }
  return "";
}

// Loop fusion, then output fusion, each with its default policy; returns the output fusion's
// sites.
std::vector<DecisionSite> FuseWithEpilogues(Module& m) {
  EXPECT_TRUE(CreateInstructionFusion()->Run(m).ok());
  auto pass = CreateOutputFusion();
  auto sites = pass->FindSites(m);
  EXPECT_TRUE(sites.ok()) << sites.status();
  DecisionVector d;
  for (const auto& s : *sites) d.push_back(s.default_choice);
  auto report = pass->Apply(m, *sites, d);
  EXPECT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(VerifyModule(m).ok()) << VerifyModule(m) << "\n" << PrintModule(m);
  return sites.ok() ? *sites : std::vector<DecisionSite>{};
}

int CountOutputFusions(const Module& m) {
  int n = 0;
  for (const auto& i : m.entry()->instructions()) {
    n += i->opcode() == Opcode::kFusion && i->attrs().fusion_kind == FusionKind::kOutput;
  }
  return n;
}

// dot [M,K] x [K,N] (or batched [B,M,K] x [B,K,N]) + bias, + residual, tanh: the epilogue of a
// transformer projection.
std::string DenseLayer(int64_t b, int64_t m, int64_t n, int64_t k, const std::string& type = "f32") {
  std::string bd = b > 0 ? absl::StrCat(b, ",") : "";
  std::string out = absl::StrCat(type, "[", bd, m, ",", n, "]");
  std::string batch = b > 0 ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "";
  int64_t c = b > 0 ? 2 : 1;
  std::string text = R"(
HloModule dense
ENTRY main {
  x = $T[$BD$M,$K] parameter(0)
  w = $T[$BD$K,$N] parameter(1)
  bias = $T[$N] parameter(2)
  res = $OUT parameter(3)
  d = $OUT dot(x, w), $BATCHlhs_contracting_dims={$C}, rhs_contracting_dims={$CR}
  bb = $OUT broadcast(bias), dimensions={$C}
  s = $OUT add(d, bb)
  t = $OUT tanh(s)
  ROOT r = $OUT add(t, res)
}
)";
  return absl::StrReplaceAll(text, {{"$BD", bd}, {"$OUT", out}, {"$BATCH", batch}, {"$T", type},
                                    {"$M", absl::StrCat(m)}, {"$N", absl::StrCat(n)}, {"$K", absl::StrCat(k)},
                                    {"$CR", absl::StrCat(c - 1)}, {"$C", absl::StrCat(c)}});
}

TEST(OutputFusionPass, FusesDotIntoItsElementwiseConsumer) {
  auto m = Parse(DenseLayer(0, 16, 64, 32));
  ASSERT_NE(m, nullptr);
  std::vector<DecisionSite> sites = FuseWithEpilogues(*m);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].id, "epilogue:d");
  EXPECT_EQ(sites[0].rule, "dot_epilogue");
  EXPECT_EQ(sites[0].choices, (std::vector<std::string>{"keep", "fuse"}));
  EXPECT_EQ(CountOutputFusions(*m), 1);
  // The entry is one kOutput fusion over the four parameters.
  const Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->operand_count(), 4);
  std::string printed = PrintModule(*m);
  auto reparsed = ParseModule(printed);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status();
  EXPECT_EQ(PrintModule(**reparsed), printed);
}

TEST(OutputFusionPass, WrapsAPlainElementwiseConsumer) {
  auto m = Parse(R"(
HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[8,4] exponential(d)
}
)");
  ASSERT_NE(m, nullptr);
  auto pass = CreateOutputFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 1u);
  auto before = testing::RunSeeded(*m, 5);
  ASSERT_TRUE(pass->Apply(*m, *sites, {1}).ok());
  EXPECT_EQ(CountOutputFusions(*m), 1);
  auto after = testing::RunSeeded(*m, 5);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(SameBits(*before, *after), "");
}

TEST(OutputFusionPass, NoSiteWhenTheResultIsNotReadElementwiseOnce) {
  const char* cases[] = {
      // two users: the dot's result must be materialized anyway
      R"(HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[8,4] exponential(d)
  ROOT t = (f32[8,4], f32[8,4]) tuple(d, e)
})",
      // a transposing consumer: its element i does not read the dot's element i
      R"(HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,8] parameter(1)
  d = f32[8,8] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[8,8] transpose(d), dimensions={1,0}
})",
      // a reduction of the result
      R"(HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(d, z), dimensions={1}, to_apply=add
})",
      // a consumer of another element type
      R"(HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT c = bf16[8,4] convert(d)
})",
  };
  for (const char* text : cases) {
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    auto sites = CreateOutputFusion()->FindSites(*m);
    ASSERT_TRUE(sites.ok());
    EXPECT_TRUE(sites->empty()) << text;
  }
}

TEST(OutputFusionPass, TwoDotsIntoOneConsumerFuseOneAndReportTheOtherStale) {
  auto m = Parse(R"(
HloModule m
ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  v = f32[16,4] parameter(2)
  d1 = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[8,4] dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[8,4] add(d1, d2)
}
)");
  ASSERT_NE(m, nullptr);
  auto pass = CreateOutputFusion();
  auto sites = pass->FindSites(*m);
  ASSERT_TRUE(sites.ok());
  ASSERT_EQ(sites->size(), 2u);
  auto before = testing::RunSeeded(*m, 2);
  auto report = pass->Apply(*m, *sites, {1, 1});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->applied, 1);
  EXPECT_EQ(report->stale.size(), 1u);
  auto after = testing::RunSeeded(*m, 2);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(SameBits(*before, *after), "");
}

// The kernel against the unfused module, bit for bit, at 1 and 2 threads, and run as an output
// fusion (not the unfused fallback).
void ExpectSameBitsAsUnfused(const std::string& text) {
  auto unfused = Parse(text);
  auto fused = Parse(text);
  ASSERT_TRUE(unfused && fused);
  FuseWithEpilogues(*fused);
  ASSERT_EQ(CountOutputFusions(*fused), 1) << PrintModule(*fused);
  for (int threads : {1, 2}) {
    auto want = testing::RunSeeded(*unfused, 7, threads);
    const rt::FusionKernelStats s0 = rt::GetFusionKernelStats();
    auto got = testing::RunSeeded(*fused, 7, threads);
    const rt::FusionKernelStats s1 = rt::GetFusionKernelStats();
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(SameBits(*want, *got), "") << text << "threads " << threads;
    EXPECT_EQ(s1.output_runs - s0.output_runs, 1);
    EXPECT_EQ(s1.fallback_runs, s0.fallback_runs);
  }
}

// The module's dot or convolution fused with its epilogue, `keys` on the kOutput fusion's
// backend_config, run at 2 threads.
rt::Value FusedWithKeys(const std::string& text, const char* keys) {
  auto fused = Parse(text);
  FuseWithEpilogues(*fused);
  Instruction* root = fused->entry()->root();
  EXPECT_EQ(root->attrs().fusion_kind, FusionKind::kOutput);
  root->attrs().backend_config = keys;
  root->attrs().has_backend_config = true;
  auto got = testing::RunSeeded(*fused, 7, 2);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? std::move(*got) : rt::Value{};
}

TEST(OutputFusionKernel, SameBitsAsTheDotThenTheEpilogue) {
  ExpectSameBitsAsUnfused(DenseLayer(0, 16, 64, 32));    // few rows: column mode
  ExpectSameBitsAsUnfused(DenseLayer(0, 64, 512, 256));  // column mode, wide C
  ExpectSameBitsAsUnfused(DenseLayer(0, 301, 203, 97));  // row mode, ragged edges
  ExpectSameBitsAsUnfused(DenseLayer(0, 3, 40, 20));     // GEMV-like few rows
  ExpectSameBitsAsUnfused(DenseLayer(0, 70, 3, 50));     // narrow C (run transposed)
  ExpectSameBitsAsUnfused(DenseLayer(4, 33, 65, 47));    // batched
  ExpectSameBitsAsUnfused(DenseLayer(0, 40, 24, 16, "f64"));  // Eigen's GEMM
  ExpectSameBitsAsUnfused(DenseLayer(0, 40, 24, 16, "bf16"));  // widened operands, copied C
  // A rank-0 dot: the epilogue reads the result as a scalar, after the dot wrote it.
  ExpectSameBitsAsUnfused(R"(
HloModule scalar_dot
ENTRY main {
  x = f32[300] parameter(0)
  y = f32[300] parameter(1)
  b = f32[] parameter(2)
  d = f32[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  s = f32[] add(d, b)
  ROOT t = f32[] tanh(s)
}
)");
}

// conv + per-feature scale and shift + relu6 (a batch-norm'd convolution block), `extra` more
// attributes on the convolution.
std::string ConvBlock(const std::string& in, const std::string& kernel, const std::string& out, int64_t features,
                      const std::string& conv_attrs, int64_t feature_dim, const std::string& type = "f32") {
  std::string text = R"(
HloModule conv
ENTRY main {
  x = $T[$IN] parameter(0)
  w = $T[$K] parameter(1)
  s = $T[$F] parameter(2)
  t = $T[$F] parameter(3)
  c = $T[$OUT] convolution(x, w), $ATTRS
  bs = $T[$OUT] broadcast(s), dimensions={$FD}
  bt = $T[$OUT] broadcast(t), dimensions={$FD}
  m = $T[$OUT] multiply(c, bs)
  a = $T[$OUT] add(m, bt)
  z = $T[] constant(0)
  bz = $T[$OUT] broadcast(z), dimensions={}
  six = $T[] constant(6)
  b6 = $T[$OUT] broadcast(six), dimensions={}
  mx = $T[$OUT] maximum(a, bz)
  ROOT r = $T[$OUT] minimum(mx, b6)
}
)";
  return absl::StrReplaceAll(text, {{"$IN", in}, {"$K", kernel}, {"$OUT", out}, {"$F", absl::StrCat(features)},
                                    {"$ATTRS", conv_attrs}, {"$FD", absl::StrCat(feature_dim)}, {"$T", type}});
}

TEST(OutputFusionPass, FusesAConvolutionIntoItsElementwiseConsumer) {
  auto m = Parse(ConvBlock("2,9,9,8", "3,3,8,16", "2,9,9,16", 16,
                           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3));
  ASSERT_NE(m, nullptr);
  std::vector<DecisionSite> sites = FuseWithEpilogues(*m);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].id, "epilogue:c");
  EXPECT_EQ(sites[0].rule, "conv_epilogue");
  EXPECT_EQ(CountOutputFusions(*m), 1);
  // The round trip keeps the kOutput fusion.
  auto again = Parse(PrintModule(*m));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(CountOutputFusions(*again), 1);
}

TEST(OutputFusionKernel, SameBitsAsTheConvolutionThenTheEpilogue) {
  const std::string nhwc = "dim_labels=b01f_01io->b01f";
  // Pointwise, 64+ features: the GEMM's parts go to the epilogue as they finish.
  ExpectSameBitsAsUnfused(ConvBlock("2,12,12,24", "1,1,24,96", "2,12,12,96", 96, "window={size=1x1}, " + nhwc, 3));
  // Pointwise with few features: the epilogue after the convolution.
  ExpectSameBitsAsUnfused(ConvBlock("2,12,12,24", "1,1,24,16", "2,12,12,16", 16, "window={size=1x1}, " + nhwc, 3));
  // im2col tiles (stride 2, padding): runs of whole output rows per tile.
  ExpectSameBitsAsUnfused(ConvBlock("3,17,15,8", "3,3,8,20", "3,9,8,20", 20,
                                    "window={size=3x3 stride=2x2 pad=1_1x1_1}, " + nhwc, 3));
  // Depthwise: per output row.
  ExpectSameBitsAsUnfused(ConvBlock("2,11,13,32", "3,3,1,32", "2,11,13,32", 32,
                                    "window={size=3x3 pad=1_1x1_1}, " + nhwc + ", feature_group_count=32", 3));
  // Grouped (not depthwise): the epilogue after the convolution.
  ExpectSameBitsAsUnfused(ConvBlock("2,9,9,16", "3,3,4,32", "2,9,9,32", 32,
                                    "window={size=3x3 pad=1_1x1_1}, " + nhwc + ", feature_group_count=4", 3));
  // Few output rows, long reduction: wide-k.
  ExpectSameBitsAsUnfused(ConvBlock("1,4,4,256", "3,3,256,8", "1,2,2,8", 8, "window={size=3x3}, " + nhwc, 3));
  // NCHW: the plane path's GEMM parts in the result's own layout (stride 1; stride 2 with
  // gathered panels and enough features for several row panels), and a form with no plane path
  // (base dilation): the result transposed into place, then the epilogue.
  ExpectSameBitsAsUnfused(ConvBlock("2,8,10,10", "16,8,3,3", "2,16,10,10", 16,
                                    "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 1));
  ExpectSameBitsAsUnfused(ConvBlock("2,16,21,20", "56,16,3,3", "2,56,11,10", 56,
                                    "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01", 1));
  ExpectSameBitsAsUnfused(ConvBlock("2,8,6,6", "16,8,3,3", "2,16,11,11", 16,
                                    "window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=bf01_oi01->bf01", 1));
  // f64 (Eigen's GEMM per tile).
  ExpectSameBitsAsUnfused(ConvBlock("2,9,9,8", "3,3,8,16", "2,9,9,16", 16, "window={size=3x3 pad=1_1x1_1}, " + nhwc,
                                    3, "f64"));
}

TEST(OutputFusionKernel, ConvolutionAlgorithmsOnTheFusionKeepTheirBits) {
  // A tuned algorithm on the fusion gives the bits of the same algorithm on the bare convolution.
  const std::string text = ConvBlock("2,10,10,8", "3,3,8,24", "2,10,10,24", 24,
                                     "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", 3);
  for (const char* keys : {R"({"hlox_conv_algo":1})", R"({"hlox_conv_algo":2})", R"({"hlox_threads":1})"}) {
    auto unfused = Parse(text);
    ASSERT_NE(unfused, nullptr);
    for (const auto& i : unfused->entry()->instructions()) {
      if (i->opcode() != Opcode::kConvolution) continue;
      i->attrs().backend_config = keys;
      i->attrs().has_backend_config = true;
    }
    auto want = testing::RunSeeded(*unfused, 7, 2);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ(SameBits(*want, FusedWithKeys(text, keys)), "") << keys;
  }
}

TEST(OutputFusionKernel, GemmKnobsOnTheFusionKeepTheBits) {
  const std::string text = DenseLayer(0, 301, 203, 97);
  auto unfused = Parse(text);
  ASSERT_NE(unfused, nullptr);
  auto want = testing::RunSeeded(*unfused, 7, 2);
  ASSERT_TRUE(want.ok());
  for (const char* keys : {R"({"hlox_gemm_schedule":2})", R"({"hlox_gemm_schedule":1,"hlox_gemm_mc":8})",
                           R"({"hlox_gemm_order":1})", R"({"hlox_threads":1})"}) {
    EXPECT_EQ(SameBits(*want, FusedWithKeys(text, keys)), "") << keys;
  }
}

TEST(OutputFusionKernel, XlaStyleOutputFusionRunsWithoutFallback) {
  // An XLA kOutput fusion as XLA's CPU backend writes one (dot + addend), parsed as is.
  auto m = Parse(R"(
HloModule m
fused {
  p0 = f32[32,48] parameter(0)
  p1 = f32[48,24] parameter(1)
  p2 = f32[32,24] parameter(2)
  d = f32[32,24] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT a = f32[32,24] add(d, p2)
}
ENTRY main {
  x = f32[32,48] parameter(0)
  w = f32[48,24] parameter(1)
  y = f32[32,24] parameter(2)
  ROOT f = f32[32,24] fusion(x, w, y), kind=kOutput, calls=fused
}
)");
  ASSERT_NE(m, nullptr);
  const rt::FusionKernelStats s0 = rt::GetFusionKernelStats();
  auto got = testing::RunSeeded(*m, 3);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(rt::GetFusionKernelStats().output_runs - s0.output_runs, 1);
  EXPECT_EQ(rt::GetFusionKernelStats().fallback_runs, s0.fallback_runs);
}

}  // namespace
}  // namespace hlox
