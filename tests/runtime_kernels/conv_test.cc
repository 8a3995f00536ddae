// Convolution against a direct-sum reference over random geometries: 1-3 spatial dims, random
// dim_labels, padding (negative too), strides, both dilations, reversal, feature groups
// (incl. depthwise) and batch groups, in f32, f64, bf16 and s32; plus thread-count determinism.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "kernel_test_util.h"
#include "runtime/conv/tuning.h"
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt::testing {
namespace {

struct ConvCase {
  int s = 2;
  int64_t n = 2, c = 4, o = 4, groups = 1, batch_groups = 1;
  std::vector<int64_t> in, k, out;
  Window win;
  ConvDimensionNumbers dn;
  std::vector<int64_t> lhs_dims, rhs_dims, out_dims;
};

std::vector<int64_t> Perm(int n, std::mt19937_64& rng) {
  std::vector<int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

bool MakeCase(std::mt19937_64& rng, ConvCase& cc) {
  auto r = [&](int lo, int hi) { return static_cast<int64_t>(lo + rng() % (hi - lo + 1)); };
  cc.s = static_cast<int>(r(1, 3));
  const int mode = static_cast<int>(r(0, 3));  // 0 plain, 1 feature groups, 2 depthwise, 3 batch groups
  cc.groups = mode == 1 ? r(2, 3) : mode == 2 ? r(2, 4) : 1;
  cc.batch_groups = mode == 3 ? r(2, 3) : 1;
  cc.n = cc.batch_groups * r(1, 2);
  const int64_t ck = mode == 2 ? 1 : r(1, 3);
  cc.c = ck * cc.groups;
  cc.o = cc.groups * cc.batch_groups * r(1, 3);
  cc.in.clear(); cc.k.clear(); cc.out.clear(); cc.win.dims.clear();
  for (int d = 0; d < cc.s; ++d) {
    WindowDimension w;
    const int64_t in = r(1, cc.s == 3 ? 4 : 7);
    w.size = r(1, 3);
    w.stride = r(1, 2);
    w.base_dilation = r(1, 2);
    w.window_dilation = r(1, 2);
    w.pad_low = r(-1, 2);
    w.pad_high = r(-1, 2);
    w.reversal = rng() & 1;
    const int64_t padded = (in - 1) * w.base_dilation + 1 + w.pad_low + w.pad_high;
    const int64_t dk = (w.size - 1) * w.window_dilation + 1;
    if (padded < dk) return false;
    cc.in.push_back(in);
    cc.k.push_back(w.size);
    cc.out.push_back((padded - dk) / w.stride + 1);
    cc.win.dims.push_back(w);
  }
  const int rank = cc.s + 2;
  std::vector<int64_t> lp = Perm(rank, rng), kp = Perm(rank, rng), op = Perm(rank, rng);
  cc.dn = ConvDimensionNumbers();
  cc.dn.input_batch = lp[0]; cc.dn.input_feature = lp[1];
  cc.dn.kernel_input_feature = kp[0]; cc.dn.kernel_output_feature = kp[1];
  cc.dn.output_batch = op[0]; cc.dn.output_feature = op[1];
  cc.lhs_dims.assign(rank, 0); cc.rhs_dims.assign(rank, 0); cc.out_dims.assign(rank, 0);
  cc.lhs_dims[lp[0]] = cc.n; cc.lhs_dims[lp[1]] = cc.c;
  cc.rhs_dims[kp[0]] = ck; cc.rhs_dims[kp[1]] = cc.o;
  cc.out_dims[op[0]] = cc.n / cc.batch_groups; cc.out_dims[op[1]] = cc.o;
  for (int d = 0; d < cc.s; ++d) {
    cc.dn.input_spatial.push_back(lp[2 + d]);
    cc.dn.kernel_spatial.push_back(kp[2 + d]);
    cc.dn.output_spatial.push_back(op[2 + d]);
    cc.lhs_dims[lp[2 + d]] = cc.in[d];
    cc.rhs_dims[kp[2 + d]] = cc.k[d];
    cc.out_dims[op[2 + d]] = cc.out[d];
  }
  return true;
}

// Direct definition: out[b, f, o] = sum_{ci, k} padded_dilated_in[b', g*ck+ci, o*s + k*rd] *
// kernel[ci, f, rev(k)], with the group g and input batch b' chosen from f.
std::vector<double> Reference(const ConvCase& cc, const std::vector<double>& lhs, const std::vector<double>& rhs) {
  const std::vector<int64_t> ls = RowMajorStrides(cc.lhs_dims), ks = RowMajorStrides(cc.rhs_dims),
                             os = RowMajorStrides(cc.out_dims);
  const int64_t ck = cc.c / cc.groups;
  const int64_t per_fg = cc.o / cc.groups, per_bg = cc.o / cc.batch_groups, nout = cc.n / cc.batch_groups;
  std::vector<double> out(std::accumulate(cc.out_dims.begin(), cc.out_dims.end(), int64_t{1}, std::multiplies<>()), 0.0);
  std::vector<int64_t> oidx(cc.s, 0), kidx(cc.s, 0);
  for (int64_t b = 0; b < nout; ++b) {
    for (int64_t f = 0; f < cc.o; ++f) {
      const int64_t g = f / per_fg, bg = f / per_bg;
      const int64_t ib = bg * nout + b;
      std::fill(oidx.begin(), oidx.end(), 0);
      do {
        double acc = 0;
        for (int64_t ci = 0; ci < ck; ++ci) {
          std::fill(kidx.begin(), kidx.end(), 0);
          do {
            int64_t loff = ib * ls[cc.dn.input_batch] + (g * ck + ci) * ls[cc.dn.input_feature];
            int64_t koff = ci * ks[cc.dn.kernel_input_feature] + f * ks[cc.dn.kernel_output_feature];
            bool ok = true;
            for (int d = 0; d < cc.s && ok; ++d) {
              const WindowDimension& w = cc.win.dims[d];
              const int64_t q = oidx[d] * w.stride + kidx[d] * w.window_dilation - w.pad_low;  // dilated coord
              if (q < 0 || q % w.base_dilation != 0 || q / w.base_dilation >= cc.in[d]) ok = false;
              loff += (q / w.base_dilation) * ls[cc.dn.input_spatial[d]];
              const int64_t kk = w.reversal ? cc.k[d] - 1 - kidx[d] : kidx[d];
              koff += kk * ks[cc.dn.kernel_spatial[d]];
            }
            if (ok) acc += lhs[loff] * rhs[koff];
          } while (NextIndex(kidx, cc.k));
        }
        int64_t ooff = b * os[cc.dn.output_batch] + f * os[cc.dn.output_feature];
        for (int d = 0; d < cc.s; ++d) ooff += oidx[d] * os[cc.dn.output_spatial[d]];
        out[ooff] = acc;
      } while (NextIndex(oidx, cc.out));
    }
  }
  return out;
}

std::unique_ptr<Instruction> ConvInstr(const ConvCase& cc, PrimitiveType out_type) {
  auto instr = Instruction::Create(Opcode::kConvolution, Shape(out_type, cc.out_dims), {});
  instr->attrs().conv = cc.dn;
  instr->attrs().window = cc.win;
  instr->attrs().feature_group_count = cc.groups;
  instr->attrs().batch_group_count = cc.batch_groups;
  return instr;
}

TEST(ConvolutionKernel, RandomGeometriesAllTypes) {
  std::mt19937_64 rng(7);
  int tested = 0;
  const PrimitiveType types[] = {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kBF16, PrimitiveType::kS32};
  for (int iter = 0; iter < 400 && tested < 160; ++iter) {
    ConvCase cc;
    if (!MakeCase(rng, cc)) continue;
    const PrimitiveType t = types[tested % 4];
    BufferPtr lhs = RandomBuffer(Shape(t, cc.lhs_dims), rng);
    BufferPtr rhs = RandomBuffer(Shape(t, cc.rhs_dims), rng);
    auto instr = ConvInstr(cc, t);
    Value got = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 1 + tested % 2);
    ASSERT_TRUE(got.is_array());
    std::vector<double> want = Reference(cc, Doubles(*lhs), Doubles(*rhs));
    const double tol = t == PrimitiveType::kBF16 ? 2e-2 : t == PrimitiveType::kF32 ? 1e-5 : 1e-12;
    SCOPED_TRACE(::testing::Message() << "case " << tested << " type " << PrimitiveTypeName(t) << " s=" << cc.s
                                    << " groups=" << cc.groups << " batch_groups=" << cc.batch_groups);
    EXPECT_ALL_CLOSE(Doubles(*got.array), want, tol, tol);
    ++tested;
  }
  EXPECT_GE(tested, 100);
}

TEST(ConvolutionKernel, MixedPrecisionAndZeroSized) {
  std::mt19937_64 rng(3);
  ConvCase cc;
  while (!MakeCase(rng, cc)) {}
  BufferPtr lhs = RandomBuffer(Shape(PrimitiveType::kF16, cc.lhs_dims), rng);
  BufferPtr rhs = RandomBuffer(Shape(PrimitiveType::kF16, cc.rhs_dims), rng);
  auto instr = ConvInstr(cc, PrimitiveType::kF32);  // preferred_element_type=f32
  Value got = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs});
  EXPECT_ALL_CLOSE(Doubles(*got.array), Reference(cc, Doubles(*lhs), Doubles(*rhs)), 1e-5, 1e-5);
  // Zero-sized batch.
  cc.lhs_dims[cc.dn.input_batch] = 0;
  cc.out_dims[cc.dn.output_batch] = 0;
  cc.n = 0;
  auto zi = ConvInstr(cc, PrimitiveType::kF32);
  Value z = RunKernel(&ConvolutionKernel, *zi, {RandomBuffer(Shape(PrimitiveType::kF32, cc.lhs_dims), rng),
                                                 RandomBuffer(Shape(PrimitiveType::kF32, cc.rhs_dims), rng)});
  ASSERT_TRUE(z.is_array());
  EXPECT_EQ(z.array->element_count(), 0);
}

