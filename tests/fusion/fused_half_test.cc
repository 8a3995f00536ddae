// f16 (and bf16) on the fused loop's register path (runtime/fused_vector*, math/half.h): the
// inline conversions must give literal.h's bits for every f16 pattern and for floats around
// every rounding boundary (ties, denormals, overflow to inf, NaN); f16/bf16 programs (a chain
// with transcendental ops, a row-vector bias add, converts between the three types) must give
// the block loop's and the unfused kernels' bits (any NaN matching any NaN across paths), and
// identical bits on 1 and 2 threads, for sizes that are not whole registers or sub-blocks and
// with NaN, infinities and denormals in the inputs.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/literal.h"
#include "runtime/core/executor.h"
#include "runtime/math/half.h"
#include "tests/fusion/fused_test_util.h"
#include "tests/test_util.h"

namespace hlox::rt {
namespace {

using testing::Compile;

// On every instruction-set level the CPU has (the vector conversions are per level).
TEST(FusedHalf, F16WideningMatchesLiteralForEveryPattern) {
  hlox::testing::ForEachIsaLevel([](IsaLevel) {
  std::vector<uint16_t> all(65536 + 5);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> got(all.size());
  fused::HalfToF32(fused::kHalfF16, all.data(), got.data(), static_cast<int64_t>(all.size()));  // 5-element tail
  for (size_t i = 0; i < all.size(); ++i) {
    const float want = HalfToFloat(all[i]);
    ASSERT_EQ(0, std::memcmp(&want, &got[i], 4)) << std::hex << all[i];
  }
  std::vector<float> bgot(all.size());
  fused::HalfToF32(fused::kHalfBf16, all.data(), bgot.data(), static_cast<int64_t>(all.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    const float want = Bf16ToFloat(all[i]);
    ASSERT_EQ(0, std::memcmp(&want, &bgot[i], 4)) << std::hex << all[i];
  }
  });
}

TEST(FusedHalf, NarrowingAndRoundingMatchLiteral) {
  hlox::testing::ForEachIsaLevel([](IsaLevel) {
  // Every sign/exponent/top-mantissa pattern with low bits at and around the f16 and bf16
  // rounding boundaries (ties to even, just below and above), plus NaN payloads.
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff, 0x2000, 0x7fff, 0x8000, 0x8001, 0xffff};
  std::vector<float> x;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint32_t lo : lows) {
      const uint32_t u = (hi << 16) | lo;
      float f;
      std::memcpy(&f, &u, 4);
      x.push_back(f);
    }
  }
  x.resize(x.size() - 3);  // not a whole number of registers
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<uint16_t> h(n), b(n);
  fused::F32ToHalf(fused::kHalfF16, x.data(), h.data(), n);
  fused::F32ToHalf(fused::kHalfBf16, x.data(), b.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(FloatToHalf(x[i]), h[i]) << i;
    ASSERT_EQ(FloatToBf16(x[i]), b[i]) << i;
  }
  std::vector<float> r = x;
  fused::RoundF16InPlace(r.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const float want = HalfToFloat(FloatToHalf(x[i]));
    ASSERT_EQ(0, std::memcmp(&want, &r[i], 4)) << i;
  }
  });
}

// `body` over type T and size N, as a fusion when `fused`, else as entry instructions; the
// parameters are declared by `params`.
std::string ModuleText(const std::string& params, const std::string& body, const std::string& root_type,
                   const std::string& args, bool fused, const std::string& type, int64_t n) {
  std::string text = fused ? "HloModule f\nfused {\n" + params + body + "}\nENTRY main {\n" + params +
                                 "  ROOT f = " + root_type + " fusion(" + args + "), kind=kLoop, calls=fused\n}\n"
                           : "HloModule u\nENTRY main {\n" + params + body + "}\n";
  return absl::StrReplaceAll(text, {{"$T", type}, {"$N", std::to_string(n)}});
}

