// Arithmetic on the f8 family and f4e2m1fn (runtime/core/small_float_widen.h): every result is
// checked code for code against a reference computed here from ir/small_float.h alone: decode
// the operands, compute in float, encode back (round to nearest even, each type's overflow
// rule), once per HLO instruction. Reducers round back after every application, as their HLO
// says. A NaN result only has to be a NaN code: IEEE leaves a NaN's sign unspecified, and the
// SIMD kernels may pick the other operand's NaN.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/small_float.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::RunText;

std::string Name(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }
SmallFloatFormat Fmt(PrimitiveType t) { return *SmallFloatFormatOf(t); }
int CodeCount(PrimitiveType t) { return 1 << PrimitiveBitWidth(t); }
float Dec(PrimitiveType t, uint8_t c) { return static_cast<float>(SmallFloatDecode(Fmt(t), c)); }
// Rounding back to the type is `convert`'s rule (its own cases are in tests/ir/small_float_test.cc).
uint8_t Enc(PrimitiveType t, float v) { return SmallFloatConvert(t, v); }

// An array of type t and `dims` with the given codes as its bytes.
Value Codes(PrimitiveType t, const std::vector<uint8_t>& codes, const std::vector<int64_t>& dims) {
  auto b = std::make_shared<Buffer>(Shape(t, dims));
  if (!codes.empty()) std::memcpy(b->data(), codes.data(), codes.size());
  return Value::Array(std::move(b));
}
// A vector of type t holding `codes`.
Value Codes(PrimitiveType t, const std::vector<uint8_t>& codes) {
  return Codes(t, codes, {static_cast<int64_t>(codes.size())});
}

std::vector<uint8_t> Bytes(const Value& v) {
  if (!v.is_array()) return {};
  return std::vector<uint8_t>(v.array->data(), v.array->data() + v.array->byte_size());
}

// Each got[i] is want[i], or both are NaN codes.
void ExpectCodes(PrimitiveType t, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                 const std::function<std::string(size_t)>& what) {
  ASSERT_EQ(got.size(), want.size());
  int failures = 0;
  for (size_t i = 0; i < want.size() && failures < 8; ++i) {
    const bool want_nan = std::isnan(Dec(t, want[i]));
    const bool ok = want_nan ? std::isnan(Dec(t, got[i])) : got[i] == want[i];
    if (!ok) {
      ++failures;
      ADD_FAILURE() << Name(t) << " " << what(i) << ": got code " << int{got[i]} << " (" << Dec(t, got[i])
                    << "), want " << int{want[i]} << " (" << Dec(t, want[i]) << ")";
    }
  }
}

// Every pair of codes (a = i / n, b = i % n): n*n elements.
void AllPairs(PrimitiveType t, std::vector<uint8_t>* a, std::vector<uint8_t>* b) {
  const int n = CodeCount(t);
  for (int i = 0; i < n * n; ++i) {
    a->push_back(static_cast<uint8_t>(i / n));
    b->push_back(static_cast<uint8_t>(i % n));
  }
}

std::string Binary(PrimitiveType t, int64_t n, const std::string& op) {
  const std::string s = Name(t) + "[" + std::to_string(n) + "]";
  return "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s + " parameter(1)\n  ROOT r = " + s +
         " " + op + "(a, b)\n}\n";
}

float XlaMax(float a, float b) { return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b); }
float XlaMin(float a, float b) { return (std::isnan(a) || std::isnan(b)) ? NAN : std::min(a, b); }

