// The register path of the fused loop (runtime/fused_vector.*): f32 elementwise programs run
// over 16-lane sub-blocks must give the block loop's exact bits (same math), for sizes that are
// not whole registers or sub-blocks, with scalar and computed-scalar broadcasts, constants,
// NaN/inf inputs, several outputs (one a parameter), index maps of parameters (broadcasts,
// transpose, slice), on 1 and 2 threads and on the big streaming path; values are also checked against a double reference written here. Programs
// the path does not implement (bf16, compares/selects, vector broadcasts) fall back.
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/fusion/fused_test_util.h"

namespace hlox::rt {
namespace {

using testing::Compile;
using testing::F32;
using testing::Scalar;

// Outputs: r = a long chain over every op the path implements, m = an intermediate, x itself.
std::string OpsText(int64_t n) {
  constexpr char kText[] = R"(HloModule m
fused {
  x = f32$S parameter(0)
  y = f32$S parameter(1)
  s = f32[] parameter(2)
  c = f32[] constant(0.75)
  ss = f32[] multiply(s, c)
  bs = f32$S broadcast(ss), dimensions={}
  half = f32[] constant(0.5)
  bh = f32$S broadcast(half), dimensions={}
  m = f32$S multiply(x, bs)
  t = f32$S tanh(m)
  e = f32$S exponential(y)
  l = f32$S logistic(x)
  ab = f32$S abs(y)
  lg = f32$S log(ab)
  sq = f32$S sqrt(ab)
  rs = f32$S rsqrt(ab)
  ng = f32$S negate(t)
  fl = f32$S floor(e)
  ce = f32$S ceil(m)
  rn = f32$S round-nearest-even(y)
  a1 = f32$S add(t, e)
  a2 = f32$S subtract(a1, l)
  a3 = f32$S multiply(a2, lg)
  a4 = f32$S divide(a3, sq)
  a5 = f32$S maximum(a4, rs)
  a6 = f32$S minimum(a5, ng)
  a7 = f32$S add(a6, fl)
  a8 = f32$S subtract(a7, ce)
  a9 = f32$S multiply(a8, bh)
  r = f32$S add(a9, rn)
  ROOT o = (f32$S, f32$S, f32$S) tuple(r, m, x)
}
ENTRY main {
  a = f32$S parameter(0)
  b = f32$S parameter(1)
  c = f32[] parameter(2)
  ROOT f = (f32$S, f32$S, f32$S) fusion(a, b, c), kind=kLoop, calls=fused
}
)";
  return absl::StrReplaceAll(kText, {{"$S", absl::StrCat("[", n, "]")}});
}

// The chain of OpsText in double precision.
double OpsReference(double x, double y, double s) {
  const double m = x * (s * 0.75), t = std::tanh(m), e = std::exp(y), l = 1 / (1 + std::exp(-x));
  const double ab = std::fabs(y);
  double a = (t + e - l) * std::log(ab) / std::sqrt(ab);
  const double rs = 1 / std::sqrt(ab);
  a = std::isnan(a) ? a : std::max(a, rs);
  a = std::isnan(a) ? a : std::min(a, -t);
  a = (a + std::floor(e) - std::ceil(m)) * 0.5;
  return a + std::nearbyint(y);
}

bool SameBits(const Value& a, const Value& b) {
  if (a.is_tuple != b.is_tuple || a.tuple.size() != b.tuple.size()) return false;
  if (!a.is_tuple) return std::memcmp(a.array->data(), b.array->data(), a.array->byte_size()) == 0;
  for (size_t k = 0; k < a.tuple.size(); ++k) {
    if (!SameBits(a.tuple[k], b.tuple[k])) return false;
  }
  return true;
}

TEST(FusedVector, EveryOpMatchesBlockLoopAndReference) {
  for (int64_t n : {1, 15, 16, 17, 255, 256, 257, 1000, 4099}) {
    std::unique_ptr<Module> keep;
    auto prog = Compile(OpsText(n), &keep);
    ASSERT_NE(prog, nullptr);
    EXPECT_TRUE(prog->has_vector_path());
    Value x = F32({n}, 1), y = F32({n}, 2), s = Scalar(1.5f);
    // Special values where the sizes allow: NaN, infinities, zeros of both signs.
    const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 90.0f, -90.0f};
    for (int64_t i = 0; i < 7 && 3 * i + 2 < n; ++i) {
      x.array->as<float>()[3 * i] = specials[i];
      y.array->as<float>()[3 * i + 2] = specials[(i + 3) % 7];
    }
    std::vector<const Value*> args = {&x, &y, &s};
    FusedRunOptions reg, block;
    block.vector_path = false;
    auto a = prog->Run(args, nullptr, reg);
    auto b = prog->Run(args, nullptr, block);
    ThreadPool pool(2);
    auto c = prog->Run(args, &pool, reg);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_TRUE(SameBits(*a, *b)) << "n=" << n;
    EXPECT_TRUE(SameBits(*a, *c)) << "n=" << n;
    const float* r = a->tuple[0].array->as<float>();
    const float* m = a->tuple[1].array->as<float>();
    EXPECT_EQ(0, std::memcmp(a->tuple[2].array->data(), x.array->data(), x.array->byte_size()));
    for (int64_t i = 0; i < n; ++i) {
      const double xi = x.array->as<float>()[i], yi = y.array->as<float>()[i];
      if (!std::isfinite(xi) || !std::isfinite(yi) || std::fabs(yi) > 80 || xi == 0 || yi == 0) {
        // Special inputs: the exact bits were compared with the block loop above.
        if (std::isnan(xi)) {
          EXPECT_TRUE(std::isnan(r[i]) && std::isnan(m[i])) << i;
        }
        continue;
      }
      EXPECT_EQ(static_cast<float>(xi * 1.125), m[i]) << i;
      const double want = OpsReference(xi, yi, 1.5);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(r[i])) << "n=" << n << " i=" << i;
      } else if (std::isinf(want)) {
        EXPECT_EQ(want, r[i]) << "n=" << n << " i=" << i;
      } else {
        EXPECT_NEAR(want, r[i], 1e-4 * (1 + std::fabs(want))) << "n=" << n << " i=" << i;
      }
    }
  }
}

