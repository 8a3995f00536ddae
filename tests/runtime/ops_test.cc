// Elementwise, convert and data-movement kernels against plain references on seeded inputs:
// odd and zero-sized shapes, scalar broadcasts, every integer and float dtype, layouts.
#include <cmath>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "runtime/core/kernel_util.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::RoundTo;
using testing::RunText;
using testing::S;
using testing::ToDoubles;
using testing::ToInts;
using testing::Uniform;

const char* kFloatTypes[] = {"f16", "bf16", "f32", "f64"};
const char* kIntTypes[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};

double Tol(const std::string& t) {
  if (t == "f16") return 2e-3;
  if (t == "bf16") return 1.6e-2;
  if (t == "f32") return 2e-6;
  return 1e-13;
}

bool Close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want));
}

std::string Module1(const std::string& op, const std::string& in_shape, const std::string& out_shape,
                    const std::string& extra = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", in_shape, " parameter(0)\n  ROOT r = ", out_shape, " ", op,
                      "(a)", extra, "\n}\n");
}
std::string Module2(const std::string& op, const std::string& in_shape, const std::string& out_shape,
                    const std::string& extra = "") {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", in_shape, " parameter(0)\n  b = ", in_shape,
                      " parameter(1)\n  ROOT r = ", out_shape, " ", op, "(a, b)", extra, "\n}\n");
}

