// triangular-solve (every side/triangle/transpose/unit combination, batched) checked by the
// residual op(A) X - B computed from the full triangle, and cholesky by L L^T = A with only
// the named triangle read.
#include <cmath>
#include <cstring>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

// A well-conditioned random matrix whose "other" triangle holds garbage that must be ignored.
std::vector<double> TriMatrix(std::mt19937_64& rng, int64_t k) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(k * k);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) a[i * k + j] = i == j ? 3 + u(rng) : u(rng) * 0.5;
  return a;
}

TEST(LinalgKernel, TriangularSolveAllVariants) {
  std::mt19937_64 rng(8);
  const int64_t batch = 2, m = 4, n = 3;
  for (int mask = 0; mask < 32; ++mask) {
    const bool left = mask & 1, lower = mask & 2, unit = mask & 4;
    const char* ta = (mask >> 3) == 0 ? "NO_TRANSPOSE" : (mask >> 3) == 1 ? "TRANSPOSE" : "ADJOINT";
    if ((mask >> 3) > 2) continue;
    const int64_t k = left ? m : n;
    std::vector<double> av;
    for (int64_t b = 0; b < batch; ++b) {
      auto a1 = TriMatrix(rng, k);
      av.insert(av.end(), a1.begin(), a1.end());
    }
    BufferPtr a = MakeBuffer(Shape(PrimitiveType::kF64, {batch, k, k}), av);
    BufferPtr b = RandomBuffer(Shape(PrimitiveType::kF64, {batch, m, n}), rng);
    auto instr = Instruction::Create(Opcode::kTriangularSolve, Shape(PrimitiveType::kF64, {batch, m, n}), {});
    instr->attrs().left_side = left;
    instr->attrs().lower = lower;
    instr->attrs().unit_diagonal = unit;
    instr->attrs().transpose_a = ta;
    Value x = RunKernel(&LinalgKernel, *instr, {a, b});
    const std::vector<double> xv = Doubles(*x.array), bv = Doubles(*b);
    // Effective op(A) from the named triangle only.
    std::vector<double> resid;
    for (int64_t bi = 0; bi < batch; ++bi) {
      auto t = [&](int64_t i, int64_t j) {
        const int64_t r = std::string(ta) == "NO_TRANSPOSE" ? i : j, c = std::string(ta) == "NO_TRANSPOSE" ? j : i;
        if (r == c) return unit ? 1.0 : av[bi * k * k + r * k + c];
        if ((lower && r < c) || (!lower && r > c)) return 0.0;
        return av[bi * k * k + r * k + c];
      };
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          if (left) for (int64_t p = 0; p < k; ++p) s += t(i, p) * xv[bi * m * n + p * n + j];
          else for (int64_t p = 0; p < k; ++p) s += xv[bi * m * n + i * n + p] * t(p, j);
          resid.push_back(s - bv[bi * m * n + i * n + j]);
        }
      }
    }
    SCOPED_TRACE(::testing::Message() << "mask " << mask);
    EXPECT_ALL_CLOSE(resid, std::vector<double>(resid.size(), 0.0), 1e-10, 0);
  }
}

// G G^T + shift I for a k x k G uniform in [-1, 1) (row-major): symmetric positive definite.
std::vector<double> PositiveDefinite(int64_t k, uint64_t seed, double shift) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> g(k * k), a(k * k, 0);
  for (double& v : g) v = u(rng);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      for (int64_t p = 0; p < k; ++p) a[i * k + j] += g[i * k + p] * g[j * k + p];
      if (i == j) a[i * k + j] += shift;
    }
  return a;
}

TEST(LinalgKernel, CholeskyReadsOneTriangleAndNaNsWhenIndefinite) {
  const int64_t k = 5;
  const std::vector<double> a = PositiveDefinite(k, 12, 1);
  for (bool lower : {true, false}) {
    std::vector<double> in = a;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        if ((lower && j > i) || (!lower && j < i)) in[i * k + j] = 99;  // must be ignored
    auto instr = Instruction::Create(Opcode::kCholesky, Shape(PrimitiveType::kF32, {k, k}), {});
    instr->attrs().lower = lower;
    Value got = RunKernel(&LinalgKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF32, {k, k}), in)});
    const std::vector<double> l = Doubles(*got.array);
    std::vector<double> rec(k * k, 0);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t p = 0; p < k; ++p)
          rec[i * k + j] += lower ? l[i * k + p] * l[j * k + p] : l[p * k + i] * l[p * k + j];
    EXPECT_ALL_CLOSE(rec, a, 1e-4, 1e-4);
  }
  auto instr = Instruction::Create(Opcode::kCholesky, Shape(PrimitiveType::kF64, {2, 2}), {});
  instr->attrs().lower = true;
  Value bad = RunKernel(&LinalgKernel, *instr, {MakeBuffer(Shape(PrimitiveType::kF64, {2, 2}), {1, 0, 2, 1})});
  EXPECT_TRUE(std::isnan(Doubles(*bad.array)[3]));
}

// A matrix big enough that each column's rows split over the pool (n^2 j / 2 work): the same
// bits with 1 and 2 threads, and L L^T = A.
TEST(LinalgKernel, BigCholeskySameBitsForAnyThreadCount) {
  const int64_t k = 400;
  const std::vector<double> a = PositiveDefinite(k, 13, k);
  auto instr = Instruction::Create(Opcode::kCholesky, Shape(PrimitiveType::kF64, {k, k}), {});
  instr->attrs().lower = true;
  const BufferPtr in = MakeBuffer(Shape(PrimitiveType::kF64, {k, k}), a);
  const std::vector<double> l1 = Doubles(*RunKernel(&LinalgKernel, *instr, {in}, 1).array);
  const std::vector<double> l2 = Doubles(*RunKernel(&LinalgKernel, *instr, {in}, 2).array);
  ASSERT_EQ(l1.size(), l2.size());
  EXPECT_EQ(std::memcmp(l1.data(), l2.data(), l1.size() * sizeof(double)), 0);
  double worst = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double rec = 0;
      for (int64_t p = 0; p <= j; ++p) rec += l1[i * k + p] * l1[j * k + p];
      worst = std::max(worst, std::fabs(rec - a[i * k + j]) / k);
    }
  EXPECT_LT(worst, 1e-12);
}

}  // namespace
}  // namespace hlox::rt::testing
