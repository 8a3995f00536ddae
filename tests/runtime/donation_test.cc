// In-place donation (runtime/core/executor_donation.h): results must be bit-identical with donation
// on and off, on odd cases built to break an unsafe donation (a fusion reading its dying operand
// transposed, reversed or broadcast; multi-output fusions; views; values read again later;
// while loops) checked against plain references, and on corpus modules before and after the
// default pass pipeline (which makes fusions). Donation must also lower the peak of a chain.
#include <cmath>
#include <cstring>
#include <filesystem>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "passes/pipeline.h"
#include "runtime/core/executor.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::S;
using testing::ToDoubles;
using testing::Uniform;

struct Outcome {
  std::vector<BufferPtr> leaves;
  int64_t peak = 0;
};

Outcome RunWith(const Module& m, const std::vector<Value>& args, bool donate, int threads = 1) {
  ExecOptions o;
  o.threads = threads;
  o.seed = 5;
  o.donate = donate;
  Outcome out;
  auto ex = Executor::Create(m, o);
  EXPECT_TRUE(ex.ok()) << ex.status().message();
  if (!ex.ok()) return out;
  RunStats stats;
  auto v = (*ex)->Run(args, &stats);
  EXPECT_TRUE(v.ok()) << m.name() << ": " << v.status().message();
  if (!v.ok()) return out;
  v->Flatten(&out.leaves);
  out.peak = stats.peak_bytes;
  return out;
}

// Runs with donation off and on (1 and 2 threads) and requires the same bits; returns the
// donated run's outcome (1 thread) and the plain one's through *plain.
Outcome SameBits(const Module& m, const std::vector<Value>& args, Outcome* plain = nullptr) {
  Outcome off = RunWith(m, args, false);
  Outcome on = RunWith(m, args, true);
  Outcome on2 = RunWith(m, args, true, 2);
  EXPECT_EQ(off.leaves.size(), on.leaves.size()) << m.name();
  EXPECT_EQ(off.leaves.size(), on2.leaves.size()) << m.name();
  for (size_t i = 0; i < off.leaves.size() && i < on.leaves.size() && i < on2.leaves.size(); ++i) {
    EXPECT_EQ(off.leaves[i]->byte_size(), on.leaves[i]->byte_size());
    if (off.leaves[i]->byte_size() != on.leaves[i]->byte_size() ||
        off.leaves[i]->byte_size() != on2.leaves[i]->byte_size()) {
      continue;
    }
    EXPECT_EQ(std::memcmp(off.leaves[i]->data(), on.leaves[i]->data(), off.leaves[i]->byte_size()), 0)
        << m.name() << " output " << i;
    EXPECT_EQ(std::memcmp(off.leaves[i]->data(), on2.leaves[i]->data(), off.leaves[i]->byte_size()), 0)
        << m.name() << " output " << i << " (2 threads)";
  }
  if (plain != nullptr) *plain = off;
  return on;
}

std::vector<double> Doubles(const BufferPtr& b) { return ToDoubles(Value::Array(b)); }

// A fusion that reads its dying operand transposed and reversed next to the element itself
// (same shape as the output: a donation would overwrite elements it has yet to read), and one
// that gets the same value twice, once read in place and once transposed.
TEST(DonationTest, FusionReadingOtherPositionsIsNotDonated) {
  auto m = testing::ParseOrFail(R"(HloModule t
fused {
  p = f32[48,48] parameter(0)
  t = f32[48,48] transpose(p), dimensions={1,0}
  r = f32[48,48] reverse(p), dimensions={0}
  a = f32[48,48] add(t, p)
  ROOT s = f32[48,48] subtract(a, r)
}
fused_twice {
  p = f32[256,256] parameter(0)
  q = f32[256,256] parameter(1)
  t = f32[256,256] transpose(q), dimensions={1,0}
  ROOT a = f32[256,256] add(p, t)
}
ENTRY e {
  x = f32[48,48] parameter(0)
  y = f32[48,48] exponential(x)
  f = f32[48,48] fusion(y), kind=kLoop, calls=fused
  w = f32[256,256] parameter(1)
  z = f32[256,256] exponential(w)
  g = f32[256,256] fusion(z, z), kind=kLoop, calls=fused_twice
  ROOT r = (f32[48,48], f32[256,256]) tuple(f, g)
}
)");
  ASSERT_NE(m, nullptr);
  Value x = MakeArray(S("f32[48,48]"), Uniform(1, -1, 1));
  Value w = MakeArray(S("f32[256,256]"), Uniform(4, -1, 1));
  Outcome on = SameBits(*m, {x, w});
  ASSERT_EQ(on.leaves.size(), 2u);
  std::vector<double> xs = ToDoubles(x), got = Doubles(on.leaves[0]);
  for (int i = 0; i < 48; ++i) {
    for (int j = 0; j < 48; ++j) {
      double want = std::exp(xs[j * 48 + i]) + std::exp(xs[i * 48 + j]) - std::exp(xs[(47 - i) * 48 + j]);
      ASSERT_NEAR(got[i * 48 + j], want, 1e-4) << i << "," << j;
    }
  }
  std::vector<double> ws = ToDoubles(w), twice = Doubles(on.leaves[1]);
  for (int i = 0; i < 256; ++i) {
    for (int j = 0; j < 256; ++j) {
      ASSERT_NEAR(twice[i * 256 + j], std::exp(ws[i * 256 + j]) + std::exp(ws[j * 256 + i]), 1e-4) << i << "," << j;
    }
  }
}

