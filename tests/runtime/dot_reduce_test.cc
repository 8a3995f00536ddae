// Dot against a naive triple loop (batch and contracting dims in any position, several
// dtypes; batched f32 dots bit-identical for 1-3 threads) and reduce against a naive reference (any dims, fast and generic reducers,
// variadic argmax, empty reductions, identical bits for 1 and 2 threads).
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "runtime/core/kernel_util.h"
#include "runtime/kernels/scalar_program.h"
#include "tests/runtime/runtime_test_util.h"

namespace hlox::rt {
namespace {

using testing::MakeArray;
using testing::RunText;
using testing::S;
using testing::ToDoubles;
using testing::Uniform;

std::string ShapeText(const std::string& t, const std::vector<int64_t>& d) {
  return absl::StrCat(t, "[", absl::StrJoin(d, ","), "]");
}

struct DotCase {
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> lb, rb, lc, rc;
};

// Naive dot_general over multi-indices: out dims = batch, lhs free, rhs free.
std::vector<double> NaiveDot(const DotCase& c, const std::vector<double>& a, const std::vector<double>& b,
                             std::vector<int64_t>* out_dims) {
  auto free_of = [](size_t rank, const std::vector<int64_t>& x, const std::vector<int64_t>& y) {
    std::vector<int64_t> f;
    for (size_t d = 0; d < rank; ++d)
      if (std::find(x.begin(), x.end(), d) == x.end() && std::find(y.begin(), y.end(), d) == y.end()) f.push_back(d);
    return f;
  };
  std::vector<int64_t> lf = free_of(c.lhs.size(), c.lb, c.lc), rf = free_of(c.rhs.size(), c.rb, c.rc);
  out_dims->clear();
  for (int64_t d : c.lb) out_dims->push_back(c.lhs[d]);
  for (int64_t d : lf) out_dims->push_back(c.lhs[d]);
  for (int64_t d : rf) out_dims->push_back(c.rhs[d]);
  std::vector<int64_t> kd;
  for (int64_t d : c.lc) kd.push_back(c.lhs[d]);
  std::vector<int64_t> ls = RowMajorStrides(c.lhs), rs = RowMajorStrides(c.rhs);
  int64_t n = 1;
  for (int64_t d : *out_dims) n *= d;
  std::vector<double> out(n, 0.0);
  if (n == 0) return out;
  std::vector<int64_t> o(out_dims->size(), 0);
  int64_t flat = 0;
  do {
    std::vector<int64_t> li(c.lhs.size()), ri(c.rhs.size());
    size_t p = 0;
    for (size_t i = 0; i < c.lb.size(); ++i, ++p) { li[c.lb[i]] = o[p]; ri[c.rb[i]] = o[p]; }
    for (int64_t d : lf) li[d] = o[p++];
    for (int64_t d : rf) ri[d] = o[p++];
    double acc = 0;
    std::vector<int64_t> k(kd.size(), 0);
    bool any = true;
    for (int64_t d : kd) if (d == 0) any = false;
    if (any) {
      do {
        for (size_t i = 0; i < kd.size(); ++i) { li[c.lc[i]] = k[i]; ri[c.rc[i]] = k[i]; }
        int64_t lo = 0, ro = 0;
        for (size_t d = 0; d < li.size(); ++d) lo += li[d] * ls[d];
        for (size_t d = 0; d < ri.size(); ++d) ro += ri[d] * rs[d];
        acc += a[lo] * b[ro];
      } while (NextIndex(k, kd));
    }
    out[flat++] = acc;
  } while (NextIndex(o, *out_dims));
  return out;
}

TEST(DotTest, MatchesNaiveForAllDimensionLayouts) {
  std::vector<DotCase> cases = {
      {{5, 7}, {7, 3}, {}, {}, {1}, {0}},                   // plain
      {{7, 5}, {7, 3}, {}, {}, {0}, {0}},                   // lhs transposed
      {{5, 7}, {3, 7}, {}, {}, {1}, {1}},                   // rhs transposed
      {{2, 5, 7}, {2, 7, 3}, {0}, {0}, {2}, {1}},           // batched
      {{5, 2, 7}, {7, 3, 2}, {1}, {2}, {2}, {0}},           // batch dims in the middle/end
      {{3, 4, 5, 6}, {5, 3, 4, 2}, {0}, {1}, {2, 1}, {0, 2}},  // two contracting dims, permuted
      {{6}, {6}, {}, {}, {0}, {0}},                         // vector dot
      {{4, 0}, {0, 3}, {}, {}, {1}, {0}},                   // empty contraction -> zeros
      {{0, 3}, {3, 2}, {}, {}, {1}, {0}},                   // empty result
      {{130, 70}, {70, 90}, {}, {}, {1}, {0}},              // multi-block GEMM
      {{3, 300}, {700, 300}, {}, {}, {1}, {1}},             // few rows, rhs transposed (GEMV path)
      {{300, 2}, {300, 600}, {}, {}, {0}, {0}},             // few rows, lhs transposed
  };
  for (const char* t : {"f32", "f64", "s32", "bf16", "f16"}) {
    for (const DotCase& c : cases) {
      bool is_int = std::string(t) == "s32";
      Value a = MakeArray(S(ShapeText(t, c.lhs)), [&](int64_t i) { return is_int ? std::floor(Uniform(1, -9, 9)(i)) : Uniform(1, -1, 1)(i); });
      Value b = MakeArray(S(ShapeText(t, c.rhs)), [&](int64_t i) { return is_int ? std::floor(Uniform(2, -9, 9)(i)) : Uniform(2, -1, 1)(i); });
      std::vector<int64_t> od;
      std::vector<double> want = NaiveDot(c, ToDoubles(a), ToDoubles(b), &od);
      std::string text = absl::StrCat(
          "HloModule m\nENTRY e {\n  a = ", ShapeText(t, c.lhs), " parameter(0)\n  b = ", ShapeText(t, c.rhs),
          " parameter(1)\n  ROOT d = ", ShapeText(t, od), " dot(a, b), lhs_batch_dims={", absl::StrJoin(c.lb, ","),
          "}, rhs_batch_dims={", absl::StrJoin(c.rb, ","), "}, lhs_contracting_dims={", absl::StrJoin(c.lc, ","),
          "}, rhs_contracting_dims={", absl::StrJoin(c.rc, ","), "}\n}\n");
      for (int threads : {1, 2}) {
        auto out = RunText(text, {a, b}, threads);
        ASSERT_TRUE(out.ok()) << t << " " << text << out.status().message();
        std::vector<double> got = ToDoubles(*out);
        ASSERT_EQ(got.size(), want.size());
        double tol = std::string(t) == "bf16" ? 2e-2 : std::string(t) == "f16" ? 4e-3 : std::string(t) == "f32" ? 1e-5 : 0;
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i])) + (is_int ? 0 : 1e-12)) << t << " " << text << " at " << i;
        }
      }
    }
  }
}