TEST(SmallFloatArith, BinaryOpsOnEveryPairOfCodesOfEveryType) {
  const std::vector<std::pair<std::string, std::function<float(float, float)>>> ops = {
      {"add", [](float x, float y) { return x + y; }},
      {"subtract", [](float x, float y) { return x - y; }},
      {"multiply", [](float x, float y) { return x * y; }},
      {"divide", [](float x, float y) { return x / y; }},
      {"maximum", XlaMax},
      {"minimum", XlaMin},
      {"power", [](float x, float y) { return std::pow(x, y); }},
  };
  for (PrimitiveType t : kSmallFloatTypes) {
    std::vector<uint8_t> a, b;
    AllPairs(t, &a, &b);
    for (const auto& [op, f] : ops) {
      if (op == "power" && t != PrimitiveType::kF4E2M1FN && t != PrimitiveType::kF8E8M0FNU) continue;
      absl::StatusOr<Value> r = RunText(Binary(t, static_cast<int64_t>(a.size()), op), {Codes(t, a), Codes(t, b)});
      ASSERT_TRUE(r.ok()) << Name(t) << " " << op << ": " << r.status().message();
      std::vector<uint8_t> want(a.size());
      for (size_t i = 0; i < a.size(); ++i) want[i] = Enc(t, f(Dec(t, a[i]), Dec(t, b[i])));
      ExpectCodes(t, Bytes(*r), want, [&](size_t i) {
        return op + "(" + std::to_string(Dec(t, a[i])) + ", " + std::to_string(Dec(t, b[i])) + ")";
      });
    }
  }
}

TEST(SmallFloatArith, UnaryOpsOnEveryCode) {
  const std::vector<std::pair<std::string, std::function<float(float)>>> ops = {
      {"negate", [](float x) { return -x; }},
      {"abs", [](float x) { return std::fabs(x); }},
      {"sqrt", [](float x) { return std::sqrt(x); }},
      {"floor", [](float x) { return std::floor(x); }},
      {"ceil", [](float x) { return std::ceil(x); }},
      {"round-nearest-even", [](float x) { return std::nearbyint(x); }},
  };
  for (PrimitiveType t : kSmallFloatTypes) {
    std::vector<uint8_t> a(CodeCount(t));
    std::iota(a.begin(), a.end(), 0);
    const std::string s = Name(t) + "[" + std::to_string(a.size()) + "]";
    for (const auto& [op, f] : ops) {
      const std::string text = "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  ROOT r = " + s + " " + op + "(a)\n}\n";
      absl::StatusOr<Value> r = RunText(text, {Codes(t, a)});
      ASSERT_TRUE(r.ok()) << Name(t) << " " << op << ": " << r.status().message();
      std::vector<uint8_t> want(a.size());
      for (size_t i = 0; i < a.size(); ++i) want[i] = Enc(t, f(Dec(t, a[i])));
      ExpectCodes(t, Bytes(*r), want, [&](size_t i) { return op + "(" + std::to_string(Dec(t, a[i])) + ")"; });
    }
  }
}

// Fixed points of each type's overflow rule, so the reference itself is pinned down.
TEST(SmallFloatArith, OverflowGoesWhereTheTypeSendsIt) {
  struct Case {
    PrimitiveType t;
    uint8_t largest;  // the largest finite code
    uint8_t want;     // largest + largest
  };
  const Case cases[] = {
      {PrimitiveType::kF8E5M2, 0x7b, 0x7c},     // 57344 + 57344 = inf
      {PrimitiveType::kF8E4M3, 0x77, 0x78},     // 240 + 240 = inf
      {PrimitiveType::kF8E3M4, 0x6f, 0x70},     // 15.5 + 15.5 = inf
      {PrimitiveType::kF4E2M1FN, 0x7, 0x7},     // no inf, no NaN: 6 + 6 saturates to 6
  };
  for (const Case& c : cases) {
    absl::StatusOr<Value> r = RunText(Binary(c.t, 1, "add"), {Codes(c.t, {c.largest}), Codes(c.t, {c.largest})});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(Bytes(*r), std::vector<uint8_t>{c.want}) << Name(c.t);
  }
  // No infinity: overflow is NaN (f8e4m3fn 448 + 448, f8e8m0fnu 2^127 * 2^127, f8e4m3fnuz).
  for (PrimitiveType t : {PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E5M2FNUZ,
                          PrimitiveType::kF8E8M0FNU}) {
    double max = 0;
    uint8_t largest = 0;
    for (int c = 0; c < 256; ++c) {
      const double v = Dec(t, static_cast<uint8_t>(c));
      if (std::isfinite(v) && v > max) max = v, largest = static_cast<uint8_t>(c);
    }
    absl::StatusOr<Value> r = RunText(Binary(t, 1, "multiply"), {Codes(t, {largest}), Codes(t, {largest})});
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(std::isnan(Dec(t, Bytes(*r)[0]))) << Name(t) << " " << max << "^2";
  }
  // f8e8m0fnu has no sign: 1 - 2 is NaN; 2^-127 * 2^-127 rounds up to its smallest value.
  const PrimitiveType e8 = PrimitiveType::kF8E8M0FNU;
  absl::StatusOr<Value> r = RunText(Binary(e8, 2, "subtract"), {Codes(e8, {127, 0}), Codes(e8, {128, 0})});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(std::isnan(Dec(e8, Bytes(*r)[0])));
}