TEST(ConvolutionKernel, DeterministicAcrossThreadsOnLargerShape) {
  std::mt19937_64 rng(11);
  ConvCase cc;
  cc.s = 2; cc.n = 2; cc.c = 16; cc.o = 24;
  cc.in = {20, 20}; cc.k = {3, 3}; cc.out = {20, 20};
  cc.win.dims.assign(2, WindowDimension{3, 1, 1, 1, 1, 1, false});
  cc.dn.input_batch = 0; cc.dn.input_feature = 3; cc.dn.input_spatial = {1, 2};
  cc.dn.kernel_spatial = {0, 1}; cc.dn.kernel_input_feature = 2; cc.dn.kernel_output_feature = 3;
  cc.dn.output_batch = 0; cc.dn.output_feature = 3; cc.dn.output_spatial = {1, 2};
  cc.lhs_dims = {2, 20, 20, 16}; cc.rhs_dims = {3, 3, 16, 24}; cc.out_dims = {2, 20, 20, 24};
  BufferPtr lhs = RandomBuffer(Shape(PrimitiveType::kF32, cc.lhs_dims), rng);
  BufferPtr rhs = RandomBuffer(Shape(PrimitiveType::kF32, cc.rhs_dims), rng);
  auto instr = ConvInstr(cc, PrimitiveType::kF32);
  Value a = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 1);
  Value b = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 2);
  ASSERT_EQ(a.array->byte_size(), b.array->byte_size());
  EXPECT_EQ(std::memcmp(a.array->data(), b.array->data(), a.array->byte_size()), 0);
  EXPECT_ALL_CLOSE(Doubles(*a.array), Reference(cc, Doubles(*lhs), Doubles(*rhs)), 1e-4, 1e-5);
}

