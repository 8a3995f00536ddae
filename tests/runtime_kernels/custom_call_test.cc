// Custom calls: __cublas$gemm vs a naive dot, LU (P A = L U with LAPACK pivots) and
// pivots-to-permutation, QR (Q R = A, Q^T Q = I), potrf, trsm with jaxlib's packed descriptor,
// the Neuron GELU/RMSNorm formulas, and the unknown-target error.
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

std::unique_ptr<Instruction> Call(const std::string& target, const Shape& shape, const std::string& config = "") {
  auto instr = Instruction::Create(Opcode::kCustomCall, shape, {});
  instr->attrs().custom_call_target = target;
  instr->attrs().backend_config = config;
  return instr;
}

std::string Packed(const std::vector<int32_t>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(CustomCall, CublasGemmTransposedLhsWithWorkspace) {
  std::mt19937_64 rng(1);
  // lhs [K=5, M=3] contracting dim 0, rhs [N=4, K=5] contracting dim 1; alpha 2; beta 1 + bias.
  const std::string cfg = R"({"alpha_real":2,"alpha_imag":0,"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]}})";
  auto instr = Call("__cublas$gemm", Shape::Tuple({Shape(PrimitiveType::kF32, {3, 4}), Shape(PrimitiveType::kS8, {16})}), cfg);
  BufferPtr a = RandomBuffer(Shape(PrimitiveType::kF32, {5, 3}), rng), b = RandomBuffer(Shape(PrimitiveType::kF32, {4, 5}), rng);
  BufferPtr c = RandomBuffer(Shape(PrimitiveType::kF32, {3, 4}), rng);
  Value got = RunKernel(&CustomCallKernel, *instr, {a, b, c});
  const auto av = Doubles(*a), bv = Doubles(*b), cv = Doubles(*c);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int p = 0; p < 5; ++p) s += av[p * 3 + i] * bv[j * 5 + p];
      want.push_back(2 * s + cv[i * 4 + j]);
    }
  EXPECT_ALL_CLOSE(Doubles(*got.tuple[0].array), want, 1e-5, 1e-5);
  EXPECT_EQ(Doubles(*got.tuple[1].array), std::vector<double>(16, 0));
}

TEST(CustomCall, GetrfAndPivotsToPermutation) {
  std::mt19937_64 rng(2);
  const int64_t n = 4;
  BufferPtr a = RandomBuffer(Shape(PrimitiveType::kF64, {2, n, n}), rng);
  auto instr = Call("cusolver_getrf", Shape::Tuple({Shape(PrimitiveType::kF64, {2, n, n}), Shape(PrimitiveType::kS32, {2, n}),
                                                    Shape(PrimitiveType::kS32, {2}), Shape(PrimitiveType::kF64, {8})}));
  Value got = RunKernel(&CustomCallKernel, *instr, {a});
  const auto lu = Doubles(*got.tuple[0].array), piv = Doubles(*got.tuple[1].array), av = Doubles(*a);
  EXPECT_EQ(Doubles(*got.tuple[2].array), (std::vector<double>{0, 0}));
  // 0-based pivots -> permutation via the custom call; then P A == L U.
  std::vector<double> piv0;
  for (double p : piv) piv0.push_back(p - 1);
  auto perm_call = Call("cuda_lu_pivots_to_permutation", Shape(PrimitiveType::kS32, {2, n}));
  Value perm = RunKernel(&CustomCallKernel, *perm_call, {MakeBuffer(Shape(PrimitiveType::kS32, {2, n}), piv0)});
  const auto pv = Doubles(*perm.array);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<double> pa, lu_prod;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        pa.push_back(av[b * n * n + static_cast<int64_t>(pv[b * n + i]) * n + j]);
        double s = 0;
        for (int64_t p = 0; p <= std::min(i, j); ++p) {
          const double l = p == i ? 1.0 : lu[b * n * n + i * n + p];
          s += l * lu[b * n * n + p * n + j];
        }
        lu_prod.push_back(s);
      }
    EXPECT_ALL_CLOSE(lu_prod, pa, 1e-12, 1e-12);
  }
}