TEST(SmallFloatArith, CompareSelectAndClamp) {
  for (PrimitiveType t : {PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E5M2FNUZ,
                          PrimitiveType::kF4E2M1FN, PrimitiveType::kF8E8M0FNU}) {
    std::vector<uint8_t> a, b;
    AllPairs(t, &a, &b);
    const int64_t n = static_cast<int64_t>(a.size());
    const std::string s = Name(t) + "[" + std::to_string(n) + "]";
    const std::string text = "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
                              " parameter(1)\n  m = " + Name(t) + "[] parameter(2)\n  lt = pred[" +
                              std::to_string(n) + "] compare(a, b), direction=LT\n  ne = pred[" +
                              std::to_string(n) + "] compare(a, b), direction=NE\n  sel = " + s +
                              " select(lt, a, b)\n  c = " + s + " clamp(m, a, b)\n  ROOT r = (pred[" +
                              std::to_string(n) + "], pred[" + std::to_string(n) + "], " + s + ", " + s +
                              ") tuple(lt, ne, sel, c)\n}\n";
    // The clamp's lower bound: the code of 1 (the first code at or above 1).
    uint8_t one = 0;
    for (int c = 0; c < CodeCount(t); ++c) {
      if (Dec(t, static_cast<uint8_t>(c)) == 1.0f) one = static_cast<uint8_t>(c);
    }
    absl::StatusOr<Value> r = RunText(text, {Codes(t, a), Codes(t, b), Codes(t, {one}, {})});
    ASSERT_TRUE(r.ok()) << Name(t) << ": " << r.status().message();
    ASSERT_TRUE(r->is_tuple);
    const std::vector<uint8_t> lt = Bytes(r->tuple[0]), ne = Bytes(r->tuple[1]);
    std::vector<uint8_t> want_sel(n), want_clamp(n);
    for (int64_t i = 0; i < n; ++i) {
      const float x = Dec(t, a[i]), y = Dec(t, b[i]);
      ASSERT_EQ(lt[i] != 0, x < y) << Name(t) << " " << x << " < " << y;
      ASSERT_EQ(ne[i] != 0, x != y) << Name(t) << " " << x << " != " << y;
      want_sel[i] = x < y ? a[i] : b[i];
      want_clamp[i] = Enc(t, XlaMin(XlaMax(x, 1.0f), y));
    }
    ExpectCodes(t, Bytes(r->tuple[2]), want_sel, [&](size_t i) { return "select " + std::to_string(i); });
    ExpectCodes(t, Bytes(r->tuple[3]), want_clamp, [&](size_t i) {
      return "clamp(1, " + std::to_string(Dec(t, a[i])) + ", " + std::to_string(Dec(t, b[i])) + ")";
    });
  }
}