TEST(ElementwiseTest, FloatUnary) {
  std::vector<std::pair<std::string, std::function<double(double)>>> ops = {
      {"abs", [](double x) { return std::fabs(x); }},        {"negate", [](double x) { return -x; }},
      {"exponential", [](double x) { return std::exp(x); }}, {"log", [](double x) { return std::log(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},       {"rsqrt", [](double x) { return 1 / std::sqrt(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},       {"sine", [](double x) { return std::sin(x); }},
      {"cosine", [](double x) { return std::cos(x); }},      {"tan", [](double x) { return std::tan(x); }},
      {"floor", [](double x) { return std::floor(x); }},     {"ceil", [](double x) { return std::ceil(x); }},
      {"sign", [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }},
      {"round-nearest-afz", [](double x) { return std::round(x); }},
      {"round-nearest-even", [](double x) { double r = std::round(x); if (std::fabs(x - std::trunc(x)) == 0.5) r = 2 * std::round(x / 2); return r; }},
      {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"exponential-minus-one", [](double x) { return std::expm1(x); }},
      {"log-plus-one", [](double x) { return std::log1p(x); }},
      {"erf", [](double x) { return std::erf(x); }},         {"cbrt", [](double x) { return std::cbrt(x); }},
  };
  for (const char* t : kFloatTypes) {
    for (const char* dims : {"[5,7]", "[0,3]", "[]"}) {
      std::string shape = absl::StrCat(t, dims);
      PrimitiveType pt = S(shape).element_type();
      // Multiples of 0.25 in [-3, 3) exercise rounding ties; others random.
      auto gen = [&](int64_t i) { double u = Uniform(3, -3, 3)(i); return i % 3 == 0 ? std::round(u * 4) / 4 : u; };
      Value a = MakeArray(S(shape), gen);
      std::vector<double> in = ToDoubles(a);
      for (auto& [op, ref] : ops) {
        auto out = RunText(Module1(op, shape, shape), {a});
        ASSERT_TRUE(out.ok()) << op << " " << shape << ": " << out.status().message();
        std::vector<double> got = ToDoubles(*out);
        ASSERT_EQ(got.size(), in.size());
        for (size_t i = 0; i < in.size(); ++i) {
          double want = RoundTo(pt, ref(in[i]));
          ASSERT_TRUE(Close(got[i], want, Tol(t))) << op << " " << shape << " x=" << in[i] << " got " << got[i] << " want " << want;
        }
      }
      auto fin = RunText(Module1("is-finite", shape, absl::StrCat("pred", dims)), {a});
      ASSERT_TRUE(fin.ok());
      for (int64_t v : ToInts(*fin)) EXPECT_EQ(v, 1);
    }
  }
}

TEST(ElementwiseTest, FloatBinaryAndCompare) {
  std::vector<std::pair<std::string, std::function<double(double, double)>>> ops = {
      {"add", [](double x, double y) { return x + y; }},      {"subtract", [](double x, double y) { return x - y; }},
      {"multiply", [](double x, double y) { return x * y; }}, {"divide", [](double x, double y) { return x / y; }},
      {"maximum", [](double x, double y) { return std::max(x, y); }},
      {"minimum", [](double x, double y) { return std::min(x, y); }},
      {"power", [](double x, double y) { return std::pow(x, y); }},
      {"remainder", [](double x, double y) { return std::fmod(x, y); }},
      {"atan2", [](double x, double y) { return std::atan2(x, y); }},
  };
  for (const char* t : kFloatTypes) {
    std::string shape = absl::StrCat(t, "[3,11]");
    PrimitiveType pt = S(shape).element_type();
    Value a = MakeArray(S(shape), Uniform(1, -2, 2)), b = MakeArray(S(shape), Uniform(2, -2, 2));
    std::vector<double> x = ToDoubles(a), y = ToDoubles(b);
    for (auto& [op, ref] : ops) {
      auto out = RunText(Module2(op, shape, shape), {a, b});
      ASSERT_TRUE(out.ok()) << op << ": " << out.status().message();
      std::vector<double> got = ToDoubles(*out);
      for (size_t i = 0; i < x.size(); ++i) {
        double want = RoundTo(pt, ref(x[i], y[i]));
        // f16/bf16 compute in f32 then round once: allow one ulp of the narrow type.
        ASSERT_TRUE(Close(got[i], want, Tol(t) * 2)) << op << " " << t << " " << x[i] << "," << y[i] << " got " << got[i];
      }
    }
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      auto out = RunText(Module2("compare", shape, absl::StrCat("pred[3,11]"), absl::StrCat(", direction=", dir)), {a, a});
      ASSERT_TRUE(out.ok()) << out.status().message();
      std::vector<int64_t> got = ToInts(*out);
      bool eq_like = std::string(dir) == "EQ" || std::string(dir) == "LE" || std::string(dir) == "GE";
      for (int64_t v : got) EXPECT_EQ(v, eq_like ? 1 : 0) << dir;
      auto out2 = RunText(Module2("compare", shape, "pred[3,11]", absl::StrCat(", direction=", dir)), {a, b});
      ASSERT_TRUE(out2.ok());
      std::vector<int64_t> g2 = ToInts(*out2);
      for (size_t i = 0; i < x.size(); ++i) {
        std::string d = dir;
        bool want = d == "EQ" ? x[i] == y[i] : d == "NE" ? x[i] != y[i] : d == "LT" ? x[i] < y[i]
                  : d == "LE" ? x[i] <= y[i] : d == "GT" ? x[i] > y[i] : x[i] >= y[i];
        EXPECT_EQ(g2[i], want ? 1 : 0) << dir;
      }
    }
  }
}

TEST(ElementwiseTest, NanSemanticsAndTotalOrder) {
  const double nan = std::nan("");
  std::vector<double> xs = {nan, 1.0, -0.0, 0.0, -INFINITY};
  std::vector<double> ys = {1.0, nan, 0.0, -0.0, nan};
  Value a = MakeArray(S("f32[5]"), [&](int64_t i) { return xs[i]; });
  Value b = MakeArray(S("f32[5]"), [&](int64_t i) { return ys[i]; });
  auto mx = RunText(Module2("maximum", "f32[5]", "f32[5]"), {a, b});
  ASSERT_TRUE(mx.ok());
  std::vector<double> m = ToDoubles(*mx);
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]) && std::isnan(m[4]));
  auto lt = RunText(Module2("compare", "f32[5]", "pred[5]", ", direction=LT, type=TOTALORDER"), {a, b});
  ASSERT_TRUE(lt.ok());
  // +NaN is above everything; -0 < +0 in total order.
  EXPECT_EQ(ToInts(*lt), (std::vector<int64_t>{0, 1, 1, 0, 1}));
}

