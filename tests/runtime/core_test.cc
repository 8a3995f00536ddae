// Runtime core: thread pool, buffers, seeded values, .npy, executor liveness, control flow and
// single-replica collectives.
#include <atomic>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/core/executor.h"
#include "runtime/core/npy.h"
#include "runtime/core/thread_pool.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::RunText;
using testing::S;
using testing::ToDoubles;
using testing::ToInts;

TEST(ThreadPoolTest, CoversRangeExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 7, 100, 1001, 65537}) {
      for (int64_t grain : {1, 16, 1000}) {
        std::vector<std::atomic<int>> hits(n);
        pool.ParallelFor(n, grain, [&](int64_t b, int64_t e) {
          ASSERT_LE(0, b);
          ASSERT_LE(b, e);
          ASSERT_LE(e, n);
          for (int64_t i = b; i < e; ++i) hits[i]++;
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << n << " " << grain;
      }
    }
  }
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.ParallelFor(10, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
    }
  });
  EXPECT_EQ(total.load(), 640);
}

TEST(BufferTest, AlignedAndReused) {
  for (int64_t n : {0, 1, 3, 1000, 1 << 20}) {
    Buffer b(Shape(PrimitiveType::kF32, {n}));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
    EXPECT_EQ(b.byte_size(), 4 * n);
  }
  const uint8_t* first;
  {
    Buffer b(Shape(PrimitiveType::kF32, {12345}));
    first = b.data();
  }
  Buffer again(Shape(PrimitiveType::kF32, {12345}));
  EXPECT_EQ(again.data(), first);  // the pool hands back the freed buffer
}

TEST(SeededTest, DeterministicAndInRange) {
  Value a = MakeSeededValue(S("f32[1000]"), 42);
  Value b = MakeSeededValue(S("f32[1000]"), 42);
  Value c = MakeSeededValue(S("f32[1000]"), 43);
  EXPECT_EQ(std::memcmp(a.array->data(), b.array->data(), 4000), 0);
  EXPECT_NE(std::memcmp(a.array->data(), c.array->data(), 4000), 0);
  double sum = 0;
  for (double v : ToDoubles(a)) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / 1000), 0.1);
  std::set<int64_t> seen;
  for (int64_t v : ToInts(MakeSeededValue(S("s32[500]"), 7))) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 8);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 8u);
  for (double v : ToDoubles(MakeSeededValue(S("bf16[300]"), 1))) {
    EXPECT_GE(v, -1.0);
    EXPECT_LE(v, 1.0);
  }
}

TEST(NpyTest, RoundTripAndErrors) {
  for (const char* shape : {"f32[2,3]", "s64[5]", "pred[4,1]", "f16[3]", "bf16[2,2]", "c64[2]", "u8[]", "s32[0,3]"}) {
    Shape s = S(shape);
    Value v = MakeSeededValue(s, 9);
    auto bytes = EncodeNpy(*v.array);
    ASSERT_TRUE(bytes.ok()) << shape;
    EXPECT_EQ((bytes->size() - v.array->byte_size()) % 64, 0u) << shape;
    auto back = ParseNpy(*bytes, s, "x.npy");
    ASSERT_TRUE(back.ok()) << shape << ": " << back.status().message();
    EXPECT_EQ(std::memcmp(back->array->data(), v.array->data(), v.array->byte_size()), 0) << shape;
  }
  Value v = MakeSeededValue(S("f32[2,3]"), 1);
  std::string bytes = *EncodeNpy(*v.array);
  EXPECT_FALSE(ParseNpy(bytes, S("f32[3,2]"), "x.npy").ok());
  EXPECT_FALSE(ParseNpy(bytes, S("s32[2,3]"), "x.npy").ok());
  EXPECT_FALSE(ParseNpy("garbage", S("f32[2,3]"), "x.npy").ok());
  EXPECT_FALSE(ParseNpy(bytes.substr(0, bytes.size() - 4), S("f32[2,3]"), "x.npy").ok());
  EXPECT_FALSE(ParseNpy(bytes.substr(0, 20), S("f32[2,3]"), "x.npy").ok());
}

