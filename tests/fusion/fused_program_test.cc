// FusedProgram (the fused block loop) against plain reference loops written in this test:
// elementwise chains, index maps (transpose, slice, reverse, broadcast, pad, concatenate,
// dynamic-slice, layout bitcast), iota/compare/select/convert, and every reduce path. Block
// sizes are small so blocks, tails and thread splits are exercised; 1 and 2 threads must give
// identical bits.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/thread_pool.h"
#include "runtime/core/value.h"
#include "runtime/fused/program.h"

namespace hlox::rt {
namespace {

Value F32(std::vector<int64_t> dims, uint32_t seed, float lo = -2, float hi = 2) {
  auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kF32, dims));
  uint32_t s = seed * 2654435761u + 1;
  for (int64_t i = 0; i < b->element_count(); ++i) {
    s = s * 1664525u + 1013904223u;
    b->as<float>()[i] = lo + (hi - lo) * static_cast<float>(s >> 8) / 16777216.0f;
  }
  return Value::Array(b);
}

Value S32Scalar(int32_t v) {
  auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kS32, {}));
  b->as<int32_t>()[0] = v;
  return Value::Array(b);
}

struct Compiled {
  std::unique_ptr<Module> module;
  std::unique_ptr<FusedProgram> program;
};

Compiled CompileFused(const std::string& text) {
  Compiled c;
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return c;
  c.module = std::move(*m);
  const Computation* comp = c.module->FindComputation("fused");
  EXPECT_NE(comp, nullptr);
  auto p = FusedProgram::Compile(*comp, 7);
  EXPECT_TRUE(p.ok()) << p.status();
  if (p.ok()) c.program = std::move(*p);
  return c;
}

// Runs with 1 thread and with a 2-thread pool; checks identical bits; returns the result.
Value RunBoth(const FusedProgram& p, const std::vector<const Value*>& args, int64_t block) {
  FusedRunOptions opt;
  opt.block = block;
  auto one = p.Run(args, nullptr, opt);
  EXPECT_TRUE(one.ok()) << one.status();
  ThreadPool pool(2);
  auto two = p.Run(args, &pool, opt);
  EXPECT_TRUE(two.ok()) << two.status();
  if (!one.ok() || !two.ok()) return Value();
  std::vector<BufferPtr> a, b;
  one->Flatten(&a);
  two->Flatten(&b);
  EXPECT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    EXPECT_EQ(0, std::memcmp(a[k]->data(), b[k]->data(), a[k]->byte_size())) << "leaf " << k;
  }
  return *one;
}

void ExpectNear(const Buffer& b, const std::vector<double>& ref, double rtol) {
  ASSERT_EQ(b.element_count(), static_cast<int64_t>(ref.size()));
  for (size_t i = 0; i < ref.size(); ++i) {
    double v = b.shape().element_type() == PrimitiveType::kF32 ? b.as<float>()[i] : 0;
    ASSERT_NEAR(v, ref[i], rtol * std::fabs(ref[i]) + 1e-6) << "element " << i;
  }
}