// Wraps v to a `bits`-wide signed or unsigned integer.
int64_t Wrap(uint64_t v, int bits, bool is_signed) {
  if (bits == 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (is_signed && (v >> (bits - 1))) return static_cast<int64_t>(v | ~mask);
  return static_cast<int64_t>(v);
}

TEST(ElementwiseTest, IntegerOps) {
  for (const char* t : kIntTypes) {
    std::string shape = absl::StrCat(t, "[4,9]");
    PrimitiveType pt = S(shape).element_type();
    bool sg = IsSignedInt(pt);
    int bits = PrimitiveBitWidth(pt);
    Value a = MakeArray(S(shape), [&](int64_t i) { return std::floor(Uniform(5, sg ? -20 : 0, 40)(i)); });
    Value b = MakeArray(S(shape), [&](int64_t i) { return i % 7 == 0 ? 0.0 : std::floor(Uniform(6, sg ? -5 : 0, bits + 3)(i)); });
    std::vector<int64_t> x = ToInts(a), y = ToInts(b);
    auto w = [&](uint64_t v) { return Wrap(v, bits, sg); };
    auto as_unsigned = [&](int64_t v) { return static_cast<uint64_t>(Wrap(static_cast<uint64_t>(v), bits, false)); };
    int64_t min_v = sg ? Wrap(uint64_t{1} << (bits - 1), bits, true) : 0;
    std::vector<std::pair<std::string, std::function<int64_t(int64_t, int64_t)>>> ops = {
        {"add", [&](int64_t p, int64_t q) { return w(p + q); }},
        {"subtract", [&](int64_t p, int64_t q) { return w(p - q); }},
        {"multiply", [&](int64_t p, int64_t q) { return w(static_cast<uint64_t>(p) * static_cast<uint64_t>(q)); }},
        {"divide", [&](int64_t p, int64_t q) { return q == 0 ? w(~uint64_t{0}) : (sg && p == min_v && q == -1) ? p : w(sg ? p / q : static_cast<int64_t>(as_unsigned(p) / as_unsigned(q))); }},
        {"remainder", [&](int64_t p, int64_t q) { return q == 0 ? p : (sg && p == min_v && q == -1) ? 0 : w(sg ? p % q : static_cast<int64_t>(as_unsigned(p) % as_unsigned(q))); }},
        {"maximum", [&](int64_t p, int64_t q) { return std::max(p, q); }},
        {"minimum", [&](int64_t p, int64_t q) { return std::min(p, q); }},
        {"and", [&](int64_t p, int64_t q) { return w(p & q); }},
        {"or", [&](int64_t p, int64_t q) { return w(p | q); }},
        {"xor", [&](int64_t p, int64_t q) { return w(p ^ q); }},
        {"shift-left", [&](int64_t p, int64_t q) { return as_unsigned(q) >= static_cast<uint64_t>(bits) ? 0 : w(as_unsigned(p) << as_unsigned(q)); }},
        {"shift-right-logical", [&](int64_t p, int64_t q) { return as_unsigned(q) >= static_cast<uint64_t>(bits) ? 0 : w(as_unsigned(p) >> as_unsigned(q)); }},
        {"shift-right-arithmetic", [&](int64_t p, int64_t q) {
           int64_t sp = Wrap(as_unsigned(p), bits, true);
           return as_unsigned(q) >= static_cast<uint64_t>(bits) ? w(sp < 0 ? ~uint64_t{0} : 0) : w(static_cast<uint64_t>(sp >> as_unsigned(q))); }},
        {"power", [&](int64_t p, int64_t q) {
           if (q < 0) return int64_t{p == 1 ? 1 : 0};
           uint64_t r = 1;
           for (int64_t k = 0; k < q; ++k) r *= static_cast<uint64_t>(p);
           return w(r); }},
    };
    for (auto& [op, ref] : ops) {
      auto out = RunText(Module2(op, shape, shape), {a, b});
      ASSERT_TRUE(out.ok()) << op << " " << t << ": " << out.status().message();
      std::vector<int64_t> got = ToInts(*out);
      for (size_t i = 0; i < x.size(); ++i) {
        int64_t want = ref(x[i], y[i]);
        if (!sg) want = static_cast<int64_t>(as_unsigned(want));
        ASSERT_EQ(as_unsigned(got[i]), as_unsigned(want)) << op << " " << t << " " << x[i] << "," << y[i];
      }
    }
    std::vector<std::pair<std::string, std::function<int64_t(int64_t)>>> unary = {
        {"negate", [&](int64_t p) { return w(0 - static_cast<uint64_t>(p)); }},
        {"abs", [&](int64_t p) { return p < 0 ? w(0 - static_cast<uint64_t>(p)) : p; }},
        {"not", [&](int64_t p) { return w(~static_cast<uint64_t>(p)); }},
        {"sign", [&](int64_t p) { return int64_t{p > 0 ? 1 : p < 0 ? -1 : 0}; }},
        {"popcnt", [&](int64_t p) { uint64_t u = as_unsigned(p); int c = 0; while (u) { c += u & 1; u >>= 1; } return int64_t{c}; }},
        {"count-leading-zeros", [&](int64_t p) { uint64_t u = as_unsigned(p); int c = 0; for (int k = bits - 1; k >= 0 && !((u >> k) & 1); --k) ++c; return int64_t{c}; }},
    };
    for (auto& [op, ref] : unary) {
      auto out = RunText(Module1(op, shape, shape), {a});
      ASSERT_TRUE(out.ok()) << op << " " << t << ": " << out.status().message();
      std::vector<int64_t> got = ToInts(*out);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_EQ(as_unsigned(got[i]), as_unsigned(ref(x[i]))) << op << " " << t << " " << x[i];
      }
    }
  }
}

