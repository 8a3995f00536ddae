// One strided copy engine behind broadcast, transpose, slice, reverse, bitcast and the
// dynamic slices: out[i0..ik] = in[offset + sum_d i_d * stride_d] for any element size, with
// adjacent dimensions merged where the strides allow, memcpy for contiguous rows and a fill
// for broadcast rows. Parallel over outer rows when a pool is given.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/thread_pool.h"

namespace hlox::rt {

// Copies an array of `out_dims` (dense row-major at dst) from src where output index i reads
// source element offset + dot(i, in_strides) (element units; strides may be 0 or negative).
void StridedCopy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& in_strides,
                 int64_t in_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                 ThreadPool* pool);

// Writes a dense block (row-major `dims`) into dst at element offset + dot(i, dst_strides).
void StridedScatterCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& dst_strides,
                        int64_t dst_offset, int64_t elem_size, const uint8_t* src, uint8_t* dst,
                        ThreadPool* pool);

// Row-major transpose: out dim i is input dim perm[i].
void TransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                   int64_t elem_size, const uint8_t* src, uint8_t* dst, ThreadPool* pool);

}  // namespace hlox::rt
