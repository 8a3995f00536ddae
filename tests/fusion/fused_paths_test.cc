// Fast paths of the fused block evaluator against plain reference loops written here: index
// maps walked on non-contiguous index sets (transposes of transposes), concatenate evaluated
// in contiguous runs and by index, and small computed broadcast operands that are computed
// once per run (hoisted) and gathered. Small blocks exercise block edges; 1 and 2 threads
// must give identical bits.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/program.h"
#include "tests/fusion/fused_test_util.h"

namespace hlox::rt {
namespace {

// Seeded inputs in [-2, 2) (tests/fusion/fused_test_util.h).
Value Rand(std::vector<int64_t> dims, uint32_t seed) { return testing::F32(std::move(dims), seed); }

// Compiles computation "fused" of `text`, runs it on 1 and 2 threads with several block
// sizes, checks all runs agree bit for bit, and returns the first result's floats.
std::vector<float> RunFused(const std::string& text, const std::vector<const Value*>& args) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  const Computation* comp = (*m)->FindComputation("fused");
  EXPECT_NE(comp, nullptr);
  if (comp == nullptr) return {};
  auto p = FusedProgram::Compile(*comp, 7);
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return {};
  std::vector<float> first;
  ThreadPool pool(2);
  for (int64_t block : {16, 100, 4096}) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      FusedRunOptions opt;
      opt.block = block;
      auto r = (*p)->Run(args, tp, opt);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) return {};
      const Buffer& b = *r->array;
      std::vector<float> v(b.as<float>(), b.as<float>() + b.element_count());
      if (first.empty()) {
        first = v;
      } else {
        EXPECT_EQ(0, std::memcmp(first.data(), v.data(), v.size() * 4)) << "block " << block;
      }
    }
  }
  return first;
}

void ExpectClose(const std::vector<float>& got, const std::vector<double>& ref) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_NEAR(got[i], ref[i], 1e-5 * std::fabs(ref[i]) + 1e-6) << "element " << i;
  }
}

TEST(FusedPaths, ConcatReadThroughTranspose) {
  // The root transposes cc, so cc is read through non-contiguous index sets (index path).
  const std::string text = R"(HloModule m
fused {
  x = f32[4,8,16] parameter(0)
  y = f32[4,16,8] parameter(1)
  tx = f32[4,16,8] transpose(x), dimensions={0,2,1}
  cc = f32[4,32,8] concatenate(tx, y), dimensions={1}
  n = f32[4,32,8] negate(cc)
  ROOT o = f32[8,4,32] transpose(n), dimensions={2,0,1}
}
ENTRY main {
  p0 = f32[4,8,16] parameter(0)
  p1 = f32[4,16,8] parameter(1)
  ROOT f = f32[8,4,32] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({4, 8, 16}, 1), y = Rand({4, 16, 8}, 2);
  const float* xv = x.array->as<float>();
  const float* yv = y.array->as<float>();
  auto cc = [&](int a, int b, int c) -> double {
    return b < 16 ? xv[(a * 8 + c) * 16 + b] : yv[(a * 16 + (b - 16)) * 8 + c];
  };
  std::vector<double> ref;
  for (int k = 0; k < 8; ++k) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 32; ++j) ref.push_back(-cc(i, j, k));
    }
  }
  ExpectClose(RunFused(text, {&x, &y}), ref);
}

TEST(FusedPaths, ConcatRunsOnContiguousSets) {
  // The root reads cc on contiguous blocks: runs of 128 (dim 1 x inner 8) per operand.
  const std::string text = R"(HloModule m
fused {
  x = f32[4,8,16] parameter(0)
  y = f32[4,16,8] parameter(1)
  tx = f32[4,16,8] transpose(x), dimensions={0,2,1}
  cc = f32[4,32,8] concatenate(tx, y), dimensions={1}
  ROOT n = f32[4,32,8] negate(cc)
}
ENTRY main {
  p0 = f32[4,8,16] parameter(0)
  p1 = f32[4,16,8] parameter(1)
  ROOT f = f32[4,32,8] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({4, 8, 16}, 7), y = Rand({4, 16, 8}, 8);
  const float* xv = x.array->as<float>();
  const float* yv = y.array->as<float>();
  std::vector<double> ref;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 32; ++b) {
      for (int c = 0; c < 8; ++c) {
        ref.push_back(-(b < 16 ? xv[(a * 8 + c) * 16 + b] : yv[(a * 16 + (b - 16)) * 8 + c]));
      }
    }
  }
  ExpectClose(RunFused(text, {&x, &y}), ref);
}

TEST(FusedPaths, MinorConcatOfTransposesByIndex) {
  // Concatenation along the minor dim with short runs: the per-element index path.
  const std::string text = R"(HloModule m
fused {
  x = f32[3,6,5] parameter(0)
  y = f32[3,5,2] parameter(1)
  tx = f32[3,5,6] transpose(x), dimensions={0,2,1}
  ROOT cc = f32[3,5,8] concatenate(tx, y), dimensions={2}
}
ENTRY main {
  p0 = f32[3,6,5] parameter(0)
  p1 = f32[3,5,2] parameter(1)
  ROOT f = f32[3,5,8] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({3, 6, 5}, 3), y = Rand({3, 5, 2}, 4);
  const float* xv = x.array->as<float>();
  const float* yv = y.array->as<float>();
  std::vector<double> ref;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int c = 0; c < 8; ++c) {
        ref.push_back(c < 6 ? xv[(a * 6 + c) * 5 + b] : yv[(a * 5 + b) * 2 + (c - 6)]);
      }
    }
  }
  ExpectClose(RunFused(text, {&x, &y}), ref);
}

TEST(FusedPaths, HoistedBroadcastOperandAndTransposeChain) {
  // s = rsqrt(v*v + 1) per channel, broadcast over [N,C,H,W] (computed once, then gathered),
  // times a transposed input: t(x)[n,c,h,w] = x[n,h,w,c].
  const std::string text = R"(HloModule m
fused {
  v = f32[8] parameter(0)
  x = f32[2,5,6,8] parameter(1)
  one = f32[] constant(1)
  ob = f32[8] broadcast(one), dimensions={}
  vv = f32[8] multiply(v, v)
  a = f32[8] add(vv, ob)
  s = f32[8] rsqrt(a)
  bs = f32[2,8,5,6] broadcast(s), dimensions={1}
  tx = f32[2,8,5,6] transpose(x), dimensions={0,3,1,2}
  ROOT o = f32[2,8,5,6] multiply(tx, bs)
}
ENTRY main {
  p0 = f32[8] parameter(0)
  p1 = f32[2,5,6,8] parameter(1)
  ROOT f = f32[2,8,5,6] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value v = Rand({8}, 5), x = Rand({2, 5, 6, 8}, 6);
  const float* vv = v.array->as<float>();
  const float* xv = x.array->as<float>();
  std::vector<double> ref;
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 8; ++c) {
      for (int h = 0; h < 5; ++h) {
        for (int w = 0; w < 6; ++w) {
          double s = 1.0 / std::sqrt(static_cast<double>(vv[c]) * vv[c] + 1.0);
          ref.push_back(xv[((n * 5 + h) * 6 + w) * 8 + c] * s);
        }
      }
    }
  }
  ExpectClose(RunFused(text, {&v, &x}), ref);
}

}  // namespace
}  // namespace hlox::rt
