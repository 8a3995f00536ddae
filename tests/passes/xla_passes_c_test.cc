// custom-call-expander (passes/xla/custom_call_expander.cc): each AWS Neuron target expanded to
// plain HLO, computing what the runtime's kernel computes on seeded inputs (the module before
// the pass runs the kernel, the module after runs only plain HLO), shapes kept, and the cases
// it must leave alone.
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/fusion/fusion_test_util.h"
#include "tests/passes/xla_test_util.h"

namespace hlox {
namespace {

constexpr char kLabel[] = "custom-call-expander";

using testing::ApplyAll;
using testing::Count;
using testing::Has;
using testing::PassCheck;
using testing::RunChecked;
using testing::RunDefault;
using testing::SiteCount;
using Outcome = testing::PassOutcome;

// Every expansion is compared with the runtime kernel it replaces on two seeds.
Outcome ApplyAllExpander(const std::string& text, double scale = 1.0) {
  return ApplyAll(kLabel, text, PassCheck{.scale = scale, .seeds = {5, 6}});
}

constexpr char kTransfers[] = R"(HloModule t
ENTRY main {
  a = f16[4,6]{1,0} parameter(0)
  b = f32[2,3,4] parameter(1)
  same = f16[4,6]{1,0} custom-call(a), custom_call_target="AwsNeuronTransferWithStaticRing"
  reshaped = f32[6,4] custom-call(b), custom_call_target="AwsNeuronTransferWithStaticRing"
  n = f16[4,6]{1,0} negate(same)
  ROOT t = (f16[4,6]{1,0}, f32[6,4]) tuple(n, reshaped)
}
)";

TEST(CustomCallExpander, TransferBecomesOperandOrReshape) {
  Outcome o = ApplyAllExpander(kTransfers);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"transfer", "transfer"}));
  EXPECT_EQ(o.defaults, (std::vector<int>{0, 0}));
  EXPECT_FALSE(Has(o.after, "custom-call")) << o.after;
  EXPECT_TRUE(Has(o.after, "negate(%a)")) << o.after;
  EXPECT_TRUE(Has(o.after, "f32[6,4]{1,0} reshape(%b)") || Has(o.after, "f32[6,4] reshape(%b)")) << o.after;
}

constexpr char kGelus[] = R"(HloModule g
ENTRY main {
  x = f32[4,33] parameter(0)
  h = f16[2,40] parameter(1)
  g = f32[4,33] custom-call(x), custom_call_target="AwsNeuronGelu"
  gh = f16[2,40] custom-call(h), custom_call_target="AwsNeuronGelu"
  t = f32[4,33] custom-call(x), custom_call_target="AwsNeuronGeluApprxTanh"
  th = f16[2,40] custom-call(h), custom_call_target="AwsNeuronGeluApprxTanh"
  ROOT r = (f32[4,33], f16[2,40], f32[4,33], f16[2,40]) tuple(g, gh, t, th)
}
)";

TEST(CustomCallExpander, GeluAndTanhApproximation) {
  Outcome o = ApplyAllExpander(kGelus);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"gelu", "gelu", "gelu_tanh", "gelu_tanh"}));
  EXPECT_FALSE(Has(o.after, "custom-call")) << o.after;
  EXPECT_TRUE(Has(o.after, "erf(")) << o.after;
  EXPECT_TRUE(Has(o.after, "tanh(")) << o.after;
  // f16 goes through f32 and is rounded once at the end, as the kernel rounds once.
  EXPECT_TRUE(Has(o.after, "f32[2,40]{1,0} convert(%h)") || Has(o.after, "f32[2,40] convert(%h)")) << o.after;
}

// The exact and the tanh GELU differ by up to ~1e-3: an expansion with the wrong formula
// fails the comparison with the kernel (checks that the tests above can fail).
TEST(CustomCallExpander, ComparisonTellsTheTwoGelusApart) {
  auto exact = ParseModule(R"(HloModule e
ENTRY main {
  x = f32[64] parameter(0)
  three = f32[] constant(3)
  b = f32[64] broadcast(three), dimensions={}
  s = f32[64] multiply(x, b)
  ROOT g = f32[64] custom-call(s), custom_call_target="AwsNeuronGelu"
}
)");
  auto approx = ParseModule(R"(HloModule a
ENTRY main {
  x = f32[64] parameter(0)
  three = f32[] constant(3)
  b = f32[64] broadcast(three), dimensions={}
  s = f32[64] multiply(x, b)
  ROOT g = f32[64] custom-call(s), custom_call_target="AwsNeuronGeluApprxTanh"
}
)");
  ASSERT_TRUE(exact.ok() && approx.ok()) << exact.status() << approx.status();
  auto a = testing::RunSeeded(**exact, 5);
  auto b = testing::RunSeeded(**approx, 5);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(testing::CompareValues(*a, *b), "");
}

constexpr char kGeluBackward[] = R"(HloModule b
ENTRY main {
  x = f32[3,17] parameter(0)
  grad = f32[3,17] parameter(1)
  h = bf16[5,8] parameter(2)
  one = f32[3,17] custom-call(x), custom_call_target="AwsNeuronGeluBackward"
  two = f32[3,17] custom-call(grad, x), custom_call_target="AwsNeuronGeluBackward"
  half = bf16[5,8] custom-call(h), custom_call_target="AwsNeuronGeluBackward"
  ROOT r = (f32[3,17], f32[3,17], bf16[5,8]) tuple(one, two, half)
}
)";

