// Planning-only peak memory (runtime/core/memory_plan.h): the figure the worker compares with a
// job's budget before running anything. Checked against hand-counted liveness and against the
// executor's own measured peak, which it must never undercount (donation off: the plan is an
// upper bound).
#include "runtime/core/memory_plan.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/executor.h"

namespace hlox::rt {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text, "<test>");
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

// The executor's measured peak live bytes for one run on seeded inputs, donation off.
int64_t MeasuredPeak(const Module& m) {
  ExecOptions o;
  o.donate = false;
  auto exec = Executor::Create(m, o);
  EXPECT_TRUE(exec.ok()) << exec.status();
  if (!exec.ok()) return -1;
  RunStats stats;
  auto out = (*exec)->Run(MakeSeededInputs(m, 0), &stats);
  EXPECT_TRUE(out.ok()) << out.status();
  return stats.peak_bytes;
}

TEST(MemoryPlan, ChainCountsEachValueUntilItsLastUse) {
  // p (4 KiB) lives throughout; a dies at b, b at c: at most p + two 4 KiB values at once.
  auto m = Parse(R"(HloModule chain
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] add(p, p)
  b = f32[1024] multiply(a, a)
  ROOT c = f32[1024] add(b, b)
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(PlannedPeakBytes(*m), 3 * 4096);
  EXPECT_EQ(PlannedPeakBytes(*m->entry(), false), 2 * 4096);
  EXPECT_GE(PlannedPeakBytes(*m), MeasuredPeak(*m));
}

TEST(MemoryPlan, ViewsShareTheirOperandsBuffer) {
  auto m = Parse(R"(HloModule views
ENTRY e {
  p = f32[64,64] parameter(0)
  a = f32[64,64] exponential(p)
  r = f32[4096] reshape(a)
  t = (f32[4096], f32[64,64]) tuple(r, p)
  ROOT g = f32[4096] get-tuple-element(t), index=0
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(PlannedPeakBytes(*m), 2 * 16384);  // p and a; the views add nothing
  EXPECT_GE(PlannedPeakBytes(*m), MeasuredPeak(*m));
}

TEST(MemoryPlan, WhileAddsItsBodysOwnPeak) {
  auto m = Parse(R"(HloModule loop
body {
  s = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[256] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[256] multiply(x, x)
  z = f32[256] add(y, x)
  ROOT n = (s32[], f32[256]) tuple(j, z)
}
cond {
  s = (s32[], f32[256]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
ENTRY e {
  x = f32[256] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[256]) tuple(zero, x)
  ROOT w = (s32[], f32[256]) while(t), condition=cond, body=body
})");
  ASSERT_TRUE(m);
  const int64_t body = PlannedPeakBytes(*m->FindComputation("body"), false);
  // one, j, y and z: y and z live together with j (and the constant for the whole body).
  EXPECT_EQ(body, 4 + 4 + 1024 + 1024);
  // x and the constant for the whole run, the while's result, plus the body while it runs.
  EXPECT_EQ(PlannedPeakBytes(*m), 1024 + 4 + (4 + 1024) + body);
  EXPECT_GE(PlannedPeakBytes(*m), MeasuredPeak(*m));
}

TEST(MemoryPlan, HugeBroadcastIsPlannedWithoutAllocating) {
  auto m = Parse(R"(HloModule huge
ENTRY e {
  c = f32[] constant(1)
  ROOT b = f32[16,1024,1024,1024] broadcast(c), dimensions={}
})");
  ASSERT_TRUE(m);
  EXPECT_EQ(PlannedPeakBytes(*m), (int64_t{64} << 30) + 4);
}

}  // namespace
}  // namespace hlox::rt