// A fusion of f8 ops rounds after each fused instruction, as the unfused ops do.
TEST(SmallFloatArith, FusionRoundsAfterEachInstruction) {
  for (PrimitiveType t : {PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E5M2, PrimitiveType::kF8E3M4,
                          PrimitiveType::kF4E2M1FN}) {
    std::vector<uint8_t> a, b;
    AllPairs(t, &a, &b);
    const std::string s = Name(t) + "[" + std::to_string(a.size()) + "]";
    const std::string text = "HloModule m\nfused {\n  p0 = " + s + " parameter(0)\n  p1 = " + s +
                             " parameter(1)\n  m = " + s + " multiply(p0, p1)\n  ROOT s = " + s +
                             " add(m, p0)\n}\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
                             " parameter(1)\n  ROOT f = " + s + " fusion(a, b), kind=kLoop, calls=fused\n}\n";
    absl::StatusOr<Value> r = RunText(text, {Codes(t, a), Codes(t, b)}, 2);
    ASSERT_TRUE(r.ok()) << Name(t) << ": " << r.status().message();
    std::vector<uint8_t> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const float m = Dec(t, Enc(t, Dec(t, a[i]) * Dec(t, b[i])));
      want[i] = Enc(t, m + Dec(t, a[i]));
    }
    ExpectCodes(t, Bytes(*r), want, [&](size_t i) { return "a*b+a at " + std::to_string(i); });
  }
}

// reduce and reduce-window: the reducer's add rounds to the type after every application, so
// the reference folds in the kernel's order (init, then the elements in row-major order).
TEST(SmallFloatArith, ReducersRoundAfterEveryApplication) {
  const int64_t rows = 6, cols = 40;
  for (PrimitiveType t : {PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3B11FNUZ,
                          PrimitiveType::kF4E2M1FN, PrimitiveType::kF8E8M0FNU}) {
    const std::string T = Name(t);
    std::vector<uint8_t> x(rows * cols);
    const int n = CodeCount(t);
    for (int64_t i = 0; i < rows * cols; ++i) x[i] = static_cast<uint8_t>((i * 37 + 11) % n);
    // Row 0 free of NaN codes, so its sum shows the per-step rounding (it saturates or stalls).
    for (int64_t j = 0; j < cols; ++j) {
      if (std::isnan(Dec(t, x[j]))) x[j] = 0;
      if (std::isnan(Dec(t, x[j]))) x[j] = 1;
    }
    const uint8_t init = Enc(t, t == PrimitiveType::kF8E8M0FNU ? 1.0f : 0.0f);
    const std::string text =
        "HloModule m\nsum {\n  p = " + T + "[] parameter(0)\n  q = " + T + "[] parameter(1)\n  ROOT s = " + T +
        "[] add(p, q)\n}\nmx {\n  p = " + T + "[] parameter(0)\n  q = " + T + "[] parameter(1)\n  ROOT s = " + T +
        "[] maximum(p, q)\n}\nENTRY e {\n  x = " + T + "[6,40] parameter(0)\n  z = " + T +
        "[] parameter(1)\n  s = " + T + "[6] reduce(x, z), dimensions={1}, to_apply=sum\n  m = " + T +
        "[6] reduce(x, z), dimensions={1}, to_apply=mx\n  w = " + T +
        "[6,13] reduce-window(x, z), window={size=1x4 stride=1x3}, to_apply=sum\n  ROOT r = (" + T +
        "[6], " + T + "[6], " + T + "[6,13]) tuple(s, m, w)\n}\n";
    absl::StatusOr<Value> r = RunText(text, {Codes(t, x, {rows, cols}), Codes(t, {init}, {})}, 2);
    ASSERT_TRUE(r.ok()) << T << ": " << r.status().message();
    std::vector<uint8_t> want_s(rows), want_m(rows), want_w(rows * 13);
    for (int64_t i = 0; i < rows; ++i) {
      uint8_t s = init, m = init;
      for (int64_t j = 0; j < cols; ++j) {
        s = Enc(t, Dec(t, s) + Dec(t, x[i * cols + j]));
        m = Enc(t, XlaMax(Dec(t, m), Dec(t, x[i * cols + j])));
      }
      want_s[i] = s;
      want_m[i] = m;
      for (int64_t o = 0; o < 13; ++o) {
        uint8_t w = init;
        for (int64_t k = 0; k < 4; ++k) w = Enc(t, Dec(t, w) + Dec(t, x[i * cols + o * 3 + k]));
        want_w[i * 13 + o] = w;
      }
    }
    ExpectCodes(t, Bytes(r->tuple[0]), want_s, [&](size_t i) { return "row sum " + std::to_string(i); });
    ExpectCodes(t, Bytes(r->tuple[1]), want_m, [&](size_t i) { return "row max " + std::to_string(i); });
    ExpectCodes(t, Bytes(r->tuple[2]), want_w, [&](size_t i) { return "window sum " + std::to_string(i); });
  }
}

