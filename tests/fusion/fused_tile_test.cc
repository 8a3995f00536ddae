// Tiled walks of transposing fusion outputs (runtime/fused/tile.cc) against plain reference
// loops written here: 2-D transposes of sizes that are not multiples of the tile, 3-D and 4-D
// permutations, a transpose behind reshape and slice of a bias add (the transformer's
// head-split fusion), a reversed tile dim, a bf16 output, an s32 output and a transpose big
// enough to stream its output. Every case runs
// tiled and row by row on the block loop (and on the register path where it applies), on 1
// and 2 threads, and all runs must agree bit for bit.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/literal.h"
#include "runtime/core/thread_pool.h"
#include "runtime/fused/program.h"
#include "tests/fusion/fused_test_util.h"

namespace hlox::rt {
namespace {

Value Rand(std::vector<int64_t> dims, uint32_t seed) { return testing::F32(std::move(dims), seed); }

// Runs computation "fused" of `text` tiled and untiled, on 1 and 2 threads; expects
// `tiled_outputs` tiled outputs, identical bytes across the runs, and returns them.
std::vector<uint8_t> RunAll(const std::string& text, const std::vector<const Value*>& args,
                            int64_t tiled_outputs) {
  std::unique_ptr<Module> keep;
  std::unique_ptr<FusedProgram> p = testing::Compile(text, &keep);
  if (p == nullptr) return {};
  EXPECT_EQ(p->tiled_output_count(), tiled_outputs);
  std::vector<uint8_t> first;
  ThreadPool pool(2);
  for (int variant = 0; variant < 3; ++variant) {  // tiled, row order, register path
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      FusedRunOptions opt;
      opt.tiled = variant == 0;
      opt.vector_path = variant == 2;
      auto r = p->Run(args, tp, opt);
      EXPECT_TRUE(r.ok()) << r.status();
      if (!r.ok()) return {};
      const Buffer& b = *r->array;
      const uint8_t* d = static_cast<const uint8_t*>(b.data());
      std::vector<uint8_t> v(d, d + b.byte_size());
      if (first.empty()) {
        first = v;
      } else {
        EXPECT_EQ(first, v) << "variant " << variant << " threads " << (tp ? 2 : 1);
      }
    }
  }
  return first;
}

std::vector<float> Floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> f(bytes.size() / 4);
  if (!f.empty()) std::memcpy(f.data(), bytes.data(), f.size() * 4);
  return f;
}

void ExpectEqual(const std::vector<float>& got, const std::vector<float>& ref) {
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(got[i], ref[i]) << "element " << i;
}