TEST(ElementwiseTest, SelectClampPredAndComplex) {
  const char* text = R"(HloModule m
ENTRY e {
  p = pred[] parameter(0)
  a = f32[2,5] parameter(1)
  b = f32[2,5] parameter(2)
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.25)
  s = f32[2,5] select(p, a, b)
  c = f32[2,5] clamp(lo, s, hi)
  ROOT t = (f32[2,5], f32[2,5]) tuple(s, c)
}
)";
  Value a = MakeArray(S("f32[2,5]"), Uniform(1, -1, 1)), b = MakeArray(S("f32[2,5]"), Uniform(2, -1, 1));
  for (int pv : {0, 1}) {
    Value p = MakeArray(S("pred[]"), [&](int64_t) { return pv; });
    auto out = RunText(text, {p, a, b});
    ASSERT_TRUE(out.ok()) << out.status().message();
    std::vector<double> s = ToDoubles(out->tuple[0]), c = ToDoubles(out->tuple[1]);
    std::vector<double> src = ToDoubles(pv ? a : b);
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(s[i], src[i]);
      EXPECT_EQ(c[i], std::min(std::max(src[i], -0.5), 0.25));
    }
  }
  Value x = MakeArray(S("pred[6]"), [](int64_t i) { return i & 1; });
  Value y = MakeArray(S("pred[6]"), [](int64_t i) { return (i >> 1) & 1; });
  auto andv = RunText(Module2("and", "pred[6]", "pred[6]"), {x, y});
  auto orv = RunText(Module2("xor", "pred[6]", "pred[6]"), {x, y});
  ASSERT_TRUE(andv.ok() && orv.ok());
  EXPECT_EQ(ToInts(*andv), (std::vector<int64_t>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(ToInts(*orv), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  const char* cx = R"(HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  c = c64[3] complex(a, b)
  m = c64[3] multiply(c, c)
  r = f32[3] real(m)
  i = f32[3] imag(m)
  ab = f32[3] abs(c)
  ROOT t = (f32[3], f32[3], f32[3]) tuple(r, i, ab)
}
)";
  Value ra = MakeArray(S("f32[3]"), [](int64_t i) { return i + 1.0; });
  Value ib = MakeArray(S("f32[3]"), [](int64_t i) { return 2.0 - i; });
  auto out = RunText(cx, {ra, ib});
  ASSERT_TRUE(out.ok()) << out.status().message();
  for (int i = 0; i < 3; ++i) {
    double re = i + 1.0, im = 2.0 - i;
    EXPECT_NEAR(ToDoubles(out->tuple[0])[i], re * re - im * im, 1e-6);
    EXPECT_NEAR(ToDoubles(out->tuple[1])[i], 2 * re * im, 1e-6);
    EXPECT_NEAR(ToDoubles(out->tuple[2])[i], std::hypot(re, im), 1e-6);
  }
}