TEST(ConvolutionKernel, DepthwiseCanonicalLayoutInPlace) {
  std::mt19937_64 rng(13);
  ConvCase cc;
  cc.s = 2; cc.n = 2; cc.c = 8; cc.o = 8; cc.groups = 8;
  cc.in = {7, 6}; cc.k = {3, 3}; cc.out = {4, 6};
  cc.win.dims = {WindowDimension{3, 2, 1, 1, 1, 1, false}, WindowDimension{3, 1, 1, 1, 1, 1, true}};
  cc.dn.input_batch = 0; cc.dn.input_feature = 3; cc.dn.input_spatial = {1, 2};
  cc.dn.kernel_spatial = {0, 1}; cc.dn.kernel_input_feature = 2; cc.dn.kernel_output_feature = 3;
  cc.dn.output_batch = 0; cc.dn.output_feature = 3; cc.dn.output_spatial = {1, 2};
  cc.lhs_dims = {2, 7, 6, 8}; cc.rhs_dims = {3, 3, 1, 8}; cc.out_dims = {2, 4, 6, 8};
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    BufferPtr lhs = RandomBuffer(Shape(t, cc.lhs_dims), rng);
    BufferPtr rhs = RandomBuffer(Shape(t, cc.rhs_dims), rng);
    auto instr = ConvInstr(cc, t);
    Value a = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 2);
    EXPECT_ALL_CLOSE(Doubles(*a.array), Reference(cc, Doubles(*lhs), Doubles(*rhs)), 1e-5, 1e-5);
  }
}