// f16 and bf16 operands are widened to f32 (16 lanes at a time, split over the threads past 64K
// elements) before an f32 GEMM; mixed operand types and an f32 result included.
TEST(DotTest, HalfOperandsWidenedExactly) {
  for (const char* ta : {"f16", "bf16"}) {
    const std::string text = absl::StrCat("HloModule m\nENTRY e {\n  a = ", ta,
                                          "[300,261] parameter(0)\n  b = f32[261,5] parameter(1)\n"
                                          "  ROOT d = f32[300,5] dot(a, b), lhs_contracting_dims={1}, "
                                          "rhs_contracting_dims={0}\n}\n");
    Value a = MakeArray(S(absl::StrCat(ta, "[300,261]")), Uniform(3, -2, 2));
    Value b = MakeArray(S("f32[261,5]"), Uniform(4, -1, 1));
    const std::vector<double> x = ToDoubles(a), y = ToDoubles(b);  // x holds the rounded values
    for (int threads : {1, 2}) {
      auto out = RunText(text, {a, b}, threads);
      ASSERT_TRUE(out.ok()) << out.status().message();
      const std::vector<double> got = ToDoubles(*out);
      for (int i = 0; i < 300; ++i) {
        for (int j = 0; j < 5; ++j) {
          double want = 0, mag = 0;
          for (int p = 0; p < 261; ++p) want += x[i * 261 + p] * y[p * 5 + j], mag += std::fabs(x[i * 261 + p] * y[p * 5 + j]);
          ASSERT_NEAR(got[i * 5 + j], want, 1e-6 * mag + 1e-12) << ta << " at " << i << "," << j;
        }
      }
    }
  }
}

