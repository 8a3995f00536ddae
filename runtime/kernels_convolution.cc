// Convolution with XLA's full semantics: any dim_labels (1-3 spatial dims, or none), feature
// groups (grouped/depthwise), batch groups, low/high padding (negative too), lhs (base) and rhs
// (window) dilation, window strides and window reversal.
//
// Every element type goes through one im2col + GEMM scheme: the input is brought to a canonical
// [batch, spatial..., feature] array and the kernel to [spatial..., in_feature, out_feature];
// for each (group, batch, tile of output positions) a patch matrix is gathered and multiplied
// with the group's kernel columns by Eigen's GEMM. f16/bf16/f32 compute in f32, f64 and
// integers in f64. Tasks write disjoint output tiles and the tiling depends only on the
// shapes, so results are identical for any thread count.
// GCC 12 reports false -Wmaybe-uninitialized inside Eigen's AVX-512 intrinsics.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Dense>
#include <algorithm>
#include <vector>

#include "runtime/kernels_family_util.h"

namespace hlox::rt {
namespace {

template <typename T>
std::vector<T> Load(const Buffer& b) {
  if constexpr (std::is_same_v<T, float>) {
    return ToFloats(b);
  } else {
    return ToDoubles(b);
  }
}

struct ConvGeometry {
  int64_t spatial = 0;                  // number of spatial dims
  std::vector<int64_t> in, k, out;      // spatial sizes
  std::vector<WindowDimension> win;
  int64_t n = 0, c = 0, ck = 0, o = 0;  // batch, input features, kernel in-features, out features
  int64_t groups = 1, batch_groups = 1;
};

template <typename T>
constexpr PrimitiveType StorageType() {
  return std::is_same_v<T, float> ? PrimitiveType::kF32 : PrimitiveType::kF64;
}

// Moves a canonical [nout, out..., o] result into `out` (unless it was written in place).
template <typename T>
Value Finish(Value out, bool out_direct, const std::vector<T>& out_buf, int64_t nout, int64_t P,
             const ConvGeometry& g, const std::vector<int64_t>& operm) {
  if (out_direct) return out;
  std::vector<int64_t> cdims{nout};
  for (int64_t d = 0; d < g.spatial; ++d) cdims.push_back(g.out[d]);
  cdims.push_back(g.o);
  (void)P;
  // result dim j = canonical dim operm[j]
  std::vector<T> res = Permute(out_buf, cdims, operm);
  if constexpr (std::is_same_v<T, float>) {
    FromFloats(res, *out.array);
  } else {
    FromDoubles(res, *out.array);
  }
  return out;
}

// Depthwise convolution (one input feature per group, one output feature per group): a direct
// loop with the channel dimension innermost, which vectorizes and needs no patch matrix.
template <typename T>
void Depthwise(const T* in, const T* k, T* out, const ConvGeometry& g,
               const std::vector<std::vector<int64_t>>& pos, const std::vector<int64_t>& in_str,
               int64_t nout, int64_t P, KernelContext& ctx) {
  const int64_t S = g.spatial, C = g.c;
  int64_t KK = 1, in_sp = 1;
  for (int64_t d = 0; d < S; ++d) {
    KK *= g.k[d];
    in_sp *= g.in[d];
  }
  KernelParallelFor(ctx, nout * P, std::max<int64_t>(1, 16384 / std::max<int64_t>(KK * C, 1)),
                    [&](int64_t begin, int64_t end) {
    std::vector<int64_t> oi(S), ki(S);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / P;
      int64_t lin = t % P;
      for (int64_t d = S - 1; d >= 0; --d) {
        oi[d] = lin % g.out[d];
        lin /= g.out[d];
      }
      T* o = out + t * C;
      const T* in_b = in + b * in_sp * C;
      std::fill(ki.begin(), ki.end(), 0);
      for (int64_t kp = 0; kp < KK; ++kp) {
        int64_t off = 0;
        bool valid = true;
        for (int64_t d = 0; d < S; ++d) {
          const int64_t ip = pos[d][oi[d] * g.k[d] + ki[d]];
          if (ip < 0) {
            valid = false;
            break;
          }
          off += ip * in_str[d];
        }
        if (valid) {
          const T* x = in_b + off * C;
          const T* w = k + kp * C;
          for (int64_t c = 0; c < C; ++c) o[c] += x[c] * w[c];
        }
        for (int64_t d = S - 1; d >= 0; --d) {
          if (++ki[d] < g.k[d]) break;
          ki[d] = 0;
        }
      }
    }
  });
}

template <typename T>
absl::StatusOr<Value> Convolve(const Instruction& instr, const Buffer& lhs, const Buffer& rhs,
                               const ConvGeometry& g, KernelContext& ctx) {
  const ConvDimensionNumbers& dn = *instr.attrs().conv;
  const int64_t S = g.spatial;
  // Canonical input [n, in..., c] and kernel [k..., ck, o].
  std::vector<int64_t> lperm{dn.input_batch}, kperm;
  for (int64_t d = 0; d < S; ++d) lperm.push_back(dn.input_spatial[d]);
  lperm.push_back(dn.input_feature);
  for (int64_t d = 0; d < S; ++d) kperm.push_back(dn.kernel_spatial[d]);
  kperm.push_back(dn.kernel_input_feature);
  kperm.push_back(dn.kernel_output_feature);
  auto is_identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  // Canonical layouts (b01f input, b01f output) are used in place when the storage type is T.
  const bool in_direct = is_identity(lperm) && lhs.shape().element_type() == StorageType<T>();
  std::vector<T> in_c;
  if (!in_direct) in_c = Permute(Load<T>(lhs), lhs.shape().dims(), lperm);
  const T* in_data = in_direct ? lhs.template as<T>() : in_c.data();
  std::vector<T> k_c = Permute(Load<T>(rhs), rhs.shape().dims(), kperm);

  const int64_t total_groups = g.groups * g.batch_groups;
  const int64_t og = g.o / total_groups;
  const int64_t nout = g.n / g.batch_groups;
  int64_t P = 1, KK = 1, in_sp = 1;
  for (int64_t d = 0; d < S; ++d) {
    P *= g.out[d];
    KK *= g.k[d];
    in_sp *= g.in[d];
  }
  const int64_t KC = KK * g.ck;
  // pos[d][o * k + w] = input index used by output o and kernel element w, or -1.
  std::vector<std::vector<int64_t>> pos(S);
  for (int64_t d = 0; d < S; ++d) {
    const WindowDimension& w = g.win[d];
    const int64_t dilated_in = g.in[d] == 0 ? 0 : (g.in[d] - 1) * w.base_dilation + 1;
    pos[d].assign(g.out[d] * g.k[d], -1);
    for (int64_t o = 0; o < g.out[d]; ++o) {
      for (int64_t kk = 0; kk < g.k[d]; ++kk) {
        const int64_t wpos = w.reversal ? g.k[d] - 1 - kk : kk;
        const int64_t p = o * w.stride - w.pad_low + wpos * w.window_dilation;
        if (p < 0 || p >= dilated_in || p % w.base_dilation != 0) continue;
        pos[d][o * g.k[d] + kk] = p / w.base_dilation;
      }
    }
  }
  std::vector<int64_t> in_str(S, 1);
  for (int64_t d = S - 2; d >= 0; --d) in_str[d] = in_str[d + 1] * g.in[d + 1];

  const Shape& os = instr.shape();
  std::vector<int64_t> operm(os.rank());
  operm[dn.output_batch] = 0;
  for (int64_t d = 0; d < S; ++d) operm[dn.output_spatial[d]] = 1 + d;
  operm[dn.output_feature] = S + 1;
  const bool out_direct = is_identity(operm) && os.element_type() == StorageType<T>();
  Value out = NewArray(os);
  std::vector<T> out_buf;
  if (!out_direct) out_buf.assign(nout * P * g.o, T(0));
  T* out_data = out_direct ? out.array->template as<T>() : out_buf.data();
  if (out_direct) std::fill_n(out_data, nout * P * g.o, T(0));
  if (g.ck == 1 && og == 1 && g.batch_groups == 1 && S > 0) {
    Depthwise(in_data, k_c.data(), out_data, g, pos, in_str, nout, P, ctx);
    return Finish(out, out_direct, out_buf, nout, P, g, operm);
  }
  const int64_t tile = std::max<int64_t>(32, std::min<int64_t>(P, 131072 / std::max<int64_t>(KC, 1)));
  const int64_t tiles = P == 0 ? 0 : (P + tile - 1) / tile;
  const int64_t tasks = total_groups * nout * tiles;
  using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  const int64_t work_per_task = tile * KC * std::max<int64_t>(og, 1);
  KernelParallelFor(ctx, tasks, work_per_task > 32768 ? 1 : std::max<int64_t>(1, 32768 / std::max<int64_t>(work_per_task, 1)),
                    [&](int64_t begin, int64_t end) {
    std::vector<T> patch;
    std::vector<int64_t> oi(S), ki(S);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t grp = t / (nout * tiles);
      const int64_t ob = (t / tiles) % nout;
      const int64_t p0 = (t % tiles) * tile;
      const int64_t rows = std::min(tile, P - p0);
      const int64_t cin_off = g.groups > 1 ? grp * g.ck : 0;
      const int64_t ib = g.batch_groups > 1 ? grp * nout + ob : ob;
      const int64_t out_off = grp * og;
      if (KC == 0 || og == 0) continue;
      patch.assign(rows * KC, T(0));
      const T* in_b = in_data + ib * in_sp * g.c;
      for (int64_t r = 0; r < rows; ++r) {
        int64_t lin = p0 + r;
        for (int64_t d = S - 1; d >= 0; --d) {
          oi[d] = lin % g.out[d];
          lin /= g.out[d];
        }
        std::fill(ki.begin(), ki.end(), 0);
        T* prow = patch.data() + r * KC;
        for (int64_t kp = 0; kp < KK; ++kp) {
          int64_t off = 0;
          bool valid = true;
          for (int64_t d = 0; d < S; ++d) {
            const int64_t ip = pos[d][oi[d] * g.k[d] + ki[d]];
            if (ip < 0) {
              valid = false;
              break;
            }
            off += ip * in_str[d];
          }
          if (valid) std::copy_n(in_b + off * g.c + cin_off, g.ck, prow + kp * g.ck);
          for (int64_t d = S - 1; d >= 0; --d) {
            if (++ki[d] < g.k[d]) break;
            ki[d] = 0;
          }
        }
      }
      Eigen::Map<const Mat> pm(patch.data(), rows, KC);
      Eigen::Map<const Mat, 0, Stride> km(k_c.data() + out_off, KC, og, Stride(g.o));
      Eigen::Map<Mat, 0, Stride> om(out_data + (ob * P + p0) * g.o + out_off, rows, og,
                                    Stride(g.o));
      om.noalias() = pm * km;
    }
  });