TEST(ConvolutionKernel, BadGroupsAreErrors) {
  ConvCase cc;
  std::mt19937_64 rng(5);
  while (!MakeCase(rng, cc)) {}
  auto instr = ConvInstr(cc, PrimitiveType::kF32);
  instr->attrs().feature_group_count = 7;
  auto r = TryKernel(&ConvolutionKernel, *instr, {RandomBuffer(Shape(PrimitiveType::kF32, cc.lhs_dims), rng),
                                                   RandomBuffer(Shape(PrimitiveType::kF32, cc.rhs_dims), rng)});
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace hlox::rt::testing

// --- The fast paths (depthwise direct loop, pointwise GEMM, im2col tiles) on NHWC shapes big
// enough to reach their full channel blocks and multi-tile splits.
namespace hlox::rt::testing {
namespace {

// Input dims, window, kernel dims and output dims of a 2-D case.
void SetWindow2D(const std::vector<int64_t>& in, const std::vector<WindowDimension>& win, ConvCase* cc) {
  cc->in = in;
  cc->win.dims = win;
  for (int d = 0; d < 2; ++d) {
    const WindowDimension& w = win[d];
    const int64_t padded = (in[d] - 1) * w.base_dilation + 1 + w.pad_low + w.pad_high;
    const int64_t dk = (w.size - 1) * w.window_dilation + 1;
    cc->k.push_back(w.size);
    cc->out.push_back((padded - dk) / w.stride + 1);
  }
}

ConvCase Canonical2D(int64_t n, int64_t c, int64_t o, int64_t groups, int64_t batch_groups,
                     std::vector<int64_t> in, std::vector<WindowDimension> win) {
  ConvCase cc;
  cc.s = 2; cc.n = n; cc.c = c; cc.o = o; cc.groups = groups; cc.batch_groups = batch_groups;
  SetWindow2D(in, win, &cc);
  cc.dn.input_batch = 0; cc.dn.input_feature = 3; cc.dn.input_spatial = {1, 2};
  cc.dn.kernel_spatial = {0, 1}; cc.dn.kernel_input_feature = 2; cc.dn.kernel_output_feature = 3;
  cc.dn.output_batch = 0; cc.dn.output_feature = 3; cc.dn.output_spatial = {1, 2};
  cc.lhs_dims = {n, in[0], in[1], c};
  cc.rhs_dims = {cc.k[0], cc.k[1], c / groups, o};
  cc.out_dims = {n / batch_groups, cc.out[0], cc.out[1], o};
  return cc;
}

// Runs `cc` in f32 with 1 and 2 threads: identical bits, and close to the reference. A
// backend_config picks the algorithm (runtime/conv/tuning.h).
// `result`, when given, receives the 1-thread result.
void CheckFastPath(const ConvCase& cc, uint64_t seed, const std::string& backend_config = "", double tol = 1e-4,
                   Value* result = nullptr) {
  std::mt19937_64 rng(seed);
  BufferPtr lhs = RandomBuffer(Shape(PrimitiveType::kF32, cc.lhs_dims), rng);
  BufferPtr rhs = RandomBuffer(Shape(PrimitiveType::kF32, cc.rhs_dims), rng);
  auto instr = ConvInstr(cc, PrimitiveType::kF32);
  if (!backend_config.empty()) {
    instr->attrs().backend_config = backend_config;
    instr->attrs().has_backend_config = true;
  }
  Value a = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 1);
  Value b = RunKernel(&ConvolutionKernel, *instr, {lhs, rhs}, 2);
  ASSERT_TRUE(a.is_array() && b.is_array());
  ASSERT_EQ(a.array->byte_size(), b.array->byte_size());
  EXPECT_EQ(std::memcmp(a.array->data(), b.array->data(), a.array->byte_size()), 0);
  EXPECT_ALL_CLOSE(Doubles(*a.array), Reference(cc, Doubles(*lhs), Doubles(*rhs)), tol, tol);
  if (result != nullptr) *result = a;
}

WindowDimension Win(int64_t size, int64_t stride, int64_t lo, int64_t hi, int64_t base_dil = 1,
                    int64_t win_dil = 1, bool rev = false) {
  return WindowDimension{size, stride, lo, hi, base_dil, win_dil, rev};
}

TEST(ConvolutionFastPaths, DepthwiseWithMultiplierAndPartialChannelBlock) {
  // 70 channels: one full 64-channel block plus a remainder; multiplier 2 -> 140 outputs.
  CheckFastPath(Canonical2D(2, 70, 140, 70, 1, {9, 8}, {Win(3, 2, 1, 1), Win(3, 1, 1, 1)}), 21);
  // No multiplier: 70 channels = one register block of 64 plus a partial block.
  CheckFastPath(Canonical2D(2, 70, 70, 70, 1, {9, 8}, {Win(3, 2, 1, 1), Win(5, 1, 2, 1)}), 23);
  // Exactly one block, 5x5 window with dilation 2 and reversal.
  CheckFastPath(Canonical2D(1, 64, 64, 64, 1, {11, 10}, {Win(5, 1, 2, 2, 1, 2), Win(5, 1, 4, 4, 1, 1, true)}), 22);
}

TEST(ConvolutionFastPaths, PointwiseAndStridedOneByOne) {
  // Pointwise: one GEMM per group over all images.
  CheckFastPath(Canonical2D(3, 40, 33, 1, 1, {9, 7}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)}), 31);
  CheckFastPath(Canonical2D(2, 32, 24, 4, 1, {6, 5}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)}), 32);
  // 1x1 with stride 2 and with padding go through im2col.
  CheckFastPath(Canonical2D(2, 24, 40, 1, 1, {9, 10}, {Win(1, 2, 0, 0), Win(1, 2, 0, 0)}), 33);
  CheckFastPath(Canonical2D(2, 16, 8, 1, 1, {5, 5}, {Win(1, 1, 1, 0), Win(1, 1, 0, 1)}), 34);
}

