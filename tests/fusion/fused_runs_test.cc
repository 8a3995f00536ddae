// Index maps evaluated run by run (runtime/fused/eval.cc EvalAffineRuns): a transformer-style
// head split (bias add, reshape, slice, reshape, transpose, reshape) whose transpose hands its
// operand contiguous runs that the slice and broadcast below it consume as runs, and a
// reversed, strided slice of a computed operand under a transpose, both against plain
// reference loops written here, for several block sizes, with 1 and 2 threads bit-identical.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/fused/program.h"
#include "runtime/core/thread_pool.h"
#include "tests/fusion/fused_test_util.h"
#include "runtime/core/value.h"

namespace hlox::rt {
namespace {

using testing::Compile;
using testing::F32;
using testing::RunBoth;

TEST(FusedRuns, HeadSplitTransposeOfSliceOfBiasAdd) {
  // x[B*S, 3*H*D] + bias[3*H*D] -> [B,S,3*H*D] -> slice part p -> [B,S,H,D] -> [B,H,S,D].
  constexpr int64_t B = 2, S = 6, H = 3, D = 8, W = 3 * H * D, P = 1;
  std::unique_ptr<Module> keep;
  auto prog = Compile(R"(HloModule m
fused {
  x = f32[12,72] parameter(0)
  bias = f32[72] parameter(1)
  bb = f32[12,72] broadcast(bias), dimensions={1}
  a = f32[12,72] add(bb, x)
  r = f32[2,6,72] reshape(a)
  s = f32[2,6,24] slice(r), slice={[0:2], [0:6], [24:48]}
  r2 = f32[2,6,3,8] reshape(s)
  t = f32[2,3,6,8] transpose(r2), dimensions={0,2,1,3}
  ROOT o = f32[6,6,8] reshape(t)
}
ENTRY main {
  x = f32[12,72] parameter(0)
  b = f32[72] parameter(1)
  ROOT f = f32[6,6,8] fusion(x, b), kind=kLoop, calls=fused
}
)", &keep);
  ASSERT_TRUE(prog);
  Value x = F32({B * S, W}, 1), bias = F32({W}, 2);
  const float* px = x.array->as<float>();
  const float* pb = bias.array->as<float>();
  for (int64_t block : {16, 40, 64, 1024}) {
    SCOPED_TRACE(block);
    BufferPtr out = RunBoth(*prog, {&x, &bias}, block);
    ASSERT_TRUE(out);
    const float* o = out->as<float>();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t s = 0; s < S; ++s) {
          for (int64_t d = 0; d < D; ++d) {
            const int64_t col = P * H * D + h * D + d;
            const float want = pb[col] + px[(b * S + s) * W + col];
            ASSERT_EQ(o[((b * H + h) * S + s) * D + d], want) << b << h << s << d;
          }
        }
      }
    }
  }
}

TEST(FusedRuns, ReversedStridedSliceOfComputedOperand) {
  std::unique_ptr<Module> keep;
  auto prog = Compile(R"(HloModule m
fused {
  x = f32[10,30] parameter(0)
  y = f32[30] parameter(1)
  yb = f32[10,30] broadcast(y), dimensions={1}
  m = f32[10,30] multiply(x, yb)
  rv = f32[10,30] reverse(m), dimensions={1}
  sl = f32[4,7] slice(rv), slice={[1:9:2], [2:30:4]}
  ROOT t = f32[7,4] transpose(sl), dimensions={1,0}
}
ENTRY main {
  x = f32[10,30] parameter(0)
  y = f32[30] parameter(1)
  ROOT f = f32[7,4] fusion(x, y), kind=kLoop, calls=fused
}
)", &keep);
  ASSERT_TRUE(prog);
  Value x = F32({10, 30}, 3), y = F32({30}, 4);
  const float* px = x.array->as<float>();
  const float* py = y.array->as<float>();
  for (int64_t block : {16, 20, 4096}) {
    SCOPED_TRACE(block);
    BufferPtr out = RunBoth(*prog, {&x, &y}, block);
    ASSERT_TRUE(out);
    for (int64_t j = 0; j < 7; ++j) {
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t r = 1 + 2 * i, c = 29 - (2 + 4 * j);
        ASSERT_EQ(out->as<float>()[j * 4 + i], px[r * 30 + c] * py[c]) << i << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace hlox::rt