// Batched f32 dots take either split (whole batches per thread, several per chunk when they are
// tiny; or each batch's GEMM split over rows/columns when there are few big ones): every thread
// count must give the same bits, and the values must match a double-precision loop.
TEST(DotTest, BatchedDotSameBitsForAnyThreadCount) {
  struct Case { int64_t batch, m, n, k; };
  const Case cases[] = {{40, 5, 6, 7},          // tiny: many batches per chunk
                        {9, 64, 64, 64},        // a few batches per chunk
                        {2, 260, 250, 260},     // few big GEMMs: the GEMM splits
                        {3, 130, 33, 17}};      // few small GEMMs: batches split
  for (const Case& c : cases) {
    std::vector<int64_t> ld = {c.batch, c.m, c.k}, rd = {c.batch, c.k, c.n}, od = {c.batch, c.m, c.n};
    Value a = MakeArray(S(ShapeText("f32", ld)), Uniform(3, -1, 1));
    Value b = MakeArray(S(ShapeText("f32", rd)), Uniform(4, -1, 1));
    std::string text = absl::StrCat("HloModule m\nENTRY e {\n  a = ", ShapeText("f32", ld), " parameter(0)\n  b = ",
                                    ShapeText("f32", rd), " parameter(1)\n  ROOT d = ", ShapeText("f32", od),
                                    " dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                    "rhs_contracting_dims={1}\n}\n");
    std::vector<double> av = ToDoubles(a), bv = ToDoubles(b);
    std::vector<float> first;
    for (int threads : {1, 2, 3}) {
      auto out = RunText(text, {a, b}, threads);
      ASSERT_TRUE(out.ok()) << out.status().message();
      const float* got = reinterpret_cast<const float*>(out->array->data());
      int64_t total = c.batch * c.m * c.n;
      if (first.empty()) {
        first.assign(got, got + total);
        for (int64_t bi = 0; bi < c.batch; ++bi)
          for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < c.n; ++j) {
              double want = 0;
              for (int64_t p = 0; p < c.k; ++p) want += av[(bi * c.m + i) * c.k + p] * bv[(bi * c.k + p) * c.n + j];
              ASSERT_NEAR(got[(bi * c.m + i) * c.n + j], want, 1e-5 * c.k) << text << " at " << bi << "," << i << "," << j;
            }
      } else {
        EXPECT_EQ(0, std::memcmp(first.data(), got, total * sizeof(float))) << text << " 1 vs " << threads << " threads";
      }
    }
  }
}

std::string ReduceText(const std::string& t, const std::vector<int64_t>& in, const std::vector<int64_t>& dims,
                       const std::string& op) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d) if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(in[d]);
  return absl::StrCat("HloModule m\nred {\n  x = ", t, "[] parameter(0)\n  y = ", t, "[] parameter(1)\n  ROOT r = ", t,
                      "[] ", op, "(x, y)\n}\nENTRY e {\n  a = ", ShapeText(t, in), " parameter(0)\n  i = ", t,
                      "[] parameter(1)\n  ROOT r = ", ShapeText(t, out), " reduce(a, i), dimensions={",
                      absl::StrJoin(dims, ","), "}, to_apply=red\n}\n");
}

