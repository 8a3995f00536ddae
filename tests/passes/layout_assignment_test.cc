// layout-assignment (passes/xla/layout_assignment.cc): which forms each convolution is offered,
// that every choice computes what the module computed (forward, strided, input- and
// weight-gradient forms, grouped, 1-D and 3-D), the labels each form gives, and that in the
// default pipeline a chain of convolutions taking one form keeps its activations in it (the
// transposes between them cancel). Also simplify's reduce_transpose, which that relies on.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pipeline.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/passes/xla_test_util.h"

namespace hlox {
namespace {

constexpr char kLabel[] = "layout-assignment";

using testing::Count;
using testing::Has;
using testing::RunChecked;

std::vector<DecisionSite> Sites(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  auto pass = CreatePassByLabel(kLabel);
  EXPECT_TRUE(pass.ok());
  auto sites = (*pass)->FindSites(**m);
  EXPECT_TRUE(sites.ok()) << sites.status();
  return sites.ok() ? *sites : std::vector<DecisionSite>{};
}

// `text` through the default pipeline without fusion, with `decisions`; checked to compute
// what `text` computes on seeded inputs. The printed module, "" on failure.
std::string NoFuseChecked(const char* text, const PipelineDecisions& decisions = {}) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return "";
  auto out = RunPipeline(**m, "no-fuse", decisions);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return "";
  const std::string printed = PrintModule(**out);
  auto before = testing::RunSeeded(**m, 3);
  auto after = testing::RunSeeded(**out, 3);
  EXPECT_TRUE(before.ok() && after.ok()) << printed;
  if (!before.ok() || !after.ok()) return "";
  EXPECT_EQ(testing::CompareValues(*before, *after), "") << printed;
  return printed;
}

// ResNet-style NCHW chain: a stride-1 convolution, ReLU, a stride-2 one, a spatial mean.
constexpr char kChain[] = R"(HloModule chain
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,3,9,9] parameter(0)
  w1 = f32[8,3,3,3] parameter(1)
  w2 = f32[6,8,3,3] parameter(2)
  c1 = f32[2,8,9,9] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  z = f32[] constant(0)
  zb = f32[2,8,9,9] broadcast(z), dimensions={}
  r = f32[2,8,9,9] maximum(c1, zb)
  c2 = f32[2,6,5,5] convolution(r, w2), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT s = f32[2,6] reduce(c2, z), dimensions={2,3}, to_apply=add
}
)";

// The same graph in NHWC, as JAX and TensorFlow write it.
constexpr char kChainNhwc[] = R"(HloModule chain_nhwc
ENTRY main {
  x = f32[2,9,9,3] parameter(0)
  w1 = f32[3,3,3,8] parameter(1)
  w2 = f32[3,3,8,6] parameter(2)
  c1 = f32[2,9,9,8] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  z = f32[] constant(0)
  zb = f32[2,9,9,8] broadcast(z), dimensions={}
  r = f32[2,9,9,8] maximum(c1, zb)
  ROOT c2 = f32[2,5,5,6] convolution(r, w2), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
)";

TEST(LayoutAssignment, OffersTheFormsAConvolutionIsNotIn) {
  std::vector<DecisionSite> nchw = Sites(kChain);
  ASSERT_EQ(nchw.size(), 2u);
  for (const DecisionSite& s : nchw) {
    EXPECT_EQ(s.rule, "conv_layout");
    EXPECT_EQ(s.choices, (std::vector<std::string>{"keep", "channels_last"}));
    EXPECT_EQ(s.default_choice, 0);
  }
  std::vector<DecisionSite> nhwc = Sites(kChainNhwc);
  ASSERT_EQ(nhwc.size(), 2u);
  EXPECT_EQ(nhwc[0].choices, (std::vector<std::string>{"keep", "channels_first"}));
  // The form the convolution is in is a feature (1 channels-last, 2 channels-first).
  EXPECT_EQ(nhwc[0].features.size(), nchw[0].features.size());
  EXPECT_NE(nhwc[0].features, nchw[0].features);
}