TEST(FusedTile, OddSized2DTransposeWithBias) {
  // o[j, i] = x[i, j] + b[i] over 131 x 77: tiles of 64 with ragged edges on both dims.
  const std::string text = R"(HloModule m
fused {
  x = f32[131,77] parameter(0)
  b = f32[131] parameter(1)
  bb = f32[131,77] broadcast(b), dimensions={0}
  a = f32[131,77] add(x, bb)
  ROOT o = f32[77,131] transpose(a), dimensions={1,0}
}
ENTRY main {
  p0 = f32[131,77] parameter(0)
  p1 = f32[131] parameter(1)
  ROOT f = f32[77,131] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({131, 77}, 1), b = Rand({131}, 2);
  const float* xv = x.array->as<float>();
  const float* bv = b.array->as<float>();
  std::vector<float> ref;
  for (int j = 0; j < 77; ++j) {
    for (int i = 0; i < 131; ++i) ref.push_back(xv[i * 77 + j] + bv[i]);
  }
  ExpectEqual(Floats(RunAll(text, {&x, &b}, 1)), ref);
}

TEST(FusedTile, ThreeAndFourDimPermutations) {
  // d = transpose{2,0,1}(x) * 2 - y over [67,5,19], then a 4-D transpose of d behind a
  // reshape that adds a unit dim: o[a, b, 0, c] = x[a, b, c] * 2 - y[c, a, b].
  const std::string text = R"(HloModule m
fused {
  x = f32[5,19,67] parameter(0)
  y = f32[67,5,19] parameter(1)
  tx = f32[67,5,19] transpose(x), dimensions={2,0,1}
  two = f32[] constant(2)
  b2 = f32[67,5,19] broadcast(two), dimensions={}
  m = f32[67,5,19] multiply(tx, b2)
  d = f32[67,5,19] subtract(m, y)
  r = f32[67,5,19,1] reshape(d)
  ROOT o = f32[5,19,1,67] transpose(r), dimensions={1,2,3,0}
}
ENTRY main {
  p0 = f32[5,19,67] parameter(0)
  p1 = f32[67,5,19] parameter(1)
  ROOT f = f32[5,19,1,67] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({5, 19, 67}, 3), y = Rand({67, 5, 19}, 4);
  const float* xv = x.array->as<float>();
  const float* yv = y.array->as<float>();
  std::vector<float> ref;
  for (int a = 0; a < 5; ++a) {
    for (int b = 0; b < 19; ++b) {
      for (int c = 0; c < 67; ++c) ref.push_back(xv[(a * 19 + b) * 67 + c] * 2.0f - yv[(c * 5 + a) * 19 + b]);
    }
  }
  // x is read along the minor dim, y across it: one strided read either way, tiled anyway.
  ExpectEqual(Floats(RunAll(text, {&x, &y}, 1)), ref);
}

TEST(FusedTile, HeadSplitBehindReshapeAndSlice) {
  // The transformer encoder's fusion: bias add, reshape, slice of the middle third, reshape
  // into heads, transpose moving the sequence dim minor. N=3, S=130, H=2, D=70.
  std::string text = R"(HloModule m
fused {
  x = f32[390,420] parameter(0)
  b = f32[420] parameter(1)
  bb = f32[390,420] broadcast(b), dimensions={1}
  a = f32[390,420] add(bb, x)
  r = f32[3,130,420] reshape(a)
  s = f32[3,130,140] slice(r), slice={[0:3], [0:130], [140:280]}
  h = f32[3,130,2,70] reshape(s)
  t = f32[3,2,70,130] transpose(h), dimensions={0,2,3,1}
  ROOT o = f32[6,70,130] reshape(t)
}
ENTRY main {
  p0 = f32[390,420] parameter(0)
  p1 = f32[420] parameter(1)
  ROOT f = f32[6,70,130] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  Value x = Rand({390, 420}, 5), b = Rand({420}, 6);
  const float* xv = x.array->as<float>();
  const float* bv = b.array->as<float>();
  std::vector<float> ref;
  for (int n = 0; n < 3; ++n) {
    for (int h = 0; h < 2; ++h) {
      for (int d = 0; d < 70; ++d) {
        for (int s = 0; s < 130; ++s) {
          const int col = 140 + h * 70 + d;
          ref.push_back(bv[col] + xv[(n * 130 + s) * 420 + col]);
        }
      }
    }
  }
  ExpectEqual(Floats(RunAll(text, {&x, &b}, 1)), ref);
}

TEST(FusedTile, ReversedTileDimAndBf16Output) {
  // o[j, i] = bf16(exp(x[99 - i, j])) over [40, 100]: the tile dim is read backwards (step -1)
  // and the output is stored through the converting path.
  const std::string text = R"(HloModule m
fused {
  x = f32[100,40] parameter(0)
  rv = f32[100,40] reverse(x), dimensions={0}
  e = f32[100,40] exponential(rv)
  t = f32[40,100] transpose(e), dimensions={1,0}
  ROOT o = bf16[40,100] convert(t)
}
ENTRY main {
  p0 = f32[100,40] parameter(0)
  ROOT f = bf16[40,100] fusion(p0), kind=kLoop, calls=fused
}
)";
  Value x = Rand({100, 40}, 7);
  // Tiled and row-order runs agree bit for bit; std::exp checks the values to bf16 precision.
  std::vector<uint8_t> got = RunAll(text, {&x}, 1);
  ASSERT_EQ(got.size(), 40u * 100u * 2u);
  const float* xv = x.array->as<float>();
  std::vector<uint16_t> bits(40 * 100);
  std::memcpy(bits.data(), got.data(), got.size());
  for (int j = 0; j < 40; ++j) {
    for (int i = 0; i < 100; ++i) {
      const float want = std::exp(xv[(99 - i) * 40 + j]);
      const float have = Bf16ToFloat(bits[j * 100 + i]);
      ASSERT_NEAR(have, want, 0.008f * want) << j << "," << i;
    }
  }
}

TEST(FusedTile, IntegerOutputAndTupleWithRowOrderOutput) {
  // A tuple: the transposed s32 sum (tiled) and the untransposed f32 sum (row order).
  const std::string text = R"(HloModule m
fused {
  x = s32[33,90] parameter(0)
  y = s32[33,90] parameter(1)
  a = s32[33,90] add(x, y)
  t = s32[90,33] transpose(a), dimensions={1,0}
  f = f32[33,90] convert(a)
  ROOT o = (s32[90,33], f32[33,90]) tuple(t, f)
}
ENTRY main {
  p0 = s32[33,90] parameter(0)
  p1 = s32[33,90] parameter(1)
  ROOT f = (s32[90,33], f32[33,90]) fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  auto make = [](uint32_t seed) {
    auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kS32, {33, 90}));
    for (int64_t i = 0; i < b->element_count(); ++i) b->as<int32_t>()[i] = static_cast<int32_t>((i * 7919 + seed) % 2001) - 1000;
    return Value::Array(b);
  };
  Value x = make(1), y = make(2);
  std::unique_ptr<Module> keep;
  auto prog = testing::Compile(text, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_EQ(prog->tiled_output_count(), 1);
  ThreadPool pool(2);
  const int32_t* xv = x.array->as<int32_t>();
  const int32_t* yv = y.array->as<int32_t>();
  for (bool tiled : {true, false}) {
    for (ThreadPool* tp : {static_cast<ThreadPool*>(nullptr), &pool}) {
      FusedRunOptions opt;
      opt.tiled = tiled;
      opt.vector_path = false;
      auto r = prog->Run({&x, &y}, tp, opt);
      ASSERT_TRUE(r.ok()) << r.status();
      const int32_t* t = r->tuple[0].array->as<int32_t>();
      const float* f = r->tuple[1].array->as<float>();
      for (int i = 0; i < 33; ++i) {
        for (int j = 0; j < 90; ++j) {
          ASSERT_EQ(t[j * 33 + i], xv[i * 90 + j] + yv[i * 90 + j]);
          ASSERT_EQ(f[i * 90 + j], static_cast<float>(xv[i * 90 + j] + yv[i * 90 + j]));
        }
      }
    }
  }
}

TEST(FusedTile, ContiguousReadsStayRowOrder) {
  // No strided read on the minor dim: not tiled.
  const std::string text = R"(HloModule m
fused {
  x = f32[64,96] parameter(0)
  b = f32[96] parameter(1)
  bb = f32[64,96] broadcast(b), dimensions={1}
  ROOT o = f32[64,96] add(x, bb)
}
ENTRY main {
  p0 = f32[64,96] parameter(0)
  p1 = f32[96] parameter(1)
  ROOT f = f32[64,96] fusion(p0, p1), kind=kLoop, calls=fused
}
)";
  std::unique_ptr<Module> keep;
  auto prog = testing::Compile(text, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_EQ(prog->tiled_output_count(), 0);
}

TEST(FusedTile, BigTransposeAddStreamsAndPrefetches) {
  // x^T + y over [1537, 1539] f32 (28 MiB with the output; rows not 64-byte aligned): the
  // streamed (non-temporal) tiled path, whose reads of y's rows and of x's runs prefetch the
  // next tile, against a plain loop.
  const int64_t R = 1537, C = 1539;
  const std::string text = R"(HloModule m
fused {
  x = f32[1539,1537] parameter(0)
  y = f32[1537,1539] parameter(1)
  t = f32[1537,1539] transpose(x), dimensions={1,0}
  ROOT o = f32[1537,1539] add(t, y)
})";
  Value x = Rand({C, R}, 21), y = Rand({R, C}, 22);
  std::vector<float> got = Floats(RunAll(text, {&x, &y}, 1));
  std::vector<float> ref(R * C);
  for (int64_t i = 0; i < R; ++i) {
    for (int64_t j = 0; j < C; ++j) ref[i * C + j] = x.array->as<float>()[j * R + i] + y.array->as<float>()[i * C + j];
  }
  ExpectEqual(got, ref);
}

}  // namespace
}  // namespace hlox::rt