TEST(ConvolutionFastPaths, DilatedGroupedAndBatchGroups) {
  // Window and base dilation with contiguous runs on the last dim where they are valid.
  CheckFastPath(Canonical2D(2, 20, 36, 1, 1, {12, 13}, {Win(3, 1, 2, 2, 1, 2), Win(3, 2, 1, 1)}), 41);
  CheckFastPath(Canonical2D(1, 12, 16, 1, 1, {7, 6}, {Win(3, 1, 1, 1, 2, 1), Win(2, 1, 0, 1, 2, 1)}), 42);
  // Feature groups (strided channel reads inside each position).
  CheckFastPath(Canonical2D(2, 32, 16, 4, 1, {10, 9}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}), 43);
  // Batch groups (weight-gradient form), many tiles: 40x40 output positions with KC = 3*3*8.
  CheckFastPath(Canonical2D(4, 8, 6, 1, 2, {40, 40}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}), 44);
}

TEST(ConvolutionFastPaths, WideReductionWeightGradientForm) {
  // Few output rows, long reduction (window ~ image): the chunked wide-K GEMM path. Kernel
  // windows split across chunks and last-dim rows, padding, stride, dilation, groups.
  CheckFastPath(Canonical2D(6, 24, 10, 1, 1, {17, 19}, {Win(15, 1, 1, 1), Win(17, 1, 1, 1)}), 51);
  CheckFastPath(Canonical2D(3, 60, 12, 2, 1, {21, 9}, {Win(9, 2, 2, 1), Win(9, 1, 0, 0, 1, 1, true)}), 52);
  CheckFastPath(Canonical2D(4, 16, 8, 1, 1, {30, 30}, {Win(13, 2, 0, 2, 1, 2), Win(14, 1, 1, 1)}), 53);
  // Batch groups (the depthwise weight-gradient form) and a 1-wide last window dim.
  CheckFastPath(Canonical2D(8, 9, 12, 1, 4, {33, 40}, {Win(31, 1, 0, 0), Win(40, 1, 1, 1)}), 54);
  CheckFastPath(Canonical2D(2, 700, 6, 1, 1, {5, 4}, {Win(4, 1, 0, 0), Win(1, 1, 0, 0)}), 55);
}

}  // namespace
}  // namespace hlox::rt::testing

