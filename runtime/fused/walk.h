// Coordinate helpers shared by the block evaluator's index-map files (fused/eval.cc,
// fused/affine.cc): dispatch on a value kind, linear index -> coords, and CoordWalker, which
// steps coords along a sequence of linear indices instead of dividing per element.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/fused/node.h"

namespace hlox::rt::fused_walk {

template <typename F>
void WithKind(VKind k, F&& f) {
  switch (k) {
    case VKind::kF32: f(float{}); break;
    case VKind::kF64: f(double{}); break;
    case VKind::kI64: f(int64_t{}); break;
  }
}

// Decomposes linear index `lin` of a row-major shape into coords.
inline void Decompose(int64_t lin, const std::vector<int64_t>& strides, int64_t* coords) {
  for (size_t d = 0; d < strides.size(); ++d) {
    coords[d] = lin / strides[d];
    lin -= coords[d] * strides[d];
  }
}

// Walks the coords of a sequence of row-major linear indices. When consecutive indices differ
// by one of the shape's strides (contiguous runs, transposed walks), the coords are stepped
// with carries instead of recomputed with one division per dim.
class CoordWalker {
 public:
  // `coef` (optional, one per dim) makes the walker keep dot(coords, coef) in acc().
  CoordWalker(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
              int64_t* coords, const int64_t* coef = nullptr)
      : dims_(dims), strides_(strides), coords_(coords), coef_(coef), rank_(dims.size()) {}

  int64_t acc() const { return acc_; }

  // Moves the coords to linear index `lin` (any index; steps are only a fast path).
  void MoveTo(int64_t lin) {
    const int64_t delta = lin - prev_;
    prev_ = lin;
    if (started_ && delta > 0) {
      if (delta != step_) {
        step_dim_ = -1;
        for (size_t d = rank_; d-- > 0;) {
          if (strides_[d] == delta) {
            step_dim_ = static_cast<int64_t>(d);
            break;
          }
        }
        step_ = delta;
      }
      if (step_dim_ >= 0) {
        for (size_t d = static_cast<size_t>(step_dim_) + 1; d-- > 0;) {
          if (coef_ != nullptr) acc_ += coef_[d];
          if (++coords_[d] < dims_[d] || d == 0) return;
          if (coef_ != nullptr) acc_ -= coef_[d] * coords_[d];
          coords_[d] = 0;
        }
        return;
      }
    }
    started_ = true;
    Decompose(lin, strides_, coords_);
    if (coef_ != nullptr) {
      acc_ = 0;
      for (size_t d = 0; d < rank_; ++d) acc_ += coords_[d] * coef_[d];
    }
  }

 private:
  const std::vector<int64_t>& dims_;
  const std::vector<int64_t>& strides_;
  int64_t* coords_;
  const int64_t* coef_;
  size_t rank_;
  int64_t acc_ = 0;
  bool started_ = false;
  int64_t prev_ = 0;
  int64_t step_ = 0;
  int64_t step_dim_ = -1;
};

}  // namespace hlox::rt::fused_walk