// Elementwise chains, a value read twice, a broadcast, select, a multi-output fusion, views
// and a while loop: every result is checked against a plain reference.
TEST(DonationTest, ElementwiseChainsMatchReference) {
  auto m = testing::ParseOrFail(R"(HloModule c
fused2 {
  p0 = f32[4096] parameter(0)
  p1 = f32[4096] parameter(1)
  m = f32[4096] multiply(p0, p1)
  n = f32[4096] negate(p0)
  ROOT t = (f32[4096], f32[4096]) tuple(m, n)
}
fusedb {
  q = f32[4096] parameter(0)
  c = f32[] parameter(1)
  b = f32[4096] broadcast(c), dimensions={}
  ROOT a = f32[4096] add(q, b)
}
cond {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4096] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[4096] broadcast(h), dimensions={}
  w = f32[4096] multiply(v, hb)
  ROOT r = (s32[], f32[4096]) tuple(i2, w)
}
ENTRY e {
  x = f32[4096] parameter(0)
  e1 = f32[4096] exponential(x)
  t1 = f32[4096] tanh(e1)
  sq = f32[4096] multiply(t1, t1)
  d = f32[4096] add(sq, e1)
  rs = f32[64,64] reshape(d)
  ng = f32[64,64] negate(rs)
  back = f32[4096] reshape(ng)
  both = (f32[4096], f32[4096]) fusion(back, d), kind=kLoop, calls=fused2
  g0 = f32[4096] get-tuple-element(both), index=0
  g1 = f32[4096] get-tuple-element(both), index=1
  cst = f32[] constant(2)
  fb = f32[4096] fusion(g0, cst), kind=kLoop, calls=fusedb
  p = pred[4096] compare(fb, g1), direction=GT
  sel = f32[4096] select(p, fb, g1)
  zero = s32[] constant(0)
  init = (s32[], f32[4096]) tuple(zero, sel)
  loop = (s32[], f32[4096]) while(init), condition=cond, body=body
  lv = f32[4096] get-tuple-element(loop), index=1
  ROOT out = (f32[4096], f32[4096], f32[4096]) tuple(lv, g1, x)
}
)");
  ASSERT_NE(m, nullptr);
  Value x = MakeArray(S("f32[4096]"), Uniform(2, -2, 2));
  Outcome on = SameBits(*m, {x});
  ASSERT_EQ(on.leaves.size(), 3u);
  std::vector<double> xs = ToDoubles(x), lv = Doubles(on.leaves[0]), g1 = Doubles(on.leaves[1]),
                      xo = Doubles(on.leaves[2]);
  for (int i = 0; i < 4096; ++i) {
    const double e1 = std::exp(xs[i]), t1 = std::tanh(e1), d = t1 * t1 + e1, back = -d;
    const double m0 = back * d, n1 = -back, fb = m0 + 2;
    const double sel = fb > n1 ? fb : n1;
    ASSERT_NEAR(lv[i], sel * 0.125, 1e-4 * (1 + std::fabs(sel))) << i;
    ASSERT_NEAR(g1[i], n1, 1e-4 * (1 + std::fabs(n1))) << i;
    ASSERT_EQ(xo[i], xs[i]) << "the entry parameter must stay intact: " << i;
  }
}

// A chain of large elementwise ops while the input stays live: with donation each op writes
// into its dying operand, so the peak is the input plus one buffer instead of plus two.
TEST(DonationTest, LowersPeakOfAChain) {
  auto m = testing::ParseOrFail(R"(HloModule p
ENTRY e {
  x = f32[1048576] parameter(0)
  a = f32[1048576] exponential(x)
  b = f32[1048576] tanh(a)
  c = f32[1048576] add(b, b)
  ROOT d = f32[1048576] add(c, x)
}
)");
  ASSERT_NE(m, nullptr);
  Value x = MakeArray(S("f32[1048576]"), Uniform(3, -1, 1));
  Outcome plain;
  Outcome on = SameBits(*m, {x}, &plain);
  const int64_t mb4 = int64_t{4} << 20;
  EXPECT_EQ(plain.peak, 3 * mb4);
  EXPECT_EQ(on.peak, 2 * mb4);
  std::vector<double> xs = ToDoubles(x), got = Doubles(on.leaves[0]);
  for (int64_t i = 0; i < 1048576; i += 997) {
    ASSERT_NEAR(got[i], 2 * std::tanh(std::exp(xs[i])) + xs[i], 1e-5) << i;
  }
}

// Corpus modules as they are and after the default pipeline (fusions), donation on vs off.
TEST(DonationTest, CorpusModulesSameBits) {
  HLOX_REQUIRE_CORPUS();
  const char* names[] = {"hloenv_toy_nn_loss.hlo", "hloenv_mlp_regression_train_step.hlo",
                         "gh_linear_adam.hlo", "hloenv_maml_flax_train_step.hlo",
                         "alpa_embed_sgd_spmd_post.hlo", "hloenv_gans_normal.hlo",
                         "alpa_truncated_normal_post.hlo", "hloenv_neural_tangents_kernel.hlo"};
  int checked = 0;
  for (const char* name : names) {
    const std::string path = hlox::testing::CorpusDir() + "/" + name;
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(name);
    auto m = ParseModuleFile(path);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<Value> args = MakeSeededInputs(**m, 5);
    SameBits(**m, args);
    auto opt = RunPipeline(**m, "default", {});
    ASSERT_TRUE(opt.ok()) << opt.status().message();
    SameBits(**opt, args);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace hlox::rt