std::string ChainText(int64_t n, const char* type) {
  constexpr char kText[] = R"(HloModule m
fused {
  x = $T$S parameter(0)
  y = $T$S parameter(1)
  z = $T$S parameter(2)
  two = $T[] constant(2)
  one = $T[] constant(1)
  b2 = $T$S broadcast(two), dimensions={}
  b1 = $T$S broadcast(one), dimensions={}
  m = $T$S multiply(b2, x)
  a = $T$S add(m, b1)
  t = $T$S tanh(a)
  ty = $T$S multiply(t, y)
  e = $T$S exponential(ty)
  ROOT r = $T$S subtract(e, z)
}
ENTRY main {
  a = $T$S parameter(0)
  b = $T$S parameter(1)
  c = $T$S parameter(2)
  ROOT f = $T$S fusion(a, b, c), kind=kLoop, calls=fused
}
)";
  return absl::StrReplaceAll(kText, {{"$S", absl::StrCat("[", n, "]")}, {"$T", type}});
}

TEST(FusedVector, SqrtIsCorrectlyRoundedOnBothPaths) {
  // sqrt(x) + y on both paths must equal std::sqrt then an f32 add, to the bit: a one-ulp
  // sqrt difference between fused paths and the unfused reference once flipped a discrete
  // choice downstream in a corpus module (hloenv_nux_flow_loss).
  constexpr char kText[] = R"(HloModule m
fused {
  x = f32[4099] parameter(0)
  y = f32[4099] parameter(1)
  q = f32[4099] sqrt(x)
  ROOT r = f32[4099] add(q, y)
}
ENTRY main {
  a = f32[4099] parameter(0)
  b = f32[4099] parameter(1)
  ROOT f = f32[4099] fusion(a, b), kind=kLoop, calls=fused
}
)";
  std::unique_ptr<Module> keep;
  auto prog = Compile(kText, &keep);
  ASSERT_NE(prog, nullptr);
  Value x = F32({4099}, 3), y = F32({4099}, 4);
  for (int64_t i = 0; i < 4099; ++i) {  // positive values spread over many binades, denormals too
    x.array->as<float>()[i] = std::ldexp(1.0f + static_cast<float>(i % 97) / 97.0f, static_cast<int>(i % 300) - 149);
  }
  std::vector<const Value*> args = {&x, &y};
  FusedRunOptions reg, block;
  block.vector_path = false;
  for (const FusedRunOptions& opt : {reg, block}) {
    auto out = prog->Run(args, nullptr, opt);
    ASSERT_TRUE(out.ok());
    const float* r = out->array->as<float>();
    for (int64_t i = 0; i < 4099; ++i) {
      const float want = std::sqrt(x.array->as<float>()[i]) + y.array->as<float>()[i];
      ASSERT_EQ(0, std::memcmp(&want, &r[i], 4)) << "vector_path=" << opt.vector_path << " i=" << i;
    }
  }
}

