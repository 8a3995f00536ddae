// The pass-ordering agent: the default pipeline written as a pass sequence reproduces the
// default pipeline's op count; the agent never reports worse than that sequence (its first
// episode); the aggressive fusion actions fuse at least as much as the default ones.
#include <algorithm>

#include "agent/pass_order_agent.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "passes/module_util.h"
#include "passes/pass_order.h"
#include "passes/pipeline.h"

namespace hlox {
namespace {

// Two elementwise chains feeding a reduce, a duplicated subexpression for CSE, and a dead op.
constexpr const char* kModule = R"(HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[64,32] parameter(1)
  one = f32[] constant(1)
  ones = f32[64,32] broadcast(one), dimensions={}
  t0 = f32[64,32] tanh(x)
  t1 = f32[64,32] tanh(x)
  m0 = f32[64,32] multiply(t0, y)
  m1 = f32[64,32] multiply(t1, ones)
  e0 = f32[64,32] exponential(m0)
  dead = f32[64,32] negate(e0)
  s = f32[64,32] add(e0, m1)
  zero = f32[] constant(0)
  r = f32[64] reduce(s, zero), dimensions={1}, to_apply=add_f32
  n = f32[64] negate(r)
  ROOT out = (f32[64], f32[64,32]) tuple(n, s)
}
)";

int64_t Replay(const Module& m, const std::vector<std::string>& seq) {
  std::vector<std::string> menu = PassOrderMenu();
  std::unique_ptr<Module> cur = m.Clone();
  for (const std::string& item : seq) {
    int a = static_cast<int>(std::find(menu.begin(), menu.end(), item) - menu.begin());
    auto step = PassOrderApply(*cur, a);
    EXPECT_TRUE(step.ok()) << item << ": " << step.status();
    if (!step.ok()) return -1;
    cur = std::move(step->module);
  }
  return OpCount(*cur);
}

TEST(PassOrderAgent, DefaultSequenceReproducesTheDefaultPipeline) {
  auto m = ParseModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status();
  auto seq = DefaultPassSequence(**m);
  ASSERT_TRUE(seq.ok()) << seq.status();
  ASSERT_FALSE(seq->empty());
  EXPECT_EQ(std::count(seq->begin(), seq->end(), "inline"), 1);
  auto def = RunPipeline(**m, "default", {});
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(Replay(**m, *seq), OpCount(**def));
  EXPECT_LT(OpCount(**def), OpCount(**m));
}

TEST(PassOrderAgent, NeverWorseThanTheDefaultSequence) {
  auto m = ParseModule(kModule);
  ASSERT_TRUE(m.ok());
  PassOrderOptions o;
  o.episodes = 12;
  o.seed = 5;
  auto r = SearchPassOrder(**m, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->best_so_far.size(), 12u);
  EXPECT_TRUE(std::is_sorted(r->best_so_far.rbegin(), r->best_so_far.rend()));  // non-increasing
  EXPECT_LE(r->best_ops, r->default_ops);
  EXPECT_EQ(Replay(**m, r->best_sequence), r->best_ops);  // the reported sequence is real
}

TEST(PassOrderAgent, AggressiveFusionFusesAtLeastAsMuch) {
  auto m = ParseModule(kModule);
  ASSERT_TRUE(m.ok());
  int64_t plain = Replay(**m, {"simplify", "cse", "dce", "fusion"});
  int64_t all = Replay(**m, {"simplify", "cse", "dce", "fusion:all"});
  EXPECT_GT(plain, 0);
  EXPECT_LE(all, plain);
  EXPECT_LT(all, Replay(**m, {"simplify", "cse", "dce"}));
}

}  // namespace
}  // namespace hlox