  return Finish(out, out_direct, out_buf, nout, P, g, operm);
}

}  // namespace

absl::StatusOr<Value> ConvolutionKernel(const Instruction& instr,
                                        const std::vector<const Value*>& operands,
                                        KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* lhs, ArrayOperand(instr, operands, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* rhs, ArrayOperand(instr, operands, 1));
  if (!instr.attrs().conv.has_value()) return KernelError(instr, "missing dim_labels");
  const ConvDimensionNumbers& dn = *instr.attrs().conv;
  const Shape& ls = lhs->shape();
  const Shape& ks = rhs->shape();
  const Shape& os = instr.shape();
  ConvGeometry g;
  g.spatial = static_cast<int64_t>(dn.input_spatial.size());
  const int64_t S = g.spatial;
  auto in_range = [](int64_t d, const Shape& s) { return d >= 0 && d < s.rank(); };
  if (!os.IsArray() || ls.rank() != S + 2 || ks.rank() != S + 2 || os.rank() != S + 2 ||
      static_cast<int64_t>(dn.kernel_spatial.size()) != S ||
      static_cast<int64_t>(dn.output_spatial.size()) != S || !in_range(dn.input_batch, ls) ||
      !in_range(dn.input_feature, ls) || !in_range(dn.kernel_input_feature, ks) ||
      !in_range(dn.kernel_output_feature, ks) || !in_range(dn.output_batch, os) ||
      !in_range(dn.output_feature, os)) {
    return KernelError(instr, "dim_labels do not match operand ranks");
  }
  for (int64_t d = 0; d < S; ++d) {
    if (!in_range(dn.input_spatial[d], ls) || !in_range(dn.kernel_spatial[d], ks) ||
        !in_range(dn.output_spatial[d], os)) {
      return KernelError(instr, "spatial dimension out of range");
    }
    g.in.push_back(ls.dim(dn.input_spatial[d]));
    g.k.push_back(ks.dim(dn.kernel_spatial[d]));
    g.out.push_back(os.dim(dn.output_spatial[d]));
  }
  if (instr.attrs().window.has_value()) {
    g.win = instr.attrs().window->dims;
    if (static_cast<int64_t>(g.win.size()) != S) return KernelError(instr, "window rank mismatch");
  } else {
    g.win.resize(S);
    for (int64_t d = 0; d < S; ++d) g.win[d].size = g.k[d];
  }
  for (const WindowDimension& w : g.win) {
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return KernelError(instr, "window strides and dilations must be >= 1");
    }
  }
  g.n = ls.dim(dn.input_batch);
  g.c = ls.dim(dn.input_feature);
  g.ck = ks.dim(dn.kernel_input_feature);
  g.o = ks.dim(dn.kernel_output_feature);
  g.groups = instr.attrs().feature_group_count;
  g.batch_groups = instr.attrs().batch_group_count;
  if (g.groups < 1 || g.batch_groups < 1 || g.c != g.ck * g.groups || g.o % g.groups != 0 ||
      g.o % g.batch_groups != 0 || g.n % g.batch_groups != 0 ||
      os.dim(dn.output_batch) != g.n / g.batch_groups || os.dim(dn.output_feature) != g.o) {
    return KernelError(instr, "inconsistent feature/batch group counts or dimension sizes");
  }
  if (g.groups > 1 && g.batch_groups > 1) {
    return KernelError(instr, "feature_group_count and batch_group_count both > 1");
  }
  PrimitiveType lt = ls.element_type(), ot = os.element_type();
  if (!IsRealType(lt) || !IsRealType(ks.element_type()) || !IsRealType(ot)) {
    return absl::UnimplementedError(absl::StrCat("convolution ", instr.name(),
                                                 ": complex or sub-byte element types"));
  }
  const bool use_float = (lt == PrimitiveType::kF32 || lt == PrimitiveType::kF16 ||
                          lt == PrimitiveType::kBF16) &&
                         ot != PrimitiveType::kF64;
  if (use_float) return Convolve<float>(instr, *lhs, *rhs, g, ctx);
  return Convolve<double>(instr, *lhs, *rhs, g, ctx);
}

}  // namespace hlox::rt