// --- The plane paths (conv/planes.cc, conv/plane_filter.cc): stride-1 convolutions whose
// spatial dims stay innermost (NCHW as PyTorch exports it), forward and weight-gradient form.
namespace hlox::rt::testing {
namespace {

// Spatial dims last everywhere; `lhs_fb` / `ker_io` / `out_fb` put feature before batch,
// input before output feature, feature before batch (else batch/output first).
ConvCase Planes2D(int64_t n, int64_t c, int64_t o, std::vector<int64_t> in, std::vector<WindowDimension> win,
                  bool lhs_fb, bool ker_io, bool out_fb) {
  ConvCase cc;
  cc.s = 2; cc.n = n; cc.c = c; cc.o = o;
  SetWindow2D(in, win, &cc);
  cc.dn.input_batch = lhs_fb ? 1 : 0; cc.dn.input_feature = lhs_fb ? 0 : 1; cc.dn.input_spatial = {2, 3};
  cc.dn.kernel_input_feature = ker_io ? 0 : 1; cc.dn.kernel_output_feature = ker_io ? 1 : 0;
  cc.dn.kernel_spatial = {2, 3};
  cc.dn.output_batch = out_fb ? 1 : 0; cc.dn.output_feature = out_fb ? 0 : 1; cc.dn.output_spatial = {2, 3};
  cc.lhs_dims = lhs_fb ? std::vector<int64_t>{c, n, in[0], in[1]} : std::vector<int64_t>{n, c, in[0], in[1]};
  cc.rhs_dims = ker_io ? std::vector<int64_t>{c, o, cc.k[0], cc.k[1]} : std::vector<int64_t>{o, c, cc.k[0], cc.k[1]};
  cc.out_dims = out_fb ? std::vector<int64_t>{o, n, cc.out[0], cc.out[1]} : std::vector<int64_t>{n, o, cc.out[0], cc.out[1]};
  return cc;
}

TEST(ConvolutionPlanePaths, ForwardSamePaddingLayoutsAndOddSizes) {
  // 3x3 "same" (OIHW and IOHW kernels, both output orders), odd channels and positions that
  // leave partial column panels (143 = 4 * 32 + 15) and partial row panels (o = 9, 17, 33).
  CheckFastPath(Planes2D(2, 5, 17, {13, 11}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, false, false), 61);
  CheckFastPath(Planes2D(3, 3, 9, {12, 20}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, true, true), 62);
  // Window reversal (the input-gradient form), 5x3 with asymmetric padding, window dilation.
  CheckFastPath(Planes2D(2, 7, 33, {16, 9}, {Win(5, 1, 2, 2, 1, 1, true), Win(3, 1, 0, 2, 1, 1, true)}, true, true,
                         false), 63);
  CheckFastPath(Planes2D(1, 4, 8, {10, 14}, {Win(3, 1, 2, 2, 1, 2), Win(3, 1, 1, 1)}, false, false, false), 64);
  // 1x1 unpadded and a window larger than the image (only padding lanes for some taps).
  CheckFastPath(Planes2D(2, 6, 16, {9, 16}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)}, false, false, false), 65);
  CheckFastPath(Planes2D(1, 2, 8, {8, 17}, {Win(9, 1, 4, 4), Win(3, 1, 1, 1)}, false, false, false), 66);
  // Enough channels for several k-blocks (k = 48 * 9 = 432 > 384).
  CheckFastPath(Planes2D(1, 48, 24, {14, 14}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, false, false), 67);
}

TEST(ConvolutionPlanePaths, StridedAndShrinkingForwardForms) {
  // The gathering form of the plane path (output positions are not the input's), forced
  // through backend_config so the cases do not depend on the default heuristic: ResNet's stem
  // (7x7 stride 2, 3 features), 3x3 stride 2, 1x1 stride 2 (downsample), unequal strides with
  // window dilation and reversal, no padding (output smaller than the input), fewer output
  // positions than one column panel, and OIHW (read in place) and IOHW (copied) kernels.
  const std::string planes = "{\"hlox_conv_algo\":3}";
  CheckFastPath(Planes2D(2, 3, 16, {23, 22}, {Win(7, 2, 3, 3), Win(7, 2, 3, 3)}, false, false, false), 75, planes);
  CheckFastPath(Planes2D(2, 12, 24, {15, 14}, {Win(3, 2, 1, 1), Win(3, 2, 1, 1)}, false, false, false), 76, planes);
  CheckFastPath(Planes2D(3, 16, 20, {14, 13}, {Win(1, 2, 0, 0), Win(1, 2, 0, 0)}, false, true, true), 77, planes);
  CheckFastPath(Planes2D(2, 5, 9, {17, 12},
                         {Win(3, 3, 2, 1, 1, 2, true), Win(5, 1, 0, 2, 1, 1, true)}, true, true, false), 78, planes);
  CheckFastPath(Planes2D(1, 6, 33, {10, 11}, {Win(3, 1, 0, 0), Win(4, 1, 0, 0)}, false, false, true), 79, planes);
  CheckFastPath(Planes2D(2, 40, 12, {5, 6}, {Win(3, 2, 1, 1), Win(3, 2, 1, 1)}, false, false, false), 80, planes);
}

