// Depthwise convolution (feature_group_count == input features, one input feature per group,
// any channel multiplier) as a direct loop with no patch matrix. A task owns one output row
// (all spatial dims but the last fixed) and accumulates into it tap by tap: for each kernel
// row that lands inside the input, for each output x and kernel x, out[x, :] += in[., :] *
// w[tap, :] over contiguous channels, which vectorizes and keeps the row in L1/L2.
// In f32 without a channel multiplier (vector levels: IsaKernels::depthwise_row) a 64-channel
// block of one output position keeps all its taps in registers and is stored once. Each output element sums its
// taps in kernel order starting from zero, whatever the task split, so the result does not
// depend on the thread count.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "runtime/conv/paths.h"
#include "runtime/isa/isa_kernels.h"

namespace hlox::rt {
namespace {

// o[c] += x[c] * w[c] for c < n.
template <typename T>
inline void MulAdd(T* __restrict o, const T* __restrict x, const T* __restrict w, int64_t n) {
  for (int64_t c = 0; c < n; ++c) o[c] += x[c] * w[c];
}

// o[c] += x[c / mult] * w[c] for c < n (channel multiplier > 1).
template <typename T>
inline void MulAddMult(T* __restrict o, const T* __restrict x, const T* __restrict w, int64_t n,
                       int64_t mult) {
  for (int64_t c = 0; c < n; ++c) o[c] += x[c / mult] * w[c];
}

}  // namespace

template <typename T>
void DepthwiseConv(const ConvIndex& ix, const T* in, const T* k, T* out, ThreadPool* pool, const DotEpilogue* done) {
  const ConvGeometry& g = *ix.g;
  const int64_t S = g.spatial, C = g.c, O = g.o;
  const int64_t mult = C == 0 ? 1 : O / C;
  const int64_t wl = S > 0 ? g.out[S - 1] : 1, kl = S > 0 ? g.k[S - 1] : 1;
  if (ix.nout * ix.P == 0 || O == 0) return;
  const int64_t rows = ix.P / wl;  // output rows per image
  const int64_t outer_taps = kl == 0 ? 0 : ix.KK / kl;
  const int64_t tasks = ix.nout * rows;
  const auto row_f32 = Kernels().depthwise_row;
  auto body = [&](int64_t lo, int64_t hi) {
    const int64_t so = std::max<int64_t>(S - 1, 0);
    std::vector<int64_t> oi(so), ki(so), bases;
    std::vector<const T*> wrows;
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t b = t / rows;
      int64_t lin = t % rows;
      for (int64_t d = so - 1; d >= 0; --d) {
        oi[d] = lin % g.out[d];
        lin /= g.out[d];
      }
      T* orow = out + t * wl * O;
      const T* in_b = in + b * ix.in_sp * C;
      // The outer taps (all spatial dims but the last) that land inside the input.
      bases.clear();
      wrows.clear();
      std::fill(ki.begin(), ki.end(), 0);
      for (int64_t ot = 0; ot < outer_taps; ++ot) {
        int64_t base = 0;
        bool valid = true;
        for (int64_t d = 0; d < so; ++d) {
          const int64_t ip = ix.pos[d][oi[d] * g.k[d] + ki[d]];
          if (ip < 0) {
            valid = false;
            break;
          }
          base += ip * ix.in_str[d];
        }
        for (int64_t d = so - 1; d >= 0; --d) {
          if (++ki[d] < g.k[d]) break;
          ki[d] = 0;
        }
        if (!valid) continue;
        bases.push_back(base);
        wrows.push_back(k + ot * kl * O);
      }
      const int64_t* pl = S > 0 ? ix.pos[S - 1].data() : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        if (mult == 1 && row_f32 != nullptr) {
          row_f32(pl, wl, kl, C, in_b, bases.data(), wrows.data(), static_cast<int64_t>(bases.size()), orow);
          if (done != nullptr) (*done)(t * wl * O, 1, 0, wl * O);
          continue;
        }
      }
      std::fill_n(orow, wl * O, T(0));
      for (size_t v = 0; v < bases.size(); ++v) {
        for (int64_t ox = 0; ox < wl; ++ox) {
          T* o = orow + ox * O;
          for (int64_t kx = 0; kx < kl; ++kx) {
            const int64_t ip = pl != nullptr ? pl[ox * kl + kx] : 0;
            if (ip < 0) continue;
            const T* x = in_b + (bases[v] + ip) * C;
            if (mult == 1) MulAdd(o, x, wrows[v] + kx * O, O);
            else MulAddMult(o, x, wrows[v] + kx * O, O, mult);
          }
        }
      }
      if (done != nullptr) (*done)(t * wl * O, 1, 0, wl * O);
    }
  };
  const int64_t work = std::max<int64_t>(1, wl * ix.KK * O);
  const int64_t grain = std::max<int64_t>(1, 32768 / work);
  if (pool != nullptr) pool->ParallelFor(tasks, grain, body);
  else body(0, tasks);
}

template void DepthwiseConv<float>(const ConvIndex&, const float*, const float*, float*, ThreadPool*,
                                   const DotEpilogue*);
template void DepthwiseConv<double>(const ConvIndex&, const double*, const double*, double*, ThreadPool*,
                                    const DotEpilogue*);

}  // namespace hlox::rt