TEST(FusedVector, BigChainStreamsWithSameBitsOnAnyThreadCount) {
  const int64_t n = (int64_t{2} << 20) + 77;  // 4 x 8 MiB streamed: the non-temporal path
  std::unique_ptr<Module> keep;
  auto prog = Compile(ChainText(n, "f32"), &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_TRUE(prog->has_vector_path());
  Value x = F32({n}, 4), y = F32({n}, 5), z = F32({n}, 6);
  std::vector<const Value*> args = {&x, &y, &z};
  FusedRunOptions reg, block;
  block.vector_path = false;
  ThreadPool pool(2);
  auto one = prog->Run(args, nullptr, reg);
  auto two = prog->Run(args, &pool, reg);
  auto old = prog->Run(args, &pool, block);
  ASSERT_TRUE(one.ok() && two.ok() && old.ok());
  EXPECT_TRUE(SameBits(*one, *two));
  EXPECT_TRUE(SameBits(*one, *old));
  const float* r = one->array->as<float>();
  for (int64_t i = 0; i < n; i += 997) {
    const double xi = x.array->as<float>()[i], yi = y.array->as<float>()[i], zi = z.array->as<float>()[i];
    const double want = std::exp(std::tanh(2 * xi + 1) * yi) - zi;
    ASSERT_NEAR(want, r[i], 1e-5 * (1 + std::fabs(want))) << i;
  }
  EXPECT_NEAR(std::exp(std::tanh(2.0 * x.array->as<float>()[n - 1] + 1) * y.array->as<float>()[n - 1]) -
                  z.array->as<float>()[n - 1],
              r[n - 1], 1e-4);
}

TEST(FusedVector, PlainPathOutputsMatchBlockLoopOnAnyThreadCount) {
  // The plain path (every input read in place: micro-blocks of whole sub-blocks, the partial
  // last sub-block on the general path) with an output an op stores directly, one copied from
  // a temporary it shares with later ops and one copied from a parameter; split over 2 threads
  // (>= 64 sub-blocks) without and with non-temporal stores (the second size streams).
  for (int64_t n : {int64_t{3} * 16384 + 77, (int64_t{1} << 21) + 45}) {
    std::unique_ptr<Module> keep;
    auto prog = Compile(OpsText(n), &keep);
    ASSERT_NE(prog, nullptr);
    Value x = F32({n}, 7), y = F32({n}, 8), s = Scalar(-0.75f);
    std::vector<const Value*> args = {&x, &y, &s};
    FusedRunOptions reg, block, whole;
    block.vector_path = false;
    whole.micro_blocks = false;
    ThreadPool pool(2);
    auto one = prog->Run(args, nullptr, reg);
    auto two = prog->Run(args, &pool, reg);
    auto old = prog->Run(args, nullptr, block);
    auto sub = prog->Run(args, &pool, whole);
    ASSERT_TRUE(one.ok() && two.ok() && old.ok() && sub.ok());
    EXPECT_TRUE(SameBits(*one, *two)) << "n=" << n;
    EXPECT_TRUE(SameBits(*one, *old)) << "n=" << n;
    EXPECT_TRUE(SameBits(*one, *sub)) << "n=" << n;
    EXPECT_EQ(0, std::memcmp(one->tuple[2].array->data(), x.array->data(), x.array->byte_size()));
    const float* r = one->tuple[0].array->as<float>();
    const float* m = one->tuple[1].array->as<float>();
    for (int64_t i = 0; i < n; i += 331) {
      const double xi = x.array->as<float>()[i], yi = y.array->as<float>()[i];
      ASSERT_EQ(static_cast<float>(xi * -0.5625), m[i]) << i;
      const double want = OpsReference(xi, yi, -0.75);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(r[i])) << "n=" << n << " i=" << i;
      } else {
        ASSERT_NEAR(want, r[i], 1e-4 * (1 + std::fabs(want))) << "n=" << n << " i=" << i;
      }
    }
  }
}