TEST(ConvertTest, SaturationRoundingAndWrap) {
  std::vector<double> vals = {std::nan(""), INFINITY, -INFINITY, 3e9, -3e9, 2.9, -2.9, 127.5, -128.7, 255.9, 0.0};
  Value f = MakeArray(S("f32[11]"), [&](int64_t i) { return vals[i]; });
  auto conv = [&](const std::string& to) {
    auto out = RunText(Module1("convert", "f32[11]", to + "[11]"), {f});
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? ToInts(*out) : std::vector<int64_t>();
  };
  EXPECT_EQ(conv("s32"), (std::vector<int64_t>{0, 2147483647, -2147483648LL, 2147483647, -2147483648LL, 2, -2, 127, -128, 255, 0}));
  EXPECT_EQ(conv("s8"), (std::vector<int64_t>{0, 127, -128, 127, -128, 2, -2, 127, -128, 127, 0}));
  EXPECT_EQ(conv("u8"), (std::vector<int64_t>{0, 255, 0, 255, 0, 2, 0, 127, 0, 255, 0}));
  EXPECT_EQ(conv("pred"), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0}));
  // bf16 round to nearest even at ties: 1+2^-8 -> 1, 1+3*2^-8 -> 1+2^-6.
  Value t = MakeArray(S("f32[3]"), [](int64_t i) { return std::vector<double>{1 + 0x1p-8, 1 + 3 * 0x1p-8, -1.5}[i]; });
  auto bf = RunText(Module1("convert", "f32[3]", "bf16[3]"), {t});
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ(ToDoubles(*bf), (std::vector<double>{1.0, 1 + 0x1p-6, -1.5}));
  Value i = MakeArray(S("s32[3]"), [](int64_t k) { return std::vector<double>{300, -1, 65537}[k]; });
  auto s8 = RunText(Module1("convert", "s32[3]", "s8[3]"), {i});
  auto u16 = RunText(Module1("convert", "s32[3]", "u16[3]"), {i});
  auto h = RunText(Module1("convert", "s32[3]", "f16[3]"), {i});
  ASSERT_TRUE(s8.ok() && u16.ok() && h.ok());
  EXPECT_EQ(ToInts(*s8), (std::vector<int64_t>{44, -1, 1}));
  EXPECT_EQ(ToInts(*u16), (std::vector<int64_t>{300, 65535, 1}));
  EXPECT_EQ(ToDoubles(*h), (std::vector<double>{300, -1, INFINITY}));
}

TEST(ConvertTest, BitcastConvertWidths) {
  Value f = MakeArray(S("f32[3]"), [](int64_t i) { return 1.5 * (i + 1); });
  auto u = RunText(Module1("bitcast-convert", "f32[3]", "u32[3]"), {f});
  auto b = RunText(Module1("bitcast-convert", "f32[3]", "u8[3,4]"), {f});
  ASSERT_TRUE(u.ok() && b.ok()) << u.status().message() << b.status().message();
  for (int k = 0; k < 3; ++k) {
    float v = 1.5f * (k + 1);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    EXPECT_EQ(static_cast<uint32_t>(ToInts(*u)[k]), bits);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(ToInts(*b)[k * 4 + j], (bits >> (8 * j)) & 0xff);
  }
  auto back = RunText(Module1("bitcast-convert", "u8[3,4]", "f32[3]"), {*b});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ToDoubles(*back), ToDoubles(f));
}