TEST(ConvolutionPlanePaths, WeightGradientForm) {
  // lhs fb01 (features = images), kernel io01 = the output gradient, window = whole plane.
  CheckFastPath(Planes2D(6, 3, 20, {17, 19}, {Win(17, 1, 1, 1), Win(19, 1, 1, 1)}, true, true, true), 71);
  // Other layouts, asymmetric padding (output 4x2), partial column panel (o = 37).
  CheckFastPath(Planes2D(4, 2, 37, {16, 18}, {Win(16, 1, 2, 1), Win(18, 1, 0, 1)}, false, false, false), 72);
  // No padding (1x1 output) and a long reduction spanning several k-blocks and planes.
  CheckFastPath(Planes2D(3, 5, 16, {20, 24}, {Win(20, 1, 0, 0), Win(24, 1, 0, 0)}, true, true, false), 73);
  // Padding with k-blocks that start mid-row and cross planes (k = 3 * 440 in blocks of 330).
  CheckFastPath(Planes2D(4, 3, 16, {20, 22}, {Win(20, 1, 1, 1), Win(22, 1, 1, 1)}, true, true, true), 74);
}

TEST(ConvolutionPlanePaths, ResNetBlockShapesForwardAndGradients) {
  // The basic block's three forms at 20x20 with 32 channels: forward (OIHW), input gradient
  // (IOHW, reversed window), weight gradient (window = plane).
  CheckFastPath(Planes2D(2, 32, 32, {20, 20}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, false, false), 81);
  CheckFastPath(Planes2D(2, 32, 32, {20, 20}, {Win(3, 1, 1, 1, 1, 1, true), Win(3, 1, 1, 1, 1, 1, true)}, false,
                         true, false), 82);
  CheckFastPath(Planes2D(32, 2, 32, {20, 20}, {Win(20, 1, 1, 1), Win(20, 1, 1, 1)}, true, true, true), 83);
}

}  // namespace
}  // namespace hlox::rt::testing

// --- Algorithm choices (runtime/conv/tuning.h, the codegen pass's "conv:" sites): which algorithms a
// convolution offers, and every offered one (forced through backend_config) computes the same
// convolution, with the same bits on 1 and 2 threads.
namespace hlox::rt::testing {
namespace {

// The convolution of `cc` with f32 parameters as operands (what the codegen pass sees).
struct ConvWithOperands {
  std::unique_ptr<Instruction> lhs, rhs, conv;
};

ConvWithOperands WithOperands(const ConvCase& cc) {
  ConvWithOperands c;
  c.lhs = Instruction::CreateParameter(0, Shape(PrimitiveType::kF32, cc.lhs_dims));
  c.rhs = Instruction::CreateParameter(1, Shape(PrimitiveType::kF32, cc.rhs_dims));
  c.conv = Instruction::Create(Opcode::kConvolution, Shape(PrimitiveType::kF32, cc.out_dims), {c.lhs.get(), c.rhs.get()});
  c.conv->attrs().conv = cc.dn;
  c.conv->attrs().window = cc.win;
  c.conv->attrs().feature_group_count = cc.groups;
  c.conv->attrs().batch_group_count = cc.batch_groups;
  return c;
}

std::vector<ConvAlgorithm> Algorithms(const ConvCase& cc) { return ConvAlgorithmsFor(*WithOperands(cc).conv); }

using A = ConvAlgorithm;

TEST(ConvolutionAlgorithms, OfferedByForm) {
  const ConvCase fwd = Planes2D(2, 5, 17, {13, 11}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, false, false);
  EXPECT_EQ(Algorithms(fwd), (std::vector<A>{A::kTiles, A::kWideK, A::kPlanes}));
  const ConvCase wgrad = Planes2D(6, 3, 20, {17, 19}, {Win(17, 1, 1, 1), Win(19, 1, 1, 1)}, true, true, true);
  EXPECT_EQ(Algorithms(wgrad), (std::vector<A>{A::kTiles, A::kWideK, A::kPlanes, A::kPlaneFilter}));
  // Strided NCHW: the plane algorithm gathers its B panels. Base dilation has no plane form.
  EXPECT_EQ(Algorithms(Planes2D(2, 5, 17, {13, 11}, {Win(3, 2, 1, 1), Win(3, 2, 1, 1)}, false, false, false)),
            (std::vector<A>{A::kTiles, A::kWideK, A::kPlanes}));
  EXPECT_EQ(Algorithms(Planes2D(2, 5, 17, {13, 11}, {Win(3, 1, 1, 1, 2), Win(3, 1, 1, 1)}, false, false, false)),
            (std::vector<A>{A::kTiles, A::kWideK}));
  // NHWC strided: only the canonical-layout paths. Pointwise NHWC: one GEMM, nothing to choose.
  EXPECT_EQ(Algorithms(Canonical2D(2, 24, 40, 1, 1, {9, 10}, {Win(3, 2, 1, 1), Win(3, 2, 1, 1)})),
            (std::vector<A>{A::kTiles, A::kWideK}));
  EXPECT_TRUE(Algorithms(Canonical2D(3, 40, 33, 1, 1, {9, 7}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)})).empty());
  // Pointwise NCHW keeps its plane form; depthwise has a single path.
  EXPECT_EQ(Algorithms(Planes2D(2, 6, 16, {9, 16}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)}, false, false, false)),
            (std::vector<A>{A::kPlanes}));
  EXPECT_TRUE(Algorithms(Canonical2D(2, 70, 140, 70, 1, {9, 8}, {Win(3, 2, 1, 1), Win(3, 1, 1, 1)})).empty());
}