// One operand: Phi(x) + x phi(x). Two: (grad, x), the product; swapping them changes the
// outputs, so the comparison with the kernel pins the order.
TEST(CustomCallExpander, GeluBackwardOneAndTwoOperands) {
  Outcome o = ApplyAllExpander(kGeluBackward);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"gelu_backward", "gelu_backward", "gelu_backward"}));
  EXPECT_FALSE(Has(o.after, "custom-call")) << o.after;
  EXPECT_TRUE(Has(o.after, "exponential(")) << o.after;
}

constexpr char kRmsNorms[] = R"(HloModule r
ENTRY main {
  a = f32[8,1,4]{2,1,0} parameter(0)
  wa = f32[8]{0} parameter(1)
  ea = f32[] constant(1e-05)
  na = f32[8,1,4]{2,1,0} custom-call(a, wa, ea), custom_call_target="AwsNeuronRmsNorm", backend_config="0"
  h = f16[16,6,4]{2,1,0} parameter(2)
  wh = f16[16]{0} parameter(3)
  eh = f16[] constant(0.001)
  nh = f16[16,6,4]{2,1,0} custom-call(h, wh, eh), custom_call_target="AwsNeuronRmsNorm"
  m = f32[3,5,4] parameter(4)
  wm = f32[1,5] parameter(5)
  nm = f32[3,5,4] custom-call(m, wm), custom_call_target="AwsNeuronRmsNorm", backend_config="1"
  ROOT t = (f32[8,1,4]{2,1,0}, f16[16,6,4]{2,1,0}, f32[3,5,4]) tuple(na, nh, nm)
}
)";

// dim 0 from backend_config; dim 0 found by w's size (f16, through f32); dim 1 with a [1,5]
// weight (reshaped) and the default epsilon.
TEST(CustomCallExpander, RmsNormDimEpsAndWeightShapes) {
  Outcome o = ApplyAllExpander(kRmsNorms);
  EXPECT_EQ(o.rules, (std::vector<std::string>{"rms_norm", "rms_norm", "rms_norm"}));
  EXPECT_FALSE(Has(o.after, "custom-call")) << o.after;
  EXPECT_TRUE(Has(o.after, "rsqrt(")) << o.after;
  EXPECT_TRUE(Has(o.after, "reduce(")) << o.after;
}

// The corpus's Llama shape: hidden first ([h, s, b]), w of size h, f16 with an f16 epsilon.
TEST(CustomCallExpander, RmsNormLikeTheCorpus) {
  Outcome o = ApplyAllExpander(R"(HloModule l
ENTRY main {
  x = f32[256,2,3]{2,1,0} parameter(0)
  c = f16[256,2,3]{2,1,0} convert(x)
  w = f16[256]{0} parameter(1)
  e = f16[] constant(1e-06)
  ROOT n = f16[256,2,3]{2,1,0} custom-call(c, w, e), custom_call_target="AwsNeuronRmsNorm"
}
)");
  EXPECT_EQ(o.rules, (std::vector<std::string>{"rms_norm"}));
}

TEST(CustomCallExpander, DefaultKeepsEverySite) {
  auto m = ParseModule(kGelus);
  ASSERT_TRUE(m.ok());
  auto after = RunPipeline(**m, std::string("only:") + kLabel, {});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(PrintModule(**after), PrintModule(**m));
}

TEST(CustomCallExpander, LeavesOtherCallsAlone) {
  // Another target, a side-effecting GELU, a GELU whose shape differs from its operand's, a
  // transfer that changes the element type, a non-row-major transfer that changes the shape,
  // an RMS norm whose weight matches no dimension.
  EXPECT_EQ(SiteCount(kLabel, R"(HloModule o
ENTRY main {
  x = f32[4,6] parameter(0)
  w = f32[7] parameter(1)
  y = f32[4,6]{0,1} parameter(2)
  a = f32[4,6] custom-call(x), custom_call_target="SomethingElse"
  b = f32[4,6] custom-call(x), custom_call_target="AwsNeuronGelu", custom_call_has_side_effect=true
  c = f32[24] custom-call(x), custom_call_target="AwsNeuronGelu"
  d = f16[4,6] custom-call(x), custom_call_target="AwsNeuronTransferWithStaticRing"
  e = f32[6,4] custom-call(y), custom_call_target="AwsNeuronTransferWithStaticRing"
  f = f32[4,6] custom-call(x, w), custom_call_target="AwsNeuronRmsNorm"
  ROOT t = (f32[4,6], f32[4,6], f32[24], f16[4,6], f32[6,4], f32[4,6]) tuple(a, b, c, d, e, f)
}
)"),
            0u);
}

// Random choices per site: every result verifies and computes the kernels' outputs.
TEST(CustomCallExpander, RandomChoicesPreserveOutputs) {
  std::mt19937 rng(13);
  for (const char* text : {kTransfers, kGelus, kGeluBackward, kRmsNorms}) {
    const std::string pipeline = std::string("only:") + kLabel;
    auto m = ParseModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    auto before = testing::RunSeeded(**m, 5);
    ASSERT_TRUE(before.ok()) << before.status();
    auto point = NextDecisionPoint(**m, pipeline, {});
    ASSERT_TRUE(point.ok() && point->has_value());
    for (int round = 0; round < 4; ++round) {
      DecisionVector v;
      for (size_t k = 0; k < (*point)->sites.size(); ++k) v.push_back(static_cast<int>(rng() % 2));
      auto after = RunPipeline(**m, pipeline, {{(*point)->key, v}});
      ASSERT_TRUE(after.ok()) << after.status();
      EXPECT_TRUE(VerifyModule(**after).ok()) << VerifyModule(**after);
      auto got = testing::RunSeeded(**after, 5);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(testing::CompareValues(*before, *got), "") << PrintModule(**after);
    }
  }
}

}  // namespace
}  // namespace hlox