// Runs `op` on an iota-like f32 input of `in_shape` and checks out[idx] == in[map(idx)] (or pad).
void CheckMovement(const std::string& text, const std::vector<Value>& args,
                   const std::function<double(const std::vector<int64_t>&)>& want, const Shape& out_shape) {
  auto out = RunText(text, args);
  ASSERT_TRUE(out.ok()) << out.status().message() << "\n" << text;
  std::vector<double> got = ToDoubles(*out);
  ASSERT_EQ(static_cast<int64_t>(got.size()), out_shape.ElementCount()) << text;
  if (got.empty()) return;
  std::vector<int64_t> idx(out_shape.rank(), 0);
  int64_t i = 0;
  do {
    ASSERT_EQ(got[i], want(idx)) << text << " at flat " << i;
    ++i;
  } while (NextIndex(idx, out_shape.dims()));
}

TEST(DataMovementTest, BroadcastTransposeSliceReverse) {
  Value in = MakeArray(S("f32[2,3,4]"), [](int64_t i) { return i; });
  auto flat = [](int64_t a, int64_t b, int64_t c) { return static_cast<double>(a * 12 + b * 4 + c); };
  Value v3 = MakeArray(S("f32[3]"), [](int64_t i) { return i + 10; });
  CheckMovement(Module1("broadcast", "f32[3]", "f32[2,3,5]", ", dimensions={1}"), {v3},
                [](const std::vector<int64_t>& x) { return x[1] + 10.0; }, S("f32[2,3,5]"));
  CheckMovement(Module1("transpose", "f32[2,3,4]", "f32[4,2,3]", ", dimensions={2,0,1}"), {in},
                [&](const std::vector<int64_t>& x) { return flat(x[1], x[2], x[0]); }, S("f32[4,2,3]"));
  CheckMovement(Module1("slice", "f32[2,3,4]", "f32[1,2,2]", ", slice={[1:2], [0:3:2], [1:4:2]}"), {in},
                [&](const std::vector<int64_t>& x) { return flat(1 + x[0], 2 * x[1], 1 + 2 * x[2]); }, S("f32[1,2,2]"));
  CheckMovement(Module1("reverse", "f32[2,3,4]", "f32[2,3,4]", ", dimensions={0,2}"), {in},
                [&](const std::vector<int64_t>& x) { return flat(1 - x[0], x[1], 3 - x[2]); }, S("f32[2,3,4]"));
  CheckMovement(Module1("reshape", "f32[2,3,4]", "f32[6,4]"), {in},
                [&](const std::vector<int64_t>& x) { return static_cast<double>(x[0] * 4 + x[1]); }, S("f32[6,4]"));
  Value empty = MakeArray(S("f32[0,3]"), [](int64_t) { return 0; });
  CheckMovement(Module1("transpose", "f32[0,3]", "f32[3,0]", ", dimensions={1,0}"), {empty},
                [](const std::vector<int64_t>&) { return 0.0; }, S("f32[3,0]"));
}

TEST(DataMovementTest, ConcatPadIotaDynamicSlices) {
  const char* concat = R"(HloModule m
ENTRY e {
  a = s32[2,2] parameter(0)
  b = s32[2,0] parameter(1)
  c = s32[2,3] parameter(2)
  ROOT r = s32[2,5] concatenate(a, b, c), dimensions={1}
}
)";
  Value a = MakeArray(S("s32[2,2]"), [](int64_t i) { return i; });
  Value b = MakeArray(S("s32[2,0]"), [](int64_t i) { return i; });
  Value c = MakeArray(S("s32[2,3]"), [](int64_t i) { return 100 + i; });
  CheckMovement(concat, {a, b, c}, [](const std::vector<int64_t>& x) {
    return x[1] < 2 ? static_cast<double>(x[0] * 2 + x[1]) : 100.0 + x[0] * 3 + (x[1] - 2);
  }, S("s32[2,5]"));
  // pad: low -1 (drops the first element), interior 1, high 2 on dim 1; low 1 on dim 0.
  const char* pad = R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  z = f32[] constant(-7)
  ROOT r = f32[3,6] pad(a, z), padding=1_0x-1_2_1
}
)";
  Value pa = MakeArray(S("f32[2,3]"), [](int64_t i) { return i; });
  CheckMovement(pad, {pa}, [](const std::vector<int64_t>& x) {
    int64_t r = x[0] - 1, q = x[1] + 1;  // undo low padding
    if (r < 0 || q % 2 != 0 || q / 2 >= 3) return -7.0;
    return static_cast<double>(r * 3 + q / 2);
  }, S("f32[3,6]"));
  CheckMovement("HloModule m\nENTRY e {\n  ROOT r = s32[3,4] iota(), iota_dimension=1\n}\n", {},
                [](const std::vector<int64_t>& x) { return static_cast<double>(x[1]); }, S("s32[3,4]"));
  const char* ds = R"(HloModule m