// Sets some elements of every half input to NaN, infinities, denormals, the largest finite
// value and zeros of both signs.
void PlantSpecials(std::vector<Value>& in, bool f16) {
  const uint16_t f16s[] = {0x7e00, 0xfe01, 0x7d00, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x0001, 0x83ff, 0x8000, 0x0000};
  const uint16_t bf16s[] = {0x7fc0, 0xffc1, 0x7fa0, 0x7f80, 0xff80, 0x7f7f, 0xff7f, 0x0001, 0x807f, 0x8000, 0x0000};
  for (size_t p = 0; p < in.size(); ++p) {
    Buffer& b = *in[p].array;
    if (b.shape().element_type() != (f16 ? PrimitiveType::kF16 : PrimitiveType::kBF16)) continue;
    for (int64_t i = 0; i < 11 && i * 13 + static_cast<int64_t>(p) < b.element_count(); ++i) {
      b.as<uint16_t>()[i * 13 + p] = f16 ? f16s[i] : bf16s[i];
    }
  }
}

// True when the es-byte values at a and b have the same bits or are both NaN (NaN signs and
// payloads are not specified across paths: Eigen's log makes all-ones NaNs, the unfused
// kernels the default one).
bool SameOrBothNaN(const uint8_t* a, const uint8_t* b, int64_t es, bool f16) {
  if (std::memcmp(a, b, es) == 0) return true;
  auto nan = [&](const uint8_t* p) {
    if (es == 4) {
      uint32_t u;
      std::memcpy(&u, p, 4);
      return (u & 0x7fffffffu) > 0x7f800000u;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return f16 ? (h & 0x7fff) > 0x7c00 : (h & 0x7fff) > 0x7f80;
  };
  return nan(a) && nan(b);
}

// Runs `fused_text`'s fusion (register path on 1 and 2 threads, block loop) and the unfused
// module on the same inputs; expects identical bits from all of them.
void ExpectSameBits(const std::string& fused_text, const std::string& unfused_text, bool f16,
                    bool expect_register_path) {
  std::unique_ptr<Module> keep;
  auto prog = Compile(fused_text, &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_EQ(expect_register_path, prog->has_vector_path());
  auto um = ParseModule(unfused_text);
  ASSERT_TRUE(um.ok()) << um.status();
  std::vector<Value> in = MakeSeededInputs(**um, 5);
  PlantSpecials(in, f16);
  std::vector<const Value*> args;
  for (const Value& v : in) args.push_back(&v);
  FusedRunOptions reg, block;
  block.vector_path = false;
  ThreadPool pool(2);
  auto a = prog->Run(args, nullptr, reg);
  auto b = prog->Run(args, &pool, reg);
  auto c = prog->Run(args, nullptr, block);
  auto ue = Executor::Create(**um, ExecOptions{1, 1});
  ASSERT_TRUE(ue.ok());
  auto u = (*ue)->Run(in);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && u.ok());
  // The register path on 1 and 2 threads: the same bits, NaNs included.
  ASSERT_EQ(a->array->byte_size(), b->array->byte_size());
  EXPECT_EQ(0, std::memcmp(a->array->data(), b->array->data(), a->array->byte_size()));
  // Against the block loop and the unfused kernels: the same bits, or NaN on both sides.
  const Buffer& want = *u->array;
  const Value* outs[] = {&*a, &*c};
  for (const Value* got : outs) {
    ASSERT_EQ(want.byte_size(), got->array->byte_size());
    const int64_t n = want.element_count(), es = want.byte_size() / n;
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameOrBothNaN(static_cast<const uint8_t*>(want.data()) + i * es,
                                static_cast<const uint8_t*>(got->array->data()) + i * es, es, f16))
          << "element " << i << " of " << (got == &*a ? "register path" : got == &*b ? "2 threads" : "block loop")
          << ": " << std::hex << (es == 2 ? want.as<uint16_t>()[i] : want.as<uint32_t>()[i]) << " vs "
          << (es == 2 ? got->array->as<uint16_t>()[i] : got->array->as<uint32_t>()[i]);
    }
  }
}

TEST(FusedHalf, ChainMatchesBlockLoopAndUnfusedBitForBit) {
  const std::string params = "  x = $T[$N] parameter(0)\n  y = $T[$N] parameter(1)\n  z = $T[$N] parameter(2)\n";
  const std::string body = R"(  two = $T[] constant(2)
  one = $T[] constant(1)
  b2 = $T[$N] broadcast(two), dimensions={}
  b1 = $T[$N] broadcast(one), dimensions={}
  m = $T[$N] multiply(b2, x)
  a = $T[$N] add(m, b1)
  t = $T[$N] tanh(a)
  ty = $T[$N] multiply(t, y)
  e = $T[$N] exponential(ty)
  ay = $T[$N] abs(y)
  l = $T[$N] log(ay)
  s = $T[$N] sqrt(ay)
  d = $T[$N] divide(e, s)
  g = $T[$N] logistic(z)
  mx = $T[$N] maximum(d, l)
  mn = $T[$N] minimum(mx, g)
  ROOT r = $T[$N] subtract(mn, z)
)";
  for (const char* type : {"f16", "bf16"}) {
    for (int64_t n : {int64_t{1000}, int64_t{77}, int64_t{4099}}) {
      SCOPED_TRACE(std::string(type) + " n=" + std::to_string(n));
      const bool f16 = std::string(type) == "f16";
      ExpectSameBits(ModuleText(params, body, "$T[$N]", "x, y, z", true, type, n),
                     ModuleText(params, body, "", "", false, type, n), f16, true);
    }
  }
}

