// Strided copy engine (see strided_copy.h).
#include "runtime/strided_copy.h"

#include <cstring>

#include "runtime/kernel_util.h"

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

void CopyRow(const uint8_t* src, int64_t stride, int64_t n, int64_t es, uint8_t* dst) {
  if (stride == 1) {
    std::memcpy(dst, src, n * es);
    return;
  }
  if (stride == 0) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * es, src, es);
    return;
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

// Runs row(outer_index, dense_row_offset, strided_offset) over all rows of `dims`.
template <typename RowFn>
void ForRows(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, int64_t offset,
             int64_t elem_size, ThreadPool* pool, RowFn row) {
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t inner = dims[rank - 1];
  int64_t rows = 1;
  for (int64_t i = 0; i + 1 < rank; ++i) rows *= dims[i];
  if (rows == 0 || inner == 0) return;
  auto body = [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(rank - 1, 0);
    int64_t r = lo;
    for (int64_t d = rank - 2; d >= 0; --d) {
      idx[d] = r % dims[d];
      r /= dims[d];
    }
    for (int64_t row_i = lo; row_i < hi; ++row_i) {
      int64_t off = offset;
      for (int64_t d = 0; d + 1 < rank; ++d) off += idx[d] * strides[d];
      row(row_i * inner, off);
      for (int64_t d = rank - 2; d >= 0; --d) {
        if (++idx[d] < dims[d]) break;
        idx[d] = 0;
      }
    }
  };
  int64_t row_bytes = std::max<int64_t>(1, inner * elem_size);
  int64_t grain = std::max<int64_t>(1, kGrainBytes / row_bytes);
  if (pool != nullptr && rows > grain) pool->ParallelFor(rows, grain, body);
  else body(0, rows);
}

}  // namespace

void StridedCopy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_strides,
                 int64_t in_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                 ThreadPool* pool) {
  std::vector<int64_t> dims = out_dims, strides = in_strides;
  for (int64_t d : dims) if (d == 0) return;
  Simplify(dims, strides);
  int64_t inner = dims.back(), s = strides.back();
  ForRows(dims, strides, in_offset, elem_size, pool, [&](int64_t out_off, int64_t in_off) {
    CopyRow(src + in_off * elem_size, s, inner, elem_size, dst + out_off * elem_size);
  });
}

void StridedScatterCopy(const std::vector<int64_t>& dims_in, const std::vector<int64_t>& dst_strides,
                        int64_t dst_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                        ThreadPool* pool) {
  std::vector<int64_t> dims = dims_in, strides = dst_strides;
  for (int64_t d : dims) if (d == 0) return;
  Simplify(dims, strides);
  int64_t inner = dims.back(), s = strides.back();
  ForRows(dims, strides, dst_offset, elem_size, pool, [&](int64_t dense_off, int64_t dst_off) {
    WriteRow(src + dense_off * elem_size, s, inner, elem_size, dst + dst_off * elem_size);
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