ENTRY e {
  a = f32[4,5] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  u = f32[2,2] constant({{-1,-2},{-3,-4}})
  s = f32[2,3] dynamic-slice(a, i, j), dynamic_slice_sizes={2,3}
  d = f32[4,5] dynamic-update-slice(a, u, i, j)
  ROOT t = (f32[2,3], f32[4,5]) tuple(s, d)
}
)";
  Value m = MakeArray(S("f32[4,5]"), [](int64_t i) { return i; });
  for (auto [i0, j0] : std::vector<std::pair<int, int>>{{1, 1}, {3, 4}, {-2, 9}}) {
    Value iv = MakeArray(S("s32[]"), [&](int64_t) { return i0; });
    Value jv = MakeArray(S("s32[]"), [&](int64_t) { return j0; });
    auto out = RunText(ds, {m, iv, jv});
    ASSERT_TRUE(out.ok()) << out.status().message();
    int64_t si = std::clamp(i0, 0, 2), sj = std::clamp(j0, 0, 2);
    std::vector<double> s = ToDoubles(out->tuple[0]);
    for (int r = 0; r < 2; ++r) for (int q = 0; q < 3; ++q) EXPECT_EQ(s[r * 3 + q], (si + r) * 5 + sj + q);
    int64_t ui = std::clamp(i0, 0, 2), uj = std::clamp(j0, 0, 3);
    std::vector<double> d = ToDoubles(out->tuple[1]);
    for (int r = 0; r < 4; ++r) {
      for (int q = 0; q < 5; ++q) {
        bool in_u = r >= ui && r < ui + 2 && q >= uj && q < uj + 2;
        EXPECT_EQ(d[r * 5 + q], in_u ? -1.0 - ((r - ui) * 2 + (q - uj)) : r * 5 + q);
      }
    }
  }
}

TEST(DataMovementTest, BitcastUsesLayouts) {
  // Column-major f32[2,3] holds in[0,0], in[1,0], in[0,1], ... physically; read as row-major
  // f32[3,2] that is the transpose.
  Value in = MakeArray(S("f32[2,3]"), [](int64_t i) { return i; });
  CheckMovement(Module1("bitcast", "f32[2,3]{0,1}", "f32[3,2]{1,0}"), {in},
                [](const std::vector<int64_t>& x) { return static_cast<double>(x[1] * 3 + x[0]); }, S("f32[3,2]"));
  CheckMovement(Module1("bitcast", "f32[2,3]{1,0}", "f32[6]{0}"), {in},
                [](const std::vector<int64_t>& x) { return static_cast<double>(x[0]); }, S("f32[6]"));
  // Both column-major: f32[2,3]{0,1} -> f32[3,2]{0,1}: physical bytes equal, out[i,j] = phys[j*3+i].
  CheckMovement(Module1("bitcast", "f32[2,3]{0,1}", "f32[3,2]{0,1}"), {in},
                [](const std::vector<int64_t>& x) {
                  int64_t p = x[1] * 3 + x[0];  // physical position
                  return static_cast<double>((p % 2) * 3 + p / 2);
                }, S("f32[3,2]"));
}

}  // namespace
}  // namespace hlox::rt