std::vector<double> NaiveReduce(const std::vector<double>& a, const std::vector<int64_t>& in,
                                const std::vector<int64_t>& dims, double init, const std::string& op) {
  std::vector<int64_t> out_dims, kept;
  for (size_t d = 0; d < in.size(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) { out_dims.push_back(in[d]); kept.push_back(d); }
  int64_t n = 1;
  for (int64_t d : out_dims) n *= d;
  std::vector<double> out(n, init);
  std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  std::vector<int64_t> idx(in.size(), 0);
  int64_t total = 1;
  for (int64_t d : in) total *= d;
  for (int64_t f = 0; f < total; ++f) {
    int64_t o = 0;
    for (size_t k = 0; k < kept.size(); ++k) o += idx[kept[k]] * out_strides[k];
    double& acc = out[o];
    acc = op == "add" ? acc + a[f] : op == "multiply" ? acc * a[f] : op == "maximum" ? std::max(acc, a[f]) : std::min(acc, a[f]);
    NextIndex(idx, in);
  }
  return out;
}

TEST(ReduceTest, MatchesNaiveReference) {
  struct Case { std::vector<int64_t> in, dims; };
  std::vector<Case> cases = {{{5, 7}, {1}}, {{5, 7}, {0}}, {{3, 4, 5}, {1}}, {{3, 4, 5}, {0, 2}}, {{3, 4, 5}, {0, 1, 2}},
                             {{2, 3, 4, 5}, {1, 3}}, {{4, 0, 3}, {1}}, {{0, 3}, {1}}, {{6}, {}}, {{3, 70000}, {1}}};
  for (const char* t : {"f32", "f64", "s32", "bf16"}) {
    for (const char* op : {"add", "maximum", "minimum", "multiply"}) {
      for (const Case& c : cases) {
        bool is_int = std::string(t) == "s32";
        bool mul = std::string(op) == "multiply";
        Value a = MakeArray(S(ShapeText(t, c.in)), [&](int64_t i) {
          if (mul) return (i % 3 == 0) ? 1.0 : (i % 3 == 1 ? -1.0 : 1.0);  // keeps products exact
          return is_int ? std::floor(Uniform(3, -50, 50)(i)) : Uniform(3, -1, 1)(i);
        });
        double init = mul ? 1.0 : std::string(op) == "add" ? 0.0 : std::string(op) == "maximum" ? -1e9 : 1e9;
        if (std::string(t) == "bf16" && !mul && std::string(op) != "add") init = std::string(op) == "maximum" ? -1e4 : 1e4;
        Value iv = MakeArray(S(std::string(t) + "[]"), [&](int64_t) { return init; });
        std::vector<double> want = NaiveReduce(ToDoubles(a), c.in, c.dims, ToDoubles(iv)[0], op);
        std::string text = ReduceText(t, c.in, c.dims, op);
        std::vector<double> first;
        for (int threads : {1, 2}) {
          auto out = RunText(text, {a, iv}, threads);
          ASSERT_TRUE(out.ok()) << text << out.status().message();
          std::vector<double> got = ToDoubles(*out);
          ASSERT_EQ(got.size(), want.size()) << text;
          double tol = std::string(t) == "bf16" ? 1e-2 : std::string(t) == "f32" ? 1e-5 : 1e-12;
          for (size_t i = 0; i < got.size(); ++i) {
            double scale = std::string(op) == "add" ? std::sqrt(70000.0) : 1.0;
            ASSERT_NEAR(got[i], want[i], tol * scale * std::max(1.0, std::fabs(want[i]))) << text << " at " << i;
          }
          if (threads == 1) first = got;
          else EXPECT_EQ(first, got) << "thread count changed the result: " << text;
        }
      }
    }
  }
}

TEST(ReduceTest, VariadicArgmaxAndGenericReducer) {
  const char* text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  take0 = pred[] or(gt, tie)
  v = f32[] select(take0, v0, v1)
  i = s32[] select(take0, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
sumsq {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  yy = f32[] multiply(y, y)
  ROOT s = f32[] add(x, yy)
}
ENTRY e {
  a = f32[4,9] parameter(0)
  idx = s32[4,9] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[4], s32[4]) reduce(a, idx, ninf, zero), dimensions={1}, to_apply=argmax
  fz = f32[] constant(0)
  q = f32[4] reduce(a, fz), dimensions={1}, to_apply=sumsq
  v = f32[4] get-tuple-element(r), index=0
  i = s32[4] get-tuple-element(r), index=1
  ROOT t = (f32[4], s32[4], f32[4]) tuple(v, i, q)
}
)";
  Value a = MakeArray(S("f32[4,9]"), Uniform(8, -1, 1));
  std::vector<double> x = ToDoubles(a);
  for (int threads : {1, 2}) {
    auto out = RunText(text, {a}, threads);
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (int r = 0; r < 4; ++r) {
      int best = 0;
      double ss = 0;
      for (int c = 0; c < 9; ++c) {
        if (x[r * 9 + c] > x[r * 9 + best]) best = c;
        ss += x[r * 9 + c] * x[r * 9 + c];
      }
      EXPECT_EQ(ToDoubles(out->tuple[0])[r], x[r * 9 + best]);
      EXPECT_EQ(testing::ToInts(out->tuple[1])[r], best);
      EXPECT_NEAR(ToDoubles(out->tuple[2])[r], ss, 1e-5);
    }
  }
}

