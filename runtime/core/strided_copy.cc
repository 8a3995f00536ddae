// Strided copy engine (see core/strided_copy.h).
#include "runtime/core/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/kernel_util.h"

namespace hlox::rt {
namespace {

constexpr int64_t kGrainBytes = 64 * 1024;

template <int kSize> struct Elem { uint8_t b[kSize]; };

template <int kSize>
void GatherRow(const uint8_t* src, int64_t stride, int64_t n, uint8_t* dst) {
  using E = Elem<kSize>;
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
}

template <int kSize>
void ScatterRow(const uint8_t* src, int64_t stride, int64_t n, uint8_t* dst) {
  using E = Elem<kSize>;
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i * stride] = s[i];
}

// dst[0..n) = *src for one element of type E (a vectorizable fill, not n memcpy calls).
template <typename E>
void FillRow(const uint8_t* src, int64_t n, uint8_t* dst) {
  E v;
  std::memcpy(&v, src, sizeof(E));
  E* d = reinterpret_cast<E*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

void CopyRow(const uint8_t* src, int64_t stride, int64_t n, int64_t es, uint8_t* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, n * es);
    return;
  }
  if (stride == 0) {
    switch (es) {
      case 1: return FillRow<uint8_t>(src, n, dst);
      case 2: return FillRow<uint16_t>(src, n, dst);
      case 4: return FillRow<uint32_t>(src, n, dst);
      case 8: return FillRow<uint64_t>(src, n, dst);
      case 16: return FillRow<Elem<16>>(src, n, dst);
      default:
        for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src, es);
        return;
    }
  }
  switch (es) {
    case 1: return GatherRow<1>(src, stride, n, dst);
    case 2: return GatherRow<2>(src, stride, n, dst);
    case 4: return GatherRow<4>(src, stride, n, dst);
    case 8: return GatherRow<8>(src, stride, n, dst);
    case 16: return GatherRow<16>(src, stride, n, dst);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src + i * stride * es, es);
  }
}

void WriteRow(const uint8_t* src, int64_t stride, int64_t n, int64_t es, uint8_t* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, n * es);
    return;
  }
  switch (es) {
    case 1: return ScatterRow<1>(src, stride, n, dst);
    case 2: return ScatterRow<2>(src, stride, n, dst);
    case 4: return ScatterRow<4>(src, stride, n, dst);
    case 8: return ScatterRow<8>(src, stride, n, dst);
    case 16: return ScatterRow<16>(src, stride, n, dst);
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * stride * es, src + i * es, es);
  }
}

// Drops size-1 dims and merges dim d into d+1 when stride[d] == stride[d+1] * dims[d+1].
void Simplify(std::vector<int64_t>& dims, std::vector<int64_t>& strides) {
  std::vector<int64_t> d2, s2;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d2.empty() && s2.back() == strides[i] * dims[i]) {
      d2.back() *= dims[i];
      s2.back() = strides[i];
    } else {
      d2.push_back(dims[i]);
      s2.push_back(strides[i]);
    }
  }
  if (d2.empty()) {
    d2.push_back(1);
    s2.push_back(1);
  }
  dims = std::move(d2);
  strides = std::move(s2);
}

// Runs fn(dense_offset, strided_offset, begin, count) over every row of `dims` (the last dim
// is the row; strided_offset is the row's start in strided space) with rows of more than
// `seg` elements split into segments of `seg` (so one huge row still spreads over threads).
template <typename Fn>
void ForSegments(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                 int64_t offset, int64_t seg, int64_t elem_size, ThreadPool* pool, Fn fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t inner = dims[rank - 1];
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < rank; ++i) rows *= dims[i];
  if (rows == 0 || inner == 0) return;
  seg = std::max<int64_t>(1, std::min(seg, inner));
  const int64_t nseg = (inner + seg - 1) / seg;
  auto body = [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(rank - 1, 0);
    int64_t r = lo / nseg;
    for (int64_t d = rank - 2; d >= 0; --d) {
      idx[d] = r % dims[d];
      r /= dims[d];
    }
    for (int64_t u = lo; u < hi; ++u) {
      const int64_t row_i = u / nseg, k = u % nseg;
      int64_t off = offset;
      for (int64_t d = 0; d + 1 < rank; ++d) off += idx[d] * strides[d];
      fn(row_i * inner, off, k * seg, std::min(seg, inner - k * seg));
      if (k + 1 == nseg) {
        for (int64_t d = rank - 2; d >= 0; --d) {
          if (++idx[d] < dims[d]) break;
          idx[d] = 0;
        }
      }
    }
  };
  const int64_t units = rows * nseg;
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(1, seg * elem_size));
  if (pool != nullptr && units > grain) pool->ParallelFor(units, grain, body);
  else body(0, units);
}