TEST(LayoutAssignment, EachFormRelabelsAndComputesTheSame) {
  const DecisionVector both = {1, 1};
  const std::string last = RunChecked(kLabel, kChain, &both);
  EXPECT_EQ(Count(last, "dim_labels=b01f_01io->b01f"), 2) << last;
  const std::string first = RunChecked(kLabel, kChainNhwc, &both);
  EXPECT_EQ(Count(first, "dim_labels=bf01_oi01->bf01"), 2) << first;
  // One convolution only: the other keeps its labels.
  const DecisionVector one = {0, 1};
  const std::string mixed = RunChecked(kLabel, kChain, &one);
  EXPECT_EQ(Count(mixed, "dim_labels=b01f_01io->b01f"), 1) << mixed;
  EXPECT_EQ(Count(mixed, "dim_labels=bf01_oi01->bf01"), 1) << mixed;
}

// Training forms as PyTorch exports them (input gradient: io kernel with reversal; weight
// gradient: fb01 input, the output gradient as the kernel), a grouped convolution with window
// dilation, and 1-D and 3-D convolutions: every form of every one computes the same.
constexpr char kForms[] = R"(HloModule forms
ENTRY main {
  x = f32[2,4,7,6] parameter(0)
  g = f32[2,5,7,6] parameter(1)
  w = f32[5,4,3,3] parameter(2)
  dx = f32[2,4,7,6] convolution(g, w), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=bf01_io01->bf01
  dw = f32[5,4,3,3] convolution(x, g), window={size=7x6 pad=1_1x1_1}, dim_labels=fb01_io01->fb01
  wg = f32[6,2,3,3] parameter(3)
  gr = f32[2,6,7,6] convolution(x, wg), window={size=3x3 pad=2_2x1_1 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, feature_group_count=2
  s = f32[3,4,11] parameter(4)
  ws = f32[5,4,3] parameter(5)
  c1d = f32[3,5,5] convolution(s, ws), window={size=3 stride=2}, dim_labels=bf0_oi0->bf0
  v = f32[1,3,4,5,6] parameter(6)
  wv = f32[2,2,2,6,4] parameter(7)
  c3d = f32[1,3,4,5,4] convolution(v, wv), window={size=2x2x2 pad=0_1x1_0x0_1}, dim_labels=b012f_012io->b012f
  ROOT t = (f32[2,4,7,6], f32[5,4,3,3], f32[2,6,7,6], f32[3,5,5], f32[1,3,4,5,4]) tuple(dx, dw, gr, c1d, c3d)
}
)";

TEST(LayoutAssignment, TrainingGroupedOneAndThreeDimensionalForms) {
  std::vector<DecisionSite> sites = Sites(kForms);
  ASSERT_EQ(sites.size(), 5u);
  // Every combination of each site's first and last choice.
  for (int pick : {1, 2}) {
    DecisionVector d;
    for (const DecisionSite& s : sites) d.push_back(std::min<int>(pick, static_cast<int>(s.choices.size()) - 1));
    const std::string out = RunChecked(kLabel, kForms, &d, testing::PassCheck{.scale = 1.0, .seeds = {5, 6}});
    EXPECT_FALSE(out.empty());
  }
  // The weight gradient orders its input (the activations, fb01) as the forward convolution
  // would: batch first, spatial, feature last, i.e. f01b.
  const DecisionVector last = {1, 1, 1, 1, 0};
  const std::string out = RunChecked(kLabel, kForms, &last);
  EXPECT_TRUE(Has(out, "dim_labels=f01b_01io->f01b")) << out;
}

// The default pipeline without fusion, both convolutions channels-last: transposes only where
// the chain meets the outside (x, the two kernels); the ReLU, the second convolution and the
// reduce read the channels-last values (reshape-mover sinks the transpose through the ReLU,
// transpose pairs cancel, reduce_transpose folds the last one).
TEST(LayoutAssignment, AChainInOneFormPaysTransposesOnlyAtItsEnds) {
  PipelineDecisions d;
  d["layout-assignment#0"] = {1, 1};
  const std::string text = NoFuseChecked(kChain, d);
  EXPECT_EQ(Count(text, " transpose("), 3) << text;
  EXPECT_EQ(Count(text, "dim_labels=b01f_01io->b01f"), 2) << text;
  // Keep (the default) leaves the module's convolutions as they were.
  const std::string kept = NoFuseChecked(kChain);
  EXPECT_FALSE(kept.empty());
  EXPECT_EQ(Count(kept, " transpose("), 0);
}