TEST(CustomCall, GeqrfOrgqrReconstruct) {
  std::mt19937_64 rng(3);
  const int64_t m = 6, n = 3;
  BufferPtr a = RandomBuffer(Shape(PrimitiveType::kF32, {m, n}), rng);
  auto qr = Call("cusolver_geqrf", Shape::Tuple({Shape(PrimitiveType::kF32, {m, n}), Shape(PrimitiveType::kF32, {n}),
                                                 Shape(PrimitiveType::kS32, {}), Shape(PrimitiveType::kF32, {4})}));
  Value h = RunKernel(&CustomCallKernel, *qr, {a});
  auto org = Call("cusolver_orgqr", Shape::Tuple({Shape(PrimitiveType::kF32, {m, n}), Shape(PrimitiveType::kS32, {}),
                                                  Shape(PrimitiveType::kF32, {4})}));
  Value q = RunKernel(&CustomCallKernel, *org, {h.tuple[0].array, h.tuple[1].array});
  const auto qv = Doubles(*q.tuple[0].array), hv = Doubles(*h.tuple[0].array), av = Doubles(*a);
  std::vector<double> rec, qtq;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p <= j; ++p) s += qv[i * n + p] * hv[p * n + j];
      rec.push_back(s);
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < m; ++p) s += qv[p * n + i] * qv[p * n + j];
      qtq.push_back(s - (i == j));
    }
  EXPECT_ALL_CLOSE(rec, av, 1e-5, 1e-5);
  EXPECT_ALL_CLOSE(qtq, std::vector<double>(qtq.size(), 0.0), 1e-5, 0);
}

TEST(CustomCall, PotrfAndTrsmFromDescriptors) {
  // A = [[4, 2], [2, 3]] -> L = [[2, 0], [1, sqrt 2]]; upper triangle keeps the input.
  auto potrf = Call("cusolver_potrf", Shape::Tuple({Shape(PrimitiveType::kF32, {2, 2}), Shape(PrimitiveType::kS32, {}),
                                                    Shape(PrimitiveType::kS8, {8})}),
                    Packed({0, 0, 1, 0, 2, 0, 32, 0}));
  Value l = RunKernel(&CustomCallKernel, *potrf, {MakeBuffer(Shape(PrimitiveType::kF32, {2, 2}), {4, 2, 2, 3})});
  EXPECT_ALL_CLOSE(Doubles(*l.tuple[0].array), (std::vector<double>{2, 2, 1, std::sqrt(2.0)}), 1e-6, 1e-6);
  EXPECT_EQ(Doubles(*l.tuple[1].array)[0], 0);
  Value bad = RunKernel(&CustomCallKernel, *potrf, {MakeBuffer(Shape(PrimitiveType::kF32, {2, 2}), {1, 2, 2, 1})});
  EXPECT_EQ(Doubles(*bad.tuple[1].array)[0], 2);
  // trsm: left, lower, transpose per descriptor; L^T x = b with L = [[2,0],[1,1]].
  const Shape r = Shape::Tuple({Shape(PrimitiveType::kF64, {1, 2, 1}), Shape(PrimitiveType::kS8, {8}), Shape(PrimitiveType::kS8, {8})});
  BufferPtr lmat = MakeBuffer(Shape(PrimitiveType::kF64, {1, 2, 2}), {2, 99, 1, 1});
  BufferPtr b = MakeBuffer(Shape(PrimitiveType::kF64, {1, 2, 1}), {4, 3});
  auto n_solve = Call("cublas_trsm_batched", r, Packed({1, 1, 2, 1, 0, 0, 0, 0}));
  EXPECT_EQ(Doubles(*RunKernel(&CustomCallKernel, *n_solve, {lmat, b}).tuple[0].array), (std::vector<double>{2, 1}));
  auto t_solve = Call("cublas_trsm_batched", r, Packed({1, 1, 2, 1, 0, 0, 1, 0}));
  EXPECT_EQ(Doubles(*RunKernel(&CustomCallKernel, *t_solve, {lmat, b}).tuple[0].array), (std::vector<double>{0.5, 3}));
}