TEST(ConvolutionAlgorithms, EveryOfferedAlgorithmComputesTheConvolution) {
  const ConvCase cases[] = {
      Planes2D(2, 5, 17, {13, 11}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}, false, false, false),
      Planes2D(2, 7, 33, {16, 9}, {Win(5, 1, 2, 2, 1, 1, true), Win(3, 1, 0, 2, 1, 1, true)}, true, true, false),
      Planes2D(4, 2, 37, {16, 18}, {Win(16, 1, 2, 1), Win(18, 1, 0, 1)}, false, false, false),
      Planes2D(2, 6, 16, {9, 16}, {Win(1, 1, 0, 0), Win(1, 1, 0, 0)}, false, false, false),
      Canonical2D(2, 20, 36, 1, 1, {12, 13}, {Win(3, 1, 2, 2, 1, 2), Win(3, 2, 1, 1)}),
      Canonical2D(2, 32, 16, 4, 1, {10, 9}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}),
      Canonical2D(4, 8, 6, 1, 2, {40, 40}, {Win(3, 1, 1, 1), Win(3, 1, 1, 1)}),
      Canonical2D(6, 24, 10, 1, 1, {17, 19}, {Win(15, 1, 1, 1), Win(17, 1, 1, 1)})};
  int runs = 0;
  for (size_t i = 0; i < std::size(cases); ++i) {
    // f32 rounding grows with the reduction (taps x input features): 1e-4 up to 2048 terms.
    const ConvCase& cc = cases[i];
    const double terms = static_cast<double>(cc.k[0] * cc.k[1] * (cc.c / cc.groups));
    const double tol = 1e-4 * std::max(1.0, terms / 2048);
    Value base;
    CheckFastPath(cc, 90 + i, "", tol, &base);
    int differ = 0;
    for (A a : Algorithms(cc)) {
      SCOPED_TRACE(::testing::Message() << "case " << i << " algorithm " << static_cast<int>(a));
      Value v;
      CheckFastPath(cc, 90 + i, absl::StrCat("{\"hlox_conv_algo\":", static_cast<int>(a), "}"), tol, &v);
      differ += v.is_array() && base.is_array() &&
                std::memcmp(v.array->data(), base.array->data(), base.array->byte_size()) != 0;
      ++runs;
    }
    // The plane algorithms sum in another order than the canonical-layout paths (tiles and
    // wide-k share theirs), so forcing one moves bits: the choice reaches the kernel. The
    // generic level has no packed GEMM and falls back to the default path.
    const std::vector<A> offered = Algorithms(cc);
    const bool plane = std::find(offered.begin(), offered.end(), A::kPlanes) != offered.end() ||
                       std::find(offered.begin(), offered.end(), A::kPlaneFilter) != offered.end();
    if (plane && offered.size() >= 2 && Kernels().gemm != nullptr) {
      EXPECT_GE(differ, 1) << "case " << i;
    }
    CheckFastPath(cc, 90 + i, "{\"hlox_threads\":1}", tol);
  }
  EXPECT_GE(runs, 18);
}

TEST(ConvolutionAlgorithms, ParsesBackendConfig) {
  EXPECT_EQ(ParseConvTuning(R"({"hlox_conv_algo":3,"hlox_threads":1})").algorithm, A::kPlanes);
  EXPECT_EQ(ParseConvTuning(R"({"hlox_conv_algo":3,"hlox_threads":1})").threads, 1);
  for (const char* bad : {"", "{}", R"({"hlox_conv_algo":0})", R"({"hlox_conv_algo":5})", R"({"hlox_conv_algo":"x"})"}) {
    EXPECT_EQ(ParseConvTuning(bad).algorithm, A::kAuto) << bad;
  }
}

}  // namespace
}  // namespace hlox::rt::testing