// 1 + 16 x 1/16 in f8e4m3fn: each 1 + 1/16 is a tie that rounds back to 1 (3 mantissa bits),
// so the per-step sum stays 1 where a sum in f32 rounded once would give 2.
TEST(SmallFloatArith, ReduceRoundsEachStepNotOnce) {
  const PrimitiveType t = PrimitiveType::kF8E4M3FN;
  std::vector<uint8_t> x(17, Enc(t, 0.0625f));
  x[0] = Enc(t, 1.0f);
  const std::string text =
      "HloModule m\nsum {\n  p = f8e4m3fn[] parameter(0)\n  q = f8e4m3fn[] parameter(1)\n"
      "  ROOT s = f8e4m3fn[] add(p, q)\n}\nENTRY e {\n  x = f8e4m3fn[17] parameter(0)\n"
      "  z = f8e4m3fn[] constant(0)\n  ROOT s = f8e4m3fn[] reduce(x, z), dimensions={0}, to_apply=sum\n}\n";
  absl::StatusOr<Value> r = RunText(text, {Codes(t, x)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Dec(t, Bytes(*r)[0]), 1.0f);
}

// Codes of t whose values lie in [lo, hi] (so products and short sums are exact in f32).
std::vector<uint8_t> CodesIn(PrimitiveType t, float lo, float hi) {
  std::vector<uint8_t> out;
  for (int c = 0; c < CodeCount(t); ++c) {
    const float v = Dec(t, static_cast<uint8_t>(c));
    if (std::fabs(v) >= lo && std::fabs(v) <= hi) out.push_back(static_cast<uint8_t>(c));
  }
  return out;
}

// dot and convolution: operands widened, products summed in f32 (exact for these inputs, so
// the summation order does not matter), rounded once; an f32 result is not rounded at all.
TEST(SmallFloatArith, DotAndConvolutionRoundOnce) {
  const int64_t m = 5, k = 8, n = 7;
  for (PrimitiveType t : {PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3,
                          PrimitiveType::kF4E2M1FN, PrimitiveType::kF8E8M0FNU}) {
    const std::string T = Name(t);
    const std::vector<uint8_t> pool = CodesIn(t, 0.25f, 16.0f);
    ASSERT_FALSE(pool.empty());
    std::vector<uint8_t> a(m * k), b(k * n), x(2 * 12), w(3 * 2 * 3);
    for (size_t i = 0; i < a.size(); ++i) a[i] = pool[(i * 7 + 3) % pool.size()];
    for (size_t i = 0; i < b.size(); ++i) b[i] = pool[(i * 11 + 5) % pool.size()];
    for (size_t i = 0; i < x.size(); ++i) x[i] = pool[(i * 13 + 1) % pool.size()];
    for (size_t i = 0; i < w.size(); ++i) w[i] = pool[(i * 5 + 2) % pool.size()];
    const std::string text =
        "HloModule m\nENTRY e {\n  a = " + T + "[5,8] parameter(0)\n  b = " + T + "[8,7] parameter(1)\n  x = " + T +
        "[1,2,12] parameter(2)\n  w = " + T + "[3,2,3] parameter(3)\n  d = " + T +
        "[5,7] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  d32 = f32[5,7] dot(a, b), "
        "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  c = " + T +
        "[1,3,10] convolution(x, w), window={size=3}, dim_labels=bf0_oi0->bf0\n  ROOT r = (" + T +
        "[5,7], f32[5,7], " + T + "[1,3,10]) tuple(d, d32, c)\n}\n";
    absl::StatusOr<Value> r =
        RunText(text, {Codes(t, a, {m, k}), Codes(t, b, {k, n}), Codes(t, x, {1, 2, 12}), Codes(t, w, {3, 2, 3})}, 2);
    ASSERT_TRUE(r.ok()) << T << ": " << r.status().message();
    std::vector<uint8_t> want_d(m * n), want_c(3 * 10);
    std::vector<float> want_d32(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float s = 0;
        for (int64_t p = 0; p < k; ++p) s += Dec(t, a[i * k + p]) * Dec(t, b[p * n + j]);
        want_d[i * n + j] = Enc(t, s);
        want_d32[i * n + j] = s;
      }
    }
    for (int64_t o = 0; o < 3; ++o) {
      for (int64_t p = 0; p < 10; ++p) {
        float s = 0;
        for (int64_t c = 0; c < 2; ++c) {
          for (int64_t q = 0; q < 3; ++q) s += Dec(t, x[c * 12 + p + q]) * Dec(t, w[(o * 2 + c) * 3 + q]);
        }
        want_c[o * 10 + p] = Enc(t, s);
      }
    }
    ExpectCodes(t, Bytes(r->tuple[0]), want_d, [&](size_t i) { return "dot " + std::to_string(i); });
    ExpectCodes(t, Bytes(r->tuple[2]), want_c, [&](size_t i) { return "convolution " + std::to_string(i); });
    const float* d32 = r->tuple[1].array->as<float>();
    for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(d32[i], want_d32[i]) << T << " f32 dot " << i;
  }
}

