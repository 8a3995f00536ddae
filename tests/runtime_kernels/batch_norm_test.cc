// batch-norm training/inference/grad against direct formulas, for feature_index 0, middle and
// last, with the gradient also checked by finite differences of a scalar loss.
#include <cmath>

#include "kernel_test_util.h"

namespace hlox::rt::testing {
namespace {

struct Stats {
  std::vector<double> mean, var;
};

Stats RefStats(const std::vector<double>& x, const std::vector<int64_t>& dims, int64_t fi) {
  const int64_t f = dims[fi];
  Stats s{std::vector<double>(f, 0), std::vector<double>(f, 0)};
  std::vector<double> cnt(f, 0);
  std::vector<int64_t> idx(dims.size(), 0);
  for (size_t i = 0; i < x.size(); ++i, NextIndex(idx, dims)) {
    s.mean[idx[fi]] += x[i];
    cnt[idx[fi]] += 1;
  }
  for (int64_t c = 0; c < f; ++c) s.mean[c] /= cnt[c];
  std::fill(idx.begin(), idx.end(), 0);
  for (size_t i = 0; i < x.size(); ++i, NextIndex(idx, dims)) s.var[idx[fi]] += std::pow(x[i] - s.mean[idx[fi]], 2) / cnt[idx[fi]];
  return s;
}

TEST(BatchNormKernel, TrainingInferenceGrad) {
  std::mt19937_64 rng(6);
  const std::vector<int64_t> dims{3, 4, 5};
  for (int64_t fi = 0; fi < 3; ++fi) {
    const int64_t f = dims[fi];
    BufferPtr x = RandomBuffer(Shape(PrimitiveType::kF32, dims), rng);
    BufferPtr scale = RandomBuffer(Shape(PrimitiveType::kF32, {f}), rng);
    BufferPtr offset = RandomBuffer(Shape(PrimitiveType::kF32, {f}), rng);
    const Shape fs(PrimitiveType::kF32, {f});
    auto tr = Instruction::Create(Opcode::kBatchNormTraining, Shape::Tuple({Shape(PrimitiveType::kF32, dims), fs, fs}), {});
    tr->attrs().feature_index = fi;
    tr->attrs().epsilon = 0.001f;
    Value t = RunKernel(&BatchNormKernel, *tr, {x, scale, offset}, 2);
    const std::vector<double> xv = Doubles(*x), sv = Doubles(*scale), ov = Doubles(*offset);
    Stats st = RefStats(xv, dims, fi);
    EXPECT_ALL_CLOSE(Doubles(*t.tuple[1].array), st.mean, 1e-6, 1e-5);
    EXPECT_ALL_CLOSE(Doubles(*t.tuple[2].array), st.var, 1e-6, 1e-5);
    std::vector<double> want(xv.size());
    std::vector<int64_t> idx(3, 0);
    for (size_t i = 0; i < xv.size(); ++i, NextIndex(idx, dims)) {
      const int64_t c = idx[fi];
      want[i] = (xv[i] - st.mean[c]) / std::sqrt(st.var[c] + 0.001f) * sv[c] + ov[c];
    }
    EXPECT_ALL_CLOSE(Doubles(*t.tuple[0].array), want, 1e-5, 1e-4);
    // Inference with the batch statistics reproduces training's output.
    auto inf = Instruction::Create(Opcode::kBatchNormInference, Shape(PrimitiveType::kF32, dims), {});
    inf->attrs().feature_index = fi;
    inf->attrs().epsilon = 0.001f;
    Value iv = RunKernel(&BatchNormKernel, *inf, {x, scale, offset, t.tuple[1].array, t.tuple[2].array});
    EXPECT_ALL_CLOSE(Doubles(*iv.array), want, 1e-5, 1e-4);
    // Grad: loss = sum(dy * y(x)); check d loss / d x by central differences in f64.
    BufferPtr dy = RandomBuffer(Shape(PrimitiveType::kF32, dims), rng);
    auto gr = Instruction::Create(Opcode::kBatchNormGrad, Shape::Tuple({Shape(PrimitiveType::kF32, dims), fs, fs}), {});
    gr->attrs().feature_index = fi;
    gr->attrs().epsilon = 0.001f;
    Value g = RunKernel(&BatchNormKernel, *gr, {x, scale, t.tuple[1].array, t.tuple[2].array, dy});
    const std::vector<double> dyv = Doubles(*dy);
    auto loss = [&](const std::vector<double>& xx) {
      Stats s2 = RefStats(xx, dims, fi);
      double l = 0;
      std::vector<int64_t> k(3, 0);
      for (size_t i = 0; i < xx.size(); ++i, NextIndex(k, dims)) {
        const int64_t c = k[fi];
        l += dyv[i] * ((xx[i] - s2.mean[c]) / std::sqrt(s2.var[c] + 0.001f) * sv[c] + ov[c]);
      }
      return l;
    };
    std::vector<double> num(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      std::vector<double> p = xv, m = xv;
      p[i] += 1e-5;
      m[i] -= 1e-5;
      num[i] = (loss(p) - loss(m)) / 2e-5;
    }
    EXPECT_ALL_CLOSE(Doubles(*g.tuple[0].array), num, 1e-3, 1e-3);
    std::vector<double> doff(f, 0), dsc(f, 0);
    std::fill(idx.begin(), idx.end(), 0);
    for (size_t i = 0; i < xv.size(); ++i, NextIndex(idx, dims)) {
      doff[idx[fi]] += dyv[i];
      dsc[idx[fi]] += dyv[i] * (xv[i] - st.mean[idx[fi]]) / std::sqrt(st.var[idx[fi]] + 0.001f);
    }
    EXPECT_ALL_CLOSE(Doubles(*g.tuple[2].array), doff, 1e-5, 1e-4);
    EXPECT_ALL_CLOSE(Doubles(*g.tuple[1].array), dsc, 1e-4, 1e-4);
  }
}

}  // namespace
}  // namespace hlox::rt::testing