// XLA's optimized modules wrap a reducer's body in a fusion whose tuple the reducer takes apart
// (alpa_argmax_reduce_post in the corpus); the scalar interpreter inlines it, and the result
// must be the flat reducer's, index for index.
TEST(ReduceTest, ReducerWithANestedFusionMatchesTheFlatOne) {
  const char* text = R"(HloModule m
body {
  i0 = s32[] parameter(0)
  i1 = s32[] parameter(1)
  v0 = f32[] parameter(2)
  v1 = f32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  nan = pred[] compare(v0, v0), direction=NE
  take = pred[] or(gt, nan)
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  take_i = pred[] or(take, tie)
  i = s32[] select(take_i, i0, i1)
  v = f32[] select(take, v0, v1)
  ROOT t = (s32[], f32[]) tuple(i, v)
}
nested {
  i0 = s32[] parameter(1)
  i1 = s32[] parameter(3)
  v0 = f32[] parameter(0)
  v1 = f32[] parameter(2)
  f = (s32[], f32[]) fusion(i0, i1, v0, v1), kind=kLoop, calls=body
  v = f32[] get-tuple-element(f), index=1
  i = s32[] get-tuple-element(f), index=0
  ROOT t = (f32[], s32[]) tuple(v, i)
}
flat {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  nan = pred[] compare(v0, v0), direction=NE
  take = pred[] or(gt, nan)
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  take_i = pred[] or(take, tie)
  v = f32[] select(take, v0, v1)
  i = s32[] select(take_i, i0, i1)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[37,6] parameter(0)
  idx = s32[37,6] iota(), iota_dimension=0
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[6], s32[6]) reduce(a, idx, ninf, zero), dimensions={0}, to_apply=nested
  q = (f32[6], s32[6]) reduce(a, idx, ninf, zero), dimensions={0}, to_apply=flat
  ri = s32[6] get-tuple-element(r), index=1
  qi = s32[6] get-tuple-element(q), index=1
  rv = f32[6] get-tuple-element(r), index=0
  qv = f32[6] get-tuple-element(q), index=0
  ROOT t = (s32[6], s32[6], f32[6], f32[6]) tuple(ri, qi, rv, qv)
}
)";
  // The nested reducer compiles to a scalar program (no executor call per element).
  auto module = ParseModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  for (const auto& c : (*module)->computations()) {
    if (c->name() == "nested" || c->name() == "flat") {
      EXPECT_TRUE(ScalarProgram::Compile(*c).has_value()) << c->name();
    }
  }
  // Rounded to a few values, so ties (resolved to the lower index) are common.
  Value a = MakeArray(S("f32[37,6]"), [](int64_t i) { return static_cast<double>((i * 7919) % 5); });
  std::vector<double> x = ToDoubles(a);
  for (int threads : {1, 2}) {
    auto out = RunText(text, {a}, threads);
    ASSERT_TRUE(out.ok()) << out.status().message();
    const std::vector<int64_t> ri = testing::ToInts(out->tuple[0]), qi = testing::ToInts(out->tuple[1]);
    for (int c = 0; c < 6; ++c) {
      int best = 0;
      for (int r = 1; r < 37; ++r) {
        if (x[r * 6 + c] > x[best * 6 + c]) best = r;
      }
      EXPECT_EQ(ri[c], best) << "column " << c;
      EXPECT_EQ(qi[c], best) << "column " << c;
      EXPECT_EQ(ToDoubles(out->tuple[2])[c], x[best * 6 + c]);
    }
  }
}

// A variadic reducer with an op the scalar interpreter lacks (exponential) falls back to an
// executor call per element; both paths must give the reference results.
TEST(ReduceTest, VariadicReducerOutsideTheScalarInterpreter) {
  const char* text = R"(HloModule m
expsum_count {
  s0 = f32[] parameter(0)
  c0 = s32[] parameter(1)
  y = f32[] parameter(2)
  c1 = s32[] parameter(3)
  e = f32[] exponential(y)
  s = f32[] add(s0, e)
  c = s32[] add(c0, c1)
  ROOT t = (f32[], s32[]) tuple(s, c)
}
ENTRY e {
  a = f32[5,7] parameter(0)
  one = s32[5,7] parameter(1)
  fz = f32[] constant(0)
  iz = s32[] constant(0)
  ROOT r = (f32[7], s32[7]) reduce(a, one, fz, iz), dimensions={0}, to_apply=expsum_count
}
)";
  Value a = MakeArray(S("f32[5,7]"), Uniform(9, -2, 2));
  Value ones = MakeArray(S("s32[5,7]"), [](int64_t) { return 1.0; });
  std::vector<double> x = ToDoubles(a);
  for (int threads : {1, 2}) {
    auto out = RunText(text, {a, ones}, threads);
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (int c = 0; c < 7; ++c) {
      double want = 0;
      for (int r = 0; r < 5; ++r) want += std::exp(x[r * 7 + c]);
      EXPECT_NEAR(ToDoubles(out->tuple[0])[c], want, 1e-5 * want);
      EXPECT_EQ(testing::ToInts(out->tuple[1])[c], 5);
    }
  }
}

}  // namespace
}  // namespace hlox::rt