// Row and column broadcasts, a transpose and a strided slice of parameters, a constant array
// and a reshape, over [R, C] with R*C not a whole number of registers.
TEST(FusedVector, IndexMapsOfParametersAreGathered) {
  constexpr char kText[] = R"(HloModule m
fused {
  w = f32[$C] parameter(0)
  h = f32[$R,1] parameter(1)
  q = f32[$C,$R] parameter(2)
  v = f32[$R,$W] parameter(3)
  hr = f32[$R] reshape(h)
  bw = f32[$R,$C] broadcast(w), dimensions={1}
  bh = f32[$R,$C] broadcast(hr), dimensions={0}
  tq = f32[$R,$C] transpose(q), dimensions={1,0}
  sv = f32[$R,$C] slice(v), slice={[0:$R], [1:$W:2]}
  k = f32[3] constant({0.5, -1, 2})
  bk = f32[$R,$C] broadcast(k), dimensions={0}
  m = f32[$R,$C] multiply(bw, bh)
  a = f32[$R,$C] add(m, tq)
  t = f32[$R,$C] tanh(a)
  u = f32[$R,$C] multiply(t, bk)
  ROOT r = f32[$R,$C] subtract(u, sv)
}
)";
  const int64_t R = 3, C = 131, W = 2 * C + 1;
  const std::string text = absl::StrReplaceAll(
      kText, {{"$R", absl::StrCat(R)}, {"$C", absl::StrCat(C)}, {"$W", absl::StrCat(W)}});
  std::unique_ptr<Module> keep;
  auto prog = Compile(text, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_TRUE(prog->has_vector_path());
  Value w = F32({C}, 1), h = F32({R, 1}, 2), q = F32({C, R}, 3), v = F32({R, W}, 4);
  std::vector<const Value*> args = {&w, &h, &q, &v};
  FusedRunOptions reg, block;
  block.vector_path = false;
  auto a = prog->Run(args, nullptr, reg);
  auto b = prog->Run(args, nullptr, block);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(SameBits(*a, *b));
  const float k[3] = {0.5f, -1.0f, 2.0f};
  for (int64_t i = 0; i < R; ++i) {
    for (int64_t j = 0; j < C; ++j) {
      const double m = static_cast<double>(w.array->as<float>()[j]) * h.array->as<float>()[i];
      const double want = std::tanh(m + q.array->as<float>()[j * R + i]) * k[i] -
                          v.array->as<float>()[i * W + 1 + 2 * j];
      EXPECT_NEAR(want, a->array->as<float>()[i * C + j], 1e-5) << i << "," << j;
    }
  }
}