TEST(FusedHalf, BiasAddAndConvertsMatchBitForBit) {
  // A row-vector bias (an index map of a half parameter) added in the half type, then
  // converted through the other types: f16 -> f32 -> bf16 -> f16.
  const std::string params = "  b = $T[131] parameter(0)\n  x = $T[7,131] parameter(1)\n";
  const std::string body = R"(  bb = $T[7,131] broadcast(b), dimensions={1}
  s = $T[7,131] add(x, bb)
  w = f32[7,131] convert(s)
  e = f32[7,131] exponential(w)
  h = bf16[7,131] convert(e)
  k = $T[7,131] convert(h)
  ROOT r = $T[7,131] multiply(k, s)
)";
  for (const char* type : {"f16", "bf16"}) {
    SCOPED_TRACE(type);
    const bool f16 = std::string(type) == "f16";
    ExpectSameBits(ModuleText(params, body, "$T[7,131]", "b, x", true, type, 0),
                   ModuleText(params, body, "", "", false, type, 0), f16, true);
  }
  // The plain bias add: its final rounding is left to the narrowing store.
  const std::string plain = "  bb = $T[7,131] broadcast(b), dimensions={1}\n  ROOT s = $T[7,131] add(x, bb)\n";
  for (const char* type : {"f16", "bf16"}) {
    SCOPED_TRACE(std::string("plain ") + type);
    ExpectSameBits(ModuleText(params, plain, "$T[7,131]", "b, x", true, type, 0),
                   ModuleText(params, plain, "", "", false, type, 0), std::string(type) == "f16", true);
  }
}

TEST(FusedHalf, BigF16ChainStreamsWithSameBitsOnAnyThreadCount) {
  const int64_t n = (int64_t{4} << 20) + 37;  // 4 x 8 MiB of f16: the streaming path
  const std::string params = "  x = $T[$N] parameter(0)\n  y = $T[$N] parameter(1)\n";
  const std::string body = "  t = $T[$N] tanh(x)\n  ROOT r = $T[$N] add(t, y)\n";
  std::unique_ptr<Module> keep;
  auto prog = Compile(ModuleText(params, body, "$T[$N]", "x, y", true, "f16", n), &keep);
  ASSERT_NE(prog, nullptr);
  EXPECT_TRUE(prog->has_vector_path());
  auto um = ParseModule(ModuleText(params, body, "", "", false, "f16", n));
  ASSERT_TRUE(um.ok());
  std::vector<Value> in = MakeSeededInputs(**um, 9);
  FusedRunOptions reg, block;
  block.vector_path = false;
  ThreadPool pool(2);
  auto a = prog->Run({&in[0], &in[1]}, nullptr, reg);
  auto b = prog->Run({&in[0], &in[1]}, &pool, reg);
  auto c = prog->Run({&in[0], &in[1]}, &pool, block);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(0, std::memcmp(a->array->data(), b->array->data(), a->array->byte_size()));
  EXPECT_EQ(0, std::memcmp(a->array->data(), c->array->data(), a->array->byte_size()));
  // An independent reference on a sample: f16(f16(tanh(x)) + y) within f16 rounding.
  for (int64_t i = 0; i < n; i += 4099) {
    const float x = HalfToFloat(in[0].array->as<uint16_t>()[i]), y = HalfToFloat(in[1].array->as<uint16_t>()[i]);
    const float want = HalfToFloat(FloatToHalf(HalfToFloat(FloatToHalf(std::tanh(x))) + y));
    EXPECT_NEAR(want, HalfToFloat(a->array->as<uint16_t>()[i]), 2e-3f * (1 + std::fabs(want))) << i;
  }
}

}  // namespace
}  // namespace hlox::rt