// sort on f8 keys: a plain LT comparator (key path) and an argsort-style two-operand comparator
// (scalar program), both stable, NaN-free keys.
TEST(SmallFloatArith, SortOnSmallFloatKeys) {
  for (PrimitiveType t : {PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF4E2M1FN,
                          PrimitiveType::kF8E8M0FNU}) {
    const std::string T = Name(t);
    std::vector<uint8_t> keys;
    for (int i = 0; i < 50; ++i) {
      uint8_t c = static_cast<uint8_t>((i * 29 + 7) % CodeCount(t));
      if (std::isnan(Dec(t, c))) c = static_cast<uint8_t>((c + 1) % CodeCount(t));
      if (std::isnan(Dec(t, c))) c = 1;
      keys.push_back(c);
    }
    std::vector<uint8_t> idx_bytes(50 * 4);
    for (int32_t i = 0; i < 50; ++i) std::memcpy(idx_bytes.data() + 4 * i, &i, 4);
    auto idx = std::make_shared<Buffer>(Shape(PrimitiveType::kS32, {50}));
    std::memcpy(idx->data(), idx_bytes.data(), idx_bytes.size());
    const std::string text =
        "HloModule m\nlt {\n  a = " + T + "[] parameter(0)\n  b = " + T + "[] parameter(1)\n  ROOT c = pred[] "
        "compare(a, b), direction=LT\n}\nlt2 {\n  a = " + T + "[] parameter(0)\n  b = " + T +
        "[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  ka = " + T +
        "[] negate(a)\n  kb = " + T + "[] negate(b)\n  ROOT c = pred[] compare(kb, ka), direction=LT\n}\n"
        "ENTRY e {\n  k = " + T + "[50] parameter(0)\n  i = s32[50] parameter(1)\n  s1 = " + T +
        "[50] sort(k), dimensions={0}, to_apply=lt\n  s2 = (" + T + "[50], s32[50]) sort(k, i), dimensions={0}, "
        "to_apply=lt2\n  s2i = s32[50] get-tuple-element(s2), index=1\n  ROOT r = (" + T +
        "[50], s32[50]) tuple(s1, s2i)\n}\n";
    absl::StatusOr<Value> r = RunText(text, {Codes(t, keys), Value::Array(idx)}, 2);
    ASSERT_TRUE(r.ok()) << T << ": " << r.status().message();
    std::vector<int> order(50);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return Dec(t, keys[x]) < Dec(t, keys[y]); });
    std::vector<uint8_t> want_keys;
    for (int o : order) want_keys.push_back(keys[o]);
    EXPECT_EQ(Bytes(r->tuple[0]), want_keys) << T;
    // lt2 sorts by -key (rounded to the type, NaN where the type has no sign) descending:
    // the same as ascending key for a signed type.
    std::vector<int> order2(50);
    std::iota(order2.begin(), order2.end(), 0);
    std::stable_sort(order2.begin(), order2.end(), [&](int x, int y) {
      return Dec(t, Enc(t, -Dec(t, keys[y]))) < Dec(t, Enc(t, -Dec(t, keys[x])));
    });
    const int32_t* got = r->tuple[1].array->as<int32_t>();
    for (int i = 0; i < 50; ++i) EXPECT_EQ(got[i], order2[i]) << T << " argsort position " << i;
  }
}