TEST(CustomCall, NeuronGeluFamilyAndRmsNorm) {
  const std::vector<double> x{-2, -0.5, 0, 1, 3};
  BufferPtr xb = MakeBuffer(Shape(PrimitiveType::kF64, {5}), x);
  std::vector<double> gelu, tanh_gelu, dgelu;
  for (double v : x) {
    gelu.push_back(v * 0.5 * std::erfc(-v / std::sqrt(2.0)));
    tanh_gelu.push_back(0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
    const double h = 1e-6;
    auto g = [](double t) { return t * 0.5 * std::erfc(-t / std::sqrt(2.0)); };
    dgelu.push_back((g(v + h) - g(v - h)) / (2 * h));
  }
  const Shape s(PrimitiveType::kF64, {5});
  EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGelu", s), {xb}).array), gelu, 1e-12, 1e-12);
  EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGeluApprxTanh", s), {xb}).array), tanh_gelu, 1e-12, 1e-12);
  EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGeluBackward", s), {xb}).array), dgelu, 1e-7, 1e-7);
  EXPECT_EQ(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronTransferWithStaticRing", s), {xb}).array), x);
  // RMSNorm over dim 0 (hidden-first layout [h=3, s=2]) with f16 output.
  BufferPtr xr = MakeBuffer(Shape(PrimitiveType::kF32, {3, 2}), {1, 2, 3, 4, 5, 6});
  BufferPtr w = MakeBuffer(Shape(PrimitiveType::kF32, {3}), {1, 2, 0.5});
  BufferPtr eps = MakeBuffer(Shape(PrimitiveType::kF32, {}), {1e-5});
  Value r = RunKernel(&CustomCallKernel, *Call("AwsNeuronRmsNorm", Shape(PrimitiveType::kF16, {3, 2})), {xr, w, eps});
  std::vector<double> want(6);
  for (int c = 0; c < 2; ++c) {
    const double ms = (std::pow(1 + c, 2) + std::pow(3 + c, 2) + std::pow(5 + c, 2)) / 3;
    for (int h = 0; h < 3; ++h) want[h * 2 + c] = (1 + 2 * h + c) / std::sqrt(ms + 1e-5) * std::vector<double>{1, 2, 0.5}[h];
  }
  EXPECT_ALL_CLOSE(Doubles(*r.array), want, 1e-3, 1e-3);
}

TEST(CustomCall, NeuronGeluInF32AndBf16MatchesDouble) {
  // f32/bf16 take the vector-math path (chunks of 1024 and a ragged tail); compared with the
  // formulas in double. (grad, x) multiplies the backward by grad.
  const int64_t n = 3001;
  std::vector<double> x(n), g(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = -7.0 + 14.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    g[i] = 0.25 + 0.001 * static_cast<double>(i % 97);
  }
  auto phi = [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); };
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16}) {
    const Shape s(t, {n});
    BufferPtr xb = MakeBuffer(s, x), gb = MakeBuffer(s, g);
    const std::vector<double> xr = Doubles(*xb), gr = Doubles(*gb);  // as stored (bf16 rounds)
    std::vector<double> gelu(n), tanh_gelu(n), dgelu(n);
    for (int64_t i = 0; i < n; ++i) {
      const double v = xr[i];
      gelu[i] = v * phi(v);
      tanh_gelu[i] = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      dgelu[i] = (phi(v) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * std::numbers::pi)) * gr[i];
    }
    const double tol = t == PrimitiveType::kF32 ? 2e-6 : 8e-3;
    EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGelu", s), {xb}).array), gelu, tol, tol);
    EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGeluApprxTanh", s), {xb}).array), tanh_gelu,
                     tol, tol);
    EXPECT_ALL_CLOSE(Doubles(*RunKernel(&CustomCallKernel, *Call("AwsNeuronGeluBackward", s), {gb, xb}).array), dgelu,
                     tol, tol);
  }
}

TEST(CustomCall, UnknownTargetIsAnErrorNamingIt) {
  unsetenv("HLOX_TEST_TARGETS");
  for (const char* t : {"my_custom_op", "__hlox$abort", "__hlox$hang"}) {
    auto r = TryKernel(&CustomCallKernel, *Call(t, Shape(PrimitiveType::kF32, {1})), {MakeBuffer(Shape(PrimitiveType::kF32, {1}), {1})});
    ASSERT_FALSE(r.ok());
    EXPECT_NE(std::string(r.status().message()).find(std::string("'") + t + "'"), std::string::npos) << r.status();
  }
}

TEST(CustomCallDeathTest, AbortTargetWhenEnabled) {
  auto instr = Call("__hlox$abort", Shape(PrimitiveType::kF32, {1}));
  EXPECT_DEATH({
    setenv("HLOX_TEST_TARGETS", "1", 1);
    (void)TryKernel(&CustomCallKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {1}), {1})});
  }, "");
}

}  // namespace
}  // namespace hlox::rt::testing