TEST(FusedProgram, ElementwiseChainMatchesReference) {
  Compiled c = CompileFused(R"(HloModule m
fused {
  x = f32[1000] parameter(0)
  y = f32[1000] parameter(1)
  z = f32[1000] parameter(2)
  two = f32[] constant(2)
  one = f32[] constant(1)
  b2 = f32[1000] broadcast(two), dimensions={}
  b1 = f32[1000] broadcast(one), dimensions={}
  m = f32[1000] multiply(b2, x)
  a = f32[1000] add(m, b1)
  t = f32[1000] tanh(a)
  ty = f32[1000] multiply(t, y)
  e = f32[1000] exponential(ty)
  ROOT r = f32[1000] subtract(e, z)
}
ENTRY main {
  p0 = f32[1000] parameter(0)
  p1 = f32[1000] parameter(1)
  p2 = f32[1000] parameter(2)
  ROOT f = f32[1000] fusion(p0, p1, p2), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  Value x = F32({1000}, 1), y = F32({1000}, 2), z = F32({1000}, 3);
  Value out = RunBoth(*c.program, {&x, &y, &z}, 64);
  std::vector<double> ref(1000);
  for (int i = 0; i < 1000; ++i) {
    float xv = x.array->as<float>()[i], yv = y.array->as<float>()[i], zv = z.array->as<float>()[i];
    ref[i] = std::exp(std::tanh(2.0 * xv + 1.0) * yv) - zv;
  }
  ExpectNear(*out.array, ref, 1e-5);
}

TEST(FusedProgram, IndexMapsMatchReference) {
  Compiled c = CompileFused(R"(HloModule m
fused {
  x = f32[5,4] parameter(0)
  b = f32[4] parameter(1)
  t = f32[4,5] transpose(x), dimensions={1,0}
  s = f32[4,2] slice(t), slice={[0:4], [1:5:2]}
  r = f32[4,2] reverse(s), dimensions={1}
  bb = f32[4,2] broadcast(b), dimensions={0}
  ROOT o = f32[4,2] add(r, bb)
}
ENTRY main {
  p0 = f32[5,4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT f = f32[4,2] fusion(p0, p1), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  Value x = F32({5, 4}, 4), b = F32({4}, 5);
  Value out = RunBoth(*c.program, {&x, &b}, 16);
  std::vector<double> ref;
  const float* xv = x.array->as<float>();
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) ref.push_back(xv[(1 + 2 * (1 - j)) * 4 + i] + b.array->as<float>()[i]);
  }
  ExpectNear(*out.array, ref, 1e-6);
}

TEST(FusedProgram, PadConcatDynamicSliceConvert) {
  Compiled c = CompileFused(R"(HloModule m
fused {
  x = f32[6] parameter(0)
  st = s32[] parameter(1)
  i = s32[6] iota(), iota_dimension=0
  ci = f32[6] convert(i)
  gt = pred[6] compare(x, ci), direction=GT
  sel = f32[6] select(gt, x, ci)
  zero = f32[] constant(-7)
  p = f32[12] pad(sel, zero), padding=1_0_1
  cc = f32[18] concatenate(p, x), dimensions={0}
  ds = f32[10] dynamic-slice(cc, st), dynamic_slice_sizes={10}
  ROOT o = bf16[10] convert(ds)
}
ENTRY main {
  p0 = f32[6] parameter(0)
  p1 = s32[] parameter(1)
  ROOT f = bf16[10] fusion(p0, p1), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  Value x = F32({6}, 6, -1, 7);
  for (int32_t start : {3, 100, -5}) {
    Value st = S32Scalar(start);
    Value out = RunBoth(*c.program, {&x, &st}, 4);
    const float* xv = x.array->as<float>();
    std::vector<float> cc;
    std::vector<float> sel(6);
    for (int k = 0; k < 6; ++k) sel[k] = xv[k] > k ? xv[k] : static_cast<float>(k);
    cc.push_back(-7);
    for (int k = 0; k < 6; ++k) {
      cc.push_back(sel[k]);
      if (k < 5) cc.push_back(-7);
    }
    for (int k = 0; k < 6; ++k) cc.push_back(xv[k]);
    ASSERT_EQ(cc.size(), 18u);
    int s = std::max(0, std::min(start, 8));
    for (int k = 0; k < 10; ++k) {
      float got = Bf16ToFloat(out.array->as<uint16_t>()[k]);
      EXPECT_EQ(got, Bf16ToFloat(FloatToBf16(cc[s + k]))) << "start " << start << " k " << k;
    }
  }
}

TEST(FusedProgram, IotaOverEveryDimensionAndBlockStart) {
  // iota along the minor dimension (runs of consecutive values that wrap at each row) and along
  // outer ones (runs of one value), in s64 and f32, with blocks of 1, 5, 7 and 64 elements so
  // blocks start inside runs; the one-hot compare of a cross-entropy loss reads the s64 ones.
  Compiled c = CompileFused(R"(HloModule m
fused {
  l = s64[3] parameter(0)
  i2 = s64[3,5,7] iota(), iota_dimension=2
  i1 = s64[3,5,7] iota(), iota_dimension=1
  i0 = f32[3,5,7] iota(), iota_dimension=0
  b = s64[3,5,7] broadcast(l), dimensions={0}
  hit = pred[3,5,7] compare(b, i2), direction=EQ
  c1 = f32[3,5,7] convert(i1)
  one = f32[] constant(100)
  ones = f32[3,5,7] broadcast(one), dimensions={}
  s = f32[3,5,7] select(hit, ones, c1)
  ROOT o = f32[3,5,7] add(s, i0)
}
ENTRY main {
  p0 = s64[3] parameter(0)
  ROOT f = f32[3,5,7] fusion(p0), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  auto lb = std::make_shared<Buffer>(Shape(PrimitiveType::kS64, {3}));
  const int64_t labels[3] = {6, 0, 3};
  for (int t = 0; t < 3; ++t) lb->as<int64_t>()[t] = labels[t];
  Value l = Value::Array(lb);
  std::vector<double> ref;
  for (int a = 0; a < 3; ++a) {
    for (int b = 0; b < 5; ++b) {
      for (int d = 0; d < 7; ++d) ref.push_back((d == labels[a] ? 100.0 : b) + a);
    }
  }
  for (int64_t block : {1, 5, 7, 64}) ExpectNear(*RunBoth(*c.program, {&l}, block).array, ref, 0);
}

TEST(FusedProgram, LayoutBitcastIsPhysicalReinterpretation) {
  Compiled c = CompileFused(R"(HloModule m
fused {
  x = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[3,2]{1,0} bitcast(x)
}
ENTRY main {
  p0 = f32[2,3]{0,1} parameter(0)
  ROOT f = f32[3,2]{1,0} fusion(p0), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  Value x = F32({2, 3}, 8);
  Value out = RunBoth(*c.program, {&x}, 16);
  std::vector<double> ref;
  for (int r = 0; r < 3; ++r) {
    for (int col = 0; col < 2; ++col) ref.push_back(x.array->as<float>()[col * 3 + r]);
  }
  ExpectNear(*out.array, ref, 0);
}

std::string ReduceModule(const std::string& in_shape, const std::string& out_shape,
                         const std::string& dims, const std::string& op, const std::string& init) {
  return "HloModule m\nred {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] " + op +
         "(a, b)\n}\nfused {\n  x = f32" + in_shape + " parameter(0)\n  e = f32" + in_shape +
         " exponential(x)\n  i = f32[] constant(" + init + ")\n  ROOT r = f32" + out_shape +
         " reduce(e, i), dimensions={" + dims + "}, to_apply=red\n}\nENTRY main {\n  p = f32" + in_shape +
         " parameter(0)\n  ROOT f = f32" + out_shape + " fusion(p), kind=kInput, calls=fused\n}\n";
}

// Reference reduce of exp(x) over `red` dims of a row-major array.
std::vector<double> RefReduce(const Buffer& x, const std::vector<int64_t>& dims,
                              const std::vector<bool>& red, bool is_max, double init) {
  int64_t rank = static_cast<int64_t>(dims.size()), total = x.element_count();
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) if (!red[d]) out_dims.push_back(dims[d]);
  int64_t nout = 1;
  for (int64_t d : out_dims) nout *= d;
  std::vector<double> out(nout, init);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t lin = 0; lin < total; ++lin) {
    int64_t rem = lin;
    for (int64_t d = rank - 1; d >= 0; --d) { idx[d] = rem % dims[d]; rem /= dims[d]; }
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d) if (!red[d]) o = o * dims[d] + idx[d];
    double v = std::exp(static_cast<double>(x.as<float>()[lin]));
    out[o] = is_max ? std::max(out[o], v) : out[o] + v;
  }
  return out;
}

TEST(FusedProgram, ReducePathsMatchReference) {
  struct Case { std::string in, out, dims; std::vector<int64_t> shape; std::vector<bool> red; bool max; };
  std::vector<Case> cases = {
      {"[5,300]", "[5]", "1", {5, 300}, {false, true}, false},         // long rows
      {"[50,7]", "[50]", "1", {50, 7}, {false, true}, false},          // short rows, many per block
      {"[37,5]", "[5]", "0", {37, 5}, {true, false}, false},           // column reduction
      {"[3,4,5]", "[4]", "0,2", {3, 4, 5}, {true, false, true}, true}, // general, max
      {"[0,4]", "[4]", "0", {0, 4}, {true, false}, false},             // empty reduction
      {"[3,4,5,40]", "[4]", "0,2,3", {3, 4, 5, 40}, {true, false, true, true}, false},  // NCHW stats
      {"[2,3,7,20]", "[2,7]", "1,3", {2, 3, 7, 20}, {false, true, false, true}, true},  // gaps, max
      {"[6,3,100]", "[100]", "0,1", {6, 3, 100}, {true, true, false}, true},  // leading dims, max
      {"[6,3,100]", "[100]", "0,1", {6, 3, 100}, {true, true, false}, false},  // leading dims, add
  };
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.in + " dims " + cs.dims);
    Compiled c = CompileFused(ReduceModule(cs.in, cs.out, cs.dims, cs.max ? "maximum" : "add",
                                           cs.max ? "-inf" : "0"));
    ASSERT_TRUE(c.program);
    Value x = F32(cs.shape, 9);
    Value out = RunBoth(*c.program, {&x}, 64);
    ExpectNear(*out.array, RefReduce(*x.array, cs.shape, cs.red, cs.max, cs.max ? -INFINITY : 0), 1e-5);
  }
}

TEST(FusedProgram, MultiOutputTupleRoot) {
  Compiled c = CompileFused(R"(HloModule m
fused {
  x = f32[100] parameter(0)
  n = f32[100] negate(x)
  e = f32[100] exponential(n)
  ROOT t = (f32[100], f32[100]) tuple(n, e)
}
ENTRY main {
  p0 = f32[100] parameter(0)
  ROOT f = (f32[100], f32[100]) fusion(p0), kind=kLoop, calls=fused
}
)");
  ASSERT_TRUE(c.program);
  Value x = F32({100}, 10);
  Value out = RunBoth(*c.program, {&x}, 32);
  ASSERT_TRUE(out.is_tuple);
  std::vector<double> rn, re;
  for (int i = 0; i < 100; ++i) {
    rn.push_back(-x.array->as<float>()[i]);
    re.push_back(std::exp(-static_cast<double>(x.array->as<float>()[i])));
  }
  ExpectNear(*out.tuple[0].array, rn, 0);
  ExpectNear(*out.tuple[1].array, re, 1e-6);
}

TEST(FusedProgram, UnsupportedOpIsUnimplemented) {
  auto m = ParseModule(R"(HloModule m
fused {
  a = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY main {
  p = f32[4,4] parameter(0)
  ROOT f = f32[4,4] fusion(p), kind=kOutput, calls=fused
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto p = FusedProgram::Compile(*(*m)->FindComputation("fused"), 0);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(FusedProgram, BackendConfigOptions) {
  FusedRunOptions o;
  ParseFusedRunOptions(R"({"hlox_block":16384,"hlox_threads":1,"x":2})", &o);
  EXPECT_EQ(o.block, 16384);
  EXPECT_EQ(o.threads, 1);
  FusedRunOptions d;
  ParseFusedRunOptions("garbage", &d);
  EXPECT_EQ(d.block, 4096);
  EXPECT_EQ(d.threads, 0);
}

}  // namespace
}  // namespace hlox::rt