// Dots: a decode-step projection whose result is transposed (swapped, the transposes cancel),
// a batched dot with two free dimensions on each side whose user is a tuple, and a
// matrix-vector product (no free dimension on one side: no site).
constexpr char kDots[] = R"(HloModule dots
ENTRY main {
  x = f32[4,64] parameter(0)
  w = f32[96,64] parameter(1)
  d = f32[4,96] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  t = f32[96,4] transpose(d), dimensions={1,0}
  a = f32[3,5,2,7] parameter(2)
  b = f32[3,7,6,4] parameter(3)
  bd = f32[3,5,2,6,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={3}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  v = f32[64] parameter(4)
  mv = f32[4] dot(x, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[96,4], f32[3,5,2,6,4], f32[4]) tuple(t, bd, mv)
}
)";

TEST(LayoutAssignment, DotsOfferTheTransposedResult) {
  std::vector<DecisionSite> sites = Sites(kDots);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].rule, "dot_layout");
  EXPECT_EQ(sites[0].choices, (std::vector<std::string>{"keep", "transposed_result"}));
  EXPECT_EQ(sites[0].default_choice, 1);  // its only user transposes it into the swapped order
  EXPECT_EQ(sites[0].features.back(), 1.0f);
  EXPECT_EQ(sites[1].default_choice, 0);  // a tuple reads it
  EXPECT_EQ(sites[1].features.back(), 0.0f);
  const DecisionVector both = {1, 1};
  const std::string out = RunChecked(kLabel, kDots, &both);
  EXPECT_TRUE(Has(out, "dot(%w, %x)")) << out;
  EXPECT_TRUE(Has(out, "f32[3,6,4,5,2] dot(%b, %a)")) << out;
  // In the default pipeline the swapped dot writes what the transpose wanted: no transpose left.
  const std::string text = NoFuseChecked(kDots);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(Count(text, " transpose("), 0) << text;
}

// PyTorch transposes a weight gradient twice (the two cancel in the simplifier): the readers
// see the dot's own order, so swapping would leave a transpose. Default keep; a chain that
// composes to the swapped order (three transposes) is swapped.
constexpr char kChains[] = R"(HloModule chains
ENTRY main {
  x = f32[8,16] parameter(0)
  g = f32[8,12] parameter(1)
  d = f32[16,12] dot(x, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t1 = f32[12,16] transpose(d), dimensions={1,0}
  t2 = f32[16,12] transpose(t1), dimensions={1,0}
  e = f32[16,12] dot(x, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  u1 = f32[12,16] transpose(e), dimensions={1,0}
  u2 = f32[16,12] transpose(u1), dimensions={1,0}
  u3 = f32[12,16] transpose(u2), dimensions={1,0}
  ROOT r = (f32[16,12], f32[12,16]) tuple(t2, u3)
}
)";

TEST(LayoutAssignment, DotDefaultLooksThroughTransposeChains) {
  std::vector<DecisionSite> sites = Sites(kChains);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].default_choice, 0);
  EXPECT_EQ(sites[1].default_choice, 1);
  const std::string text = NoFuseChecked(kChains);
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(Count(text, " transpose("), 0) << text;
}

constexpr char kReduceTranspose[] = R"(HloModule rt
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[2,5,6,3] parameter(0)
  t = f32[2,3,5,6] transpose(x), dimensions={0,3,1,2}
  z = f32[] constant(0)
  keep_order = f32[3] reduce(t, z), dimensions={0,2,3}, to_apply=add
  u = f32[6,5,2,3] transpose(x), dimensions={2,1,0,3}
  reorders = f32[6,5] reduce(u, z), dimensions={2,3}, to_apply=add
  ROOT r = (f32[3], f32[6,5]) tuple(keep_order, reorders)
}
)";

TEST(SimplifyReduceTranspose, FoldsWhenTheKeptDimensionsKeepTheirOrder) {
  // keep_order: kept dim 1 of t is x's dim 3 -> reduce(x, {0,1,2}). reorders: kept dims (6, 5)
  // are x's dims 2, 1, out of order -> left alone.
  const std::string out = testing::RunDefault("simplify", kReduceTranspose);
  EXPECT_TRUE(Has(out, "reduce(%x, %z), dimensions={0,1,2}")) << out;
  EXPECT_TRUE(Has(out, "reduce(%u, %z), dimensions={2,3}")) << out;
}

}  // namespace
}  // namespace hlox