// Copies a tile-transposed array: input contiguous along dim `j`, output contiguous along the
// last dim, which reads with stride `strides.back()`. Tiles of kTile x kTile elements keep
// both the reads and the writes within a few cache lines each.
template <int kSize>
void TiledCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
               int64_t offset, int64_t j, const uint8_t* src, uint8_t* dst, ThreadPool* pool) {
  using E = Elem<kSize>;
  constexpr int64_t kTile = 32;
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t nb = dims[rank - 1], sb = strides[rank - 1], na = dims[j];
  std::vector<int64_t> dense(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) dense[d] = dense[d + 1] * dims[d + 1];
  std::vector<int64_t> odims, ostr, odense;  // the other dims
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (d == j) continue;
    odims.push_back(dims[d]);
    ostr.push_back(strides[d]);
    odense.push_back(dense[d]);
  }
  int64_t outer = 1;
  for (int64_t x : odims) outer *= x;
  const int64_t atiles = (na + kTile - 1) / kTile;
  const E* s = reinterpret_cast<const E*>(src);
  E* o = reinterpret_cast<E*>(dst);
  auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t u = lo; u < hi; ++u) {
      int64_t r = u / atiles, in_off = offset, out_off = 0;
      for (int64_t d = static_cast<int64_t>(odims.size()) - 1; d >= 0; --d) {
        const int64_t i = r % odims[d];
        r /= odims[d];
        in_off += i * ostr[d];
        out_off += i * odense[d];
      }
      const int64_t a0 = (u % atiles) * kTile, a1 = std::min(na, a0 + kTile);
      for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
        const int64_t b1 = std::min(nb, b0 + kTile);
        for (int64_t a = a0; a < a1; ++a) {
          const E* sp = s + in_off + a;
          E* op = o + out_off + a * dense[j];
          for (int64_t b = b0; b < b1; ++b) op[b] = sp[b * sb];
        }
      }
    }
  };
  const int64_t units = outer * atiles;
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / (kTile * nb * kSize));
  if (pool != nullptr && units > grain) pool->ParallelFor(units, grain, body);
  else body(0, units);
}

constexpr int64_t kSegBytes = 256 * 1024;

}  // namespace

void StridedCopy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_strides,
                 int64_t in_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                 ThreadPool* pool) {
  std::vector<int64_t> dims = out_dims, strides = in_strides;
  for (int64_t d : dims) if (d == 0) return;
  Simplify(dims, strides);
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t inner = dims.back(), s = strides.back(), es = elem_size;
  if (rank >= 2 && strides[rank - 2] == 0 && s != 0) {
    // Repeated rows (a broadcast along the second-to-last dim): build each segment's first row
    // once, then double it with memcpy.
    const int64_t reps = dims[rank - 2];
    std::vector<int64_t> bdims(dims.begin(), dims.end() - 2), bstr(strides.begin(), strides.end() - 2);
    bdims.push_back(reps * inner);
    bstr.push_back(0);
    const int64_t seg = inner * std::max<int64_t>(1, kSegBytes / (inner * es));
    ForSegments(bdims, bstr, in_offset, seg, es, pool,
                [&](int64_t out_off, int64_t in_off, int64_t begin, int64_t count) {
      uint8_t* d = dst + (out_off + begin) * es;
      CopyRow(src + in_off * es, s, inner, es, d);
      for (int64_t done = inner; done < count;) {
        const int64_t n = std::min(done, count - done);
        std::memcpy(d + done * es, d, n * es);
        done += n;
      }
    });
    return;
  }
  if (rank >= 2 && s != 1 && s != 0 && (es == 1 || es == 2 || es == 4 || es == 8)) {
    // A transpose: if some other dim reads contiguously, go tile by tile.
    int64_t j = -1;
    for (int64_t d = 0; d + 1 < rank; ++d) if (strides[d] == 1) j = d;
    if (j >= 0 && dims[j] >= 8 && inner >= 8) {
      switch (es) {
        case 1: return TiledCopy<1>(dims, strides, in_offset, j, src, dst, pool);
        case 2: return TiledCopy<2>(dims, strides, in_offset, j, src, dst, pool);
        case 4: return TiledCopy<4>(dims, strides, in_offset, j, src, dst, pool);
        default: return TiledCopy<8>(dims, strides, in_offset, j, src, dst, pool);
      }
    }
  }
  ForSegments(dims, strides, in_offset, std::max<int64_t>(1, kSegBytes / es), es, pool,
              [&](int64_t out_off, int64_t in_off, int64_t begin, int64_t count) {
    CopyRow(src + (in_off + begin * s) * es, s, count, es, dst + (out_off + begin) * es);
  });
}

void StridedScatterCopy(const std::vector<int64_t>& dims_in, const std::vector<int64_t>& dst_strides,
                        int64_t dst_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                        ThreadPool* pool) {
  std::vector<int64_t> dims = dims_in, strides = dst_strides;
  for (int64_t d : dims) if (d == 0) return;
  Simplify(dims, strides);
  const int64_t s = strides.back(), es = elem_size;
  ForSegments(dims, strides, dst_offset, std::max<int64_t>(1, kSegBytes / es), es, pool,
              [&](int64_t dense_off, int64_t dst_off, int64_t begin, int64_t count) {
    WriteRow(src + (dense_off + begin) * es, s, count, es, dst + (dst_off + begin * s) * es);
  });
}

void TransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                   int64_t elem_size, const uint8_t* src, uint8_t* dst, ThreadPool* pool) {
  std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
  std::vector<int64_t> out_dims(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out_dims[i] = in_dims[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  StridedCopy(out_dims, strides, 0, elem_size, src, dst, pool);
}

}  // namespace hlox::rt