// NaN operands give NaN results in every type that has a NaN (f4e2m1fn has none).
TEST(SmallFloatArith, NanPropagates) {
  for (PrimitiveType t : kSmallFloatTypes) {
    if (t == PrimitiveType::kF4E2M1FN) continue;
    int nan = -1, one = -1;
    for (int c = 0; c < CodeCount(t); ++c) {
      if (nan < 0 && std::isnan(Dec(t, static_cast<uint8_t>(c)))) nan = c;
      if (Dec(t, static_cast<uint8_t>(c)) == 1.0f) one = c;
    }
    ASSERT_GE(nan, 0) << Name(t);
    ASSERT_GE(one, 0) << Name(t);
    for (const char* op : {"add", "multiply", "maximum", "minimum", "divide"}) {
      absl::StatusOr<Value> r = RunText(Binary(t, 2, op), {Codes(t, {static_cast<uint8_t>(nan), static_cast<uint8_t>(one)}),
                                                           Codes(t, {static_cast<uint8_t>(one), static_cast<uint8_t>(nan)})});
      ASSERT_TRUE(r.ok()) << r.status().message();
      for (uint8_t c : Bytes(*r)) EXPECT_TRUE(std::isnan(Dec(t, c))) << Name(t) << " " << op;
    }
  }
}

// Elementwise ops on f32 are untouched by the widening: an f8 operand converted in the module
// and the same op on f8 directly agree.
TEST(SmallFloatArith, WideningMatchesExplicitConverts) {
  const std::string text =
      "HloModule m\nENTRY e {\n  a = f8e4m3fn[256] parameter(0)\n  b = f8e4m3fn[256] parameter(1)\n"
      "  fa = f32[256] convert(a)\n  fb = f32[256] convert(b)\n  s = f32[256] add(fa, fb)\n"
      "  viaconv = f8e4m3fn[256] convert(s)\n  direct = f8e4m3fn[256] add(a, b)\n"
      "  ROOT r = (f8e4m3fn[256], f8e4m3fn[256]) tuple(viaconv, direct)\n}\n";
  const PrimitiveType t = PrimitiveType::kF8E4M3FN;
  std::vector<uint8_t> a(256), b(256);
  for (int i = 0; i < 256; ++i) a[i] = static_cast<uint8_t>(i), b[i] = static_cast<uint8_t>((i * 91 + 17) & 0xff);
  absl::StatusOr<Value> r = RunText(text, {Codes(t, a), Codes(t, b)});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ExpectCodes(t, Bytes(r->tuple[1]), Bytes(r->tuple[0]), [&](size_t i) { return "element " + std::to_string(i); });
}

}  // namespace
}  // namespace hlox::rt
