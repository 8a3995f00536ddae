// Collapsed index maps and reduces (FusedNode::map_dims, CompileReduce): broadcasts and
// transposes through size-1 dims (the toy-NN pattern [101,10] -> [101,10,1] -> transpose),
// a reduce over a size-1 dim, and a reduce whose reduced dims merge, each against plain
// reference loops written here, for several block sizes, with 1 and 2 threads bit-identical.
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

TEST(FusedCollapse, BroadcastAndTransposeThroughUnitDims) {
  std::unique_ptr<Module> keep;
  auto prog = Compile(R"(HloModule m
fused {
  a = f32[7,5] parameter(0)
  c = f32[7,1] parameter(1)
  ba = f32[7,5,1] broadcast(a), dimensions={0,1}
  bc = f32[7,5,1] broadcast(c), dimensions={0,2}
  m = f32[7,5,1] multiply(ba, bc)
  t = f32[7,1,5] transpose(m), dimensions={0,2,1}
  r = f32[7,5] reshape(t)
  br = f32[3,7,5] broadcast(r), dimensions={1,2}
  t2 = f32[5,7,3] transpose(br), dimensions={2,1,0}
  ROOT o = f32[5,7,3] negate(t2)
}
ENTRY main {
  a = f32[7,5] parameter(0)
  c = f32[7,1] parameter(1)
  ROOT f = f32[5,7,3] fusion(a, c), kind=kLoop, calls=fused
}
)", &keep);
  ASSERT_TRUE(prog);
  Value a = F32({7, 5}, 1), c = F32({7, 1}, 2);
  const float* pa = a.array->as<float>();
  const float* pc = c.array->as<float>();
  for (int64_t block : {16, 24, 1024}) {
    SCOPED_TRACE(block);
    BufferPtr out = RunBoth(*prog, {&a, &c}, block);
    ASSERT_TRUE(out);
    const float* o = out->as<float>();
    for (int64_t k = 0; k < 5; ++k) {
      for (int64_t i = 0; i < 7; ++i) {
        for (int64_t z = 0; z < 3; ++z) {
          // t2[k,i,z] = br[z,i,k] = r[i,k] = t[i,0,k] = m[i,k,0] = a[i,k] * c[i,0]
          ASSERT_EQ(o[(k * 7 + i) * 3 + z], -(pa[i * 5 + k] * pc[i])) << k << " " << i << " " << z;
        }
      }
    }
  }
}

TEST(FusedCollapse, ReduceOverUnitAndMergedDims) {
  std::unique_ptr<Module> keep;
  auto prog = Compile(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  p = f32[6,1,4,3,1,5] parameter(0)
  e = f32[6,1,4,3,1,5] exponential(p)
  z = f32[] constant(0.5)
  r1 = f32[6,4,3,5] reduce(e, z), dimensions={1,4}, to_apply=add
  r2 = f32[6,5] reduce(e, z), dimensions={1,2,3,4}, to_apply=add
  ROOT t = (f32[6,4,3,5], f32[6,5]) tuple(r1, r2)
}
ENTRY main {
  p = f32[6,1,4,3,1,5] parameter(0)
  ROOT f = (f32[6,4,3,5], f32[6,5]) fusion(p), kind=kInput, calls=fused
}
)", &keep);
  ASSERT_TRUE(prog);
  Value p = F32({6, 1, 4, 3, 1, 5}, 3);
  const float* pp = p.array->as<float>();
  std::vector<float> e(360);
  // The reference applies the same exp as the fused loop (an exp node run on its own).
  {
    std::unique_ptr<Module> k2;
    auto ex = Compile(R"(HloModule m
fused {
  p = f32[360] parameter(0)
  ROOT e = f32[360] exponential(p)
}
ENTRY main {
  p = f32[360] parameter(0)
  ROOT f = f32[360] fusion(p), kind=kLoop, calls=fused
}
)", &k2);
    ASSERT_TRUE(ex);
    Value flat = Value::Array(std::make_shared<Buffer>(Shape(PrimitiveType::kF32, {360})));
    std::memcpy(flat.array->data(), pp, 360 * 4);
    auto r = ex->Run({&flat}, nullptr, FusedRunOptions{});
    ASSERT_TRUE(r.ok());
    std::memcpy(e.data(), r->array->data(), 360 * 4);
  }
  for (int64_t block : {16, 40, 1024}) {
    SCOPED_TRACE(block);
    FusedRunOptions opt;
    opt.block = block;
    opt.auto_block = false;
    auto one = prog->Run({&p}, nullptr, opt);
    ThreadPool pool(2);
    auto two = prog->Run({&p}, &pool, opt);
    ASSERT_TRUE(one.ok() && two.ok());
    for (int k = 0; k < 2; ++k) {
      const Buffer& b1 = *one->tuple[k].array;
      ASSERT_EQ(0, std::memcmp(b1.data(), two->tuple[k].array->data(), b1.byte_size()));
    }
    const float* r1 = one->tuple[0].array->as<float>();
    const float* r2 = one->tuple[1].array->as<float>();
    for (int64_t i = 0; i < 120; ++i) ASSERT_EQ(r1[i], 0.5f + e[i]) << i;  // unit dims only
    for (int64_t i = 0; i < 6; ++i) {
      for (int64_t w = 0; w < 5; ++w) {
        float acc = 0.5f;  // reduced positions in row-major order, one at a time
        for (int64_t q = 0; q < 12; ++q) acc += e[(i * 12 + q) * 5 + w];
        ASSERT_NEAR(r2[i * 5 + w], acc, 1e-4f) << i << " " << w;
      }
    }
  }
}

}  // namespace
}  // namespace hlox::rt