TEST(ExecutorTest, LivenessKeepsPeakSmall) {
  std::string text = "HloModule m\nENTRY e {\n  p = f32[1024] parameter(0)\n";
  std::string prev = "p";
  for (int i = 0; i < 10; ++i) {
    std::string name = absl::StrCat("a", i);
    absl::StrAppend(&text, "  ", name, " = f32[1024] add(", prev, ", ", prev, ")\n");
    prev = name;
  }
  absl::StrAppend(&text, "  ROOT r = f32[1024] negate(", prev, ")\n}\n");
  auto m = testing::ParseOrFail(text);
  ASSERT_NE(m, nullptr);
  auto ex = Executor::Create(*m, {});
  ASSERT_TRUE(ex.ok());
  RunStats stats;
  Value in = MakeArray(S("f32[1024]"), [](int64_t i) { return i * 0.5; });
  auto out = (*ex)->Run({in}, &stats);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_GE(stats.peak_bytes, 2 * 4096);
  EXPECT_LE(stats.peak_bytes, 3 * 4096);
  std::vector<double> r = ToDoubles(*out);
  EXPECT_EQ(r[3], -1.5 * 1024);
}

TEST(ControlFlowTest, WhileCallConditional) {
  const char* text = R"(HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i)
  x1 = f32[] add(x, fi)
  ROOT t = (s32[], f32[]) tuple(i1, x1)
}
twice {
  a = f32[] parameter(0)
  ROOT d = f32[] add(a, a)
}
b0 {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
b1 {
  a = f32[] parameter(0)
  ROOT c = f32[] call(a), to_apply=twice
}
ENTRY e {
  z = s32[] constant(0)
  x0 = f32[] constant(0.5)
  init = (s32[], f32[]) tuple(z, x0)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  sum = f32[] get-tuple-element(w), index=1
  idx = s32[] parameter(0)
  ROOT r = f32[] conditional(idx, sum, sum), branch_computations={b0, b1}
}
)";
  auto run = [&](int32_t idx) {
    Value v = MakeArray(S("s32[]"), [&](int64_t) { return idx; });
    auto out = RunText(text, {v});
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? ToDoubles(*out)[0] : 0.0;
  };
  EXPECT_EQ(run(0), -45.5);
  EXPECT_EQ(run(1), 91.0);
  EXPECT_EQ(run(7), 91.0);   // out of range -> last branch
  EXPECT_EQ(run(-1), 91.0);
}

TEST(CollectiveTest, SingleReplicaSemantics) {
  const char* text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2,3] parameter(0)
  ar = f32[2,3] all-reduce(p), replica_groups={}, to_apply=add
  ag = f32[2,6] all-gather(ar), replica_groups={{0,1}}, dimensions={1}
  rid = u32[] replica-id()
  ROOT t = (f32[2,6], u32[]) tuple(ag, rid)
}
)";
  Value p = MakeArray(S("f32[2,3]"), [](int64_t i) { return i + 1.0; });
  auto out = RunText(text, {p});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_TRUE(out->is_tuple);
  std::vector<double> ag = ToDoubles(out->tuple[0]);
  std::vector<double> want = {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6};
  EXPECT_EQ(ag, want);
  EXPECT_EQ(ToInts(out->tuple[1])[0], 0);
}

TEST(ExecutorTest, ElidedConstantsAreSeeded) {
  const char* text = "HloModule m\nENTRY e {\n  ROOT c = f32[64] constant({...})\n}\n";
  auto a = RunText(text, {}, 1, 5), b = RunText(text, {}, 2, 5), c = RunText(text, {}, 1, 6);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().message();
  EXPECT_EQ(ToDoubles(*a), ToDoubles(*b));
  EXPECT_NE(ToDoubles(*a), ToDoubles(*c));
  double abs_sum = 0;
  for (double v : ToDoubles(*a)) abs_sum += std::fabs(v);
  EXPECT_GT(abs_sum, 1.0);
}

TEST(ExecutorTest, BadArgumentsAreErrors) {
  const char* text = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n";
  EXPECT_FALSE(RunText(text, {}).ok());
  EXPECT_FALSE(RunText(text, {MakeSeededValue(S("f32[5]"), 1)}).ok());
  EXPECT_FALSE(RunText(text, {MakeSeededValue(S("s32[4]"), 1)}).ok());
}

}  // namespace
}  // namespace hlox::rt