// A broadcast of a small computed value: computed whole once per run, then gathered.
TEST(FusedVector, BroadcastOfComputedValue) {
  constexpr char kText[] = R"(HloModule m
fused {
  x = f32[37] parameter(0)
  y = f32[9,37] parameter(1)
  e = f32[37] exponential(x)
  b = f32[9,37] broadcast(e), dimensions={1}
  ROOT a = f32[9,37] add(b, y)
})";
  std::unique_ptr<Module> keep;
  auto prog = Compile(kText, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_TRUE(prog->has_vector_path());
  Value x = F32({37}, 7), y = F32({9, 37}, 8);
  FusedRunOptions reg, block;
  block.vector_path = false;
  auto a = prog->Run({&x, &y}, nullptr, reg);
  auto b = prog->Run({&x, &y}, nullptr, block);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(SameBits(*a, *b));
  for (int64_t i = 0; i < 9 * 37; ++i) {
    EXPECT_NEAR(std::exp(x.array->as<float>()[i % 37]) + y.array->as<float>()[i], a->array->as<float>()[i],
                1e-5);
  }
}

TEST(FusedVector, Bf16ChainMatchesBlockLoopBitForBit) {
  // bf16 computes in f32 and rounds to bf16 after each op: the register path must give the
  // block loop's bits, on 1 and 2 threads, including NaN, infinities and rounding ties.
  const int64_t n = 1000;  // not a multiple of the 256-element sub-block
  std::unique_ptr<Module> keep;
  auto prog = Compile(ChainText(n, "bf16"), &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_TRUE(prog->has_vector_path());
  std::vector<Value> in;
  for (uint32_t seed : {1u, 2u, 3u}) {
    Value f = F32({n}, seed);
    auto b = std::make_shared<Buffer>(Shape(PrimitiveType::kBF16, {n}));
    for (int64_t i = 0; i < n; ++i) {  // truncate to bf16
      uint32_t u;
      std::memcpy(&u, &f.array->as<float>()[i], 4);
      b->as<uint16_t>()[i] = static_cast<uint16_t>(u >> 16);
    }
    in.push_back(Value::Array(b));
  }
  // NaN, +-inf, the largest bf16 and values whose f32 results round on ties.
  const uint16_t special[] = {0x7fc0, 0xffc1, 0x7f80, 0xff80, 0x7f7f, 0xff7f, 0x0001, 0x8000};
  for (int64_t i = 0; i < 8; ++i) in[i % 3].array->as<uint16_t>()[i * 7] = special[i];
  FusedRunOptions reg, block;
  block.vector_path = false;
  ThreadPool pool(2);
  auto a = prog->Run({&in[0], &in[1], &in[2]}, nullptr, reg);
  auto b = prog->Run({&in[0], &in[1], &in[2]}, nullptr, block);
  auto c = prog->Run({&in[0], &in[1], &in[2]}, &pool, reg);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(SameBits(*a, *b));
  EXPECT_TRUE(SameBits(*a, *c));
  auto bf = [](const Value& v, int64_t i) {
    const uint32_t u = static_cast<uint32_t>(v.array->as<uint16_t>()[i]) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return static_cast<double>(f);
  };
  for (int64_t i = 0; i < n; ++i) {
    if (i % 7 == 0 && i < 56) continue;  // the special values
    const double want = std::exp(std::tanh(2 * bf(in[0], i) + 1) * bf(in[1], i)) - bf(in[2], i);
    EXPECT_NEAR(want, bf(*a, i), 0.05 * (1 + std::fabs(want))) << i;
  }
}

TEST(FusedVector, UnimplementedProgramsFallBack) {
  const char* kOthers[] = {
      // compare + select (pred values)
      R"(HloModule m
fused {
  x = f32[40] parameter(0)
  y = f32[40] parameter(1)
  p = pred[40] compare(x, y), direction=GT
  ROOT s = f32[40] select(p, x, y)
})",
      // pad (an index map with fill values)
      R"(HloModule m
fused {
  x = f32[8] parameter(0)
  c = f32[] constant(0)
  p = f32[12] pad(x, c), padding=2_2
  ROOT e = f32[12] exponential(p)
})",
  };
  for (const char* text : kOthers) {
    std::unique_ptr<Module> keep;
    auto prog = Compile(text, &keep);
    ASSERT_NE(prog, nullptr);
    EXPECT_FALSE(prog->has_vector_path());
  }
}

}  // namespace
}  // namespace hlox::rt
