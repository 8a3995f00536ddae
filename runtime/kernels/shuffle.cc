// shuffle: rotate moves whole slices (two block copies per outer index and rotated dimension);
// permute copies element by element from the coordinates its indices literal names. Semantics and
// the checks on shifts and indices: ir/shape_inference_newer_ops.cc.
#include <cstring>

#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"

namespace hlox::rt {
namespace {

// dst = src rotated along dimension d: dst[.., i, ..] = src[.., (i + shift) mod size, ..].
void RotateInto(const Shape& s, int64_t d, int64_t shift, const uint8_t* src, uint8_t* dst) {
  int64_t outer = 1, inner = PrimitiveByteSize(s.element_type());
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (i < d) outer *= s.dim(i);
    if (i > d) inner *= s.dim(i);
  }
  const int64_t len = s.dim(d);
  const int64_t r = len == 0 ? 0 : ((shift % len) + len) % len;
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* from = src + o * len * inner;
    uint8_t* to = dst + o * len * inner;
    std::memcpy(to, from + r * inner, (len - r) * inner);
    std::memcpy(to + (len - r) * inner, from, r * inner);
  }
}

absl::StatusOr<Value> Permute(const Instruction& instr, const Buffer& in) {
  const Attributes& a = instr.attrs();
  const Literal& idx = *a.shuffle_indices;
  const Shape& s = in.shape();
  const Shape& is = idx.shape();
  const int64_t rank = s.rank(), es = PrimitiveByteSize(s.element_type());
  const int64_t nd = static_cast<int64_t>(a.dimensions.size());
  const bool coordinate_dim = is.rank() == rank + 1;  // else one dimension's coordinate alone
  // What verification checks (ir/shape_inference_newer_ops.cc), again for an unverified module.
  bool fits = coordinate_dim ? (is.dim(rank) == nd || (nd == 1 && is.dim(rank) == 1)) : (is.rank() == rank && nd == 1);
  for (int64_t j = 0; fits && j < rank; ++j) fits = is.dim(j) == s.dim(j) || is.dim(j) == 1;
  if (!fits) return KernelError(instr, "shuffle indices do not fit the operand");
  // Strides of the indices literal, 0 along its dimensions of size 1 (shared by every element).
  std::vector<int64_t> istride(is.rank(), 0);
  for (int64_t j = is.rank() - 1, acc = 1; j >= 0; --j) {
    istride[j] = is.dim(j) == 1 ? 0 : acc;
    acc *= is.dim(j);
  }
  const std::vector<int64_t> stride = RowMajorStrides(s.dims());
  std::vector<int64_t> coords(idx.element_count());  // decoded once, not per element read
  for (size_t k = 0; k < coords.size(); ++k) coords[k] = idx.GetAsInt64(static_cast<int64_t>(k));
  Value out = NewArray(Shape(s.element_type(), s.dims()));
  std::vector<int64_t> at(rank, 0);
  const int64_t count = s.ElementCount();
  for (int64_t e = 0; e < count; ++e) {
    int64_t base = 0, src = 0;
    for (int64_t j = 0; j < rank; ++j) base += at[j] * istride[j];
    for (int64_t j = 0; j < rank; ++j) src += at[j] * stride[j];
    for (int64_t c = 0; c < nd; ++c) {
      const int64_t d = a.dimensions[c];
      const int64_t v = coords[base + (coordinate_dim ? c * istride[rank] : 0)];
      if (v < 0 || v >= s.dim(d)) return KernelError(instr, "shuffle index outside its dimension");
      src += (v - at[d]) * stride[d];
    }
    std::memcpy(out.array->data() + e * es, in.data() + src * es, es);
    for (int64_t j = rank - 1; j >= 0 && ++at[j] == s.dim(j); --j) at[j] = 0;
  }
  return out;
}

}  // namespace

absl::StatusOr<Value> ShuffleKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                    KernelContext&) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, operands, 0));
  const Attributes& a = instr.attrs();
  for (int64_t d : a.dimensions) {
    if (d < 0 || d >= in->shape().rank()) return KernelError(instr, "shuffle dimension outside the operand");
  }
  if (a.shuffle_mode == "permute") {
    if (!a.shuffle_indices || a.shuffle_indices->elided()) return KernelError(instr, "permute shuffle without indices");
    return Permute(instr, *in);
  }
  if (a.shuffle_mode != "rotate" || a.shuffle_shifts.size() != a.dimensions.size()) {
    return KernelError(instr, "shuffle needs mode=rotate with one shift per dimension, or mode=permute");
  }
  const Shape& s = in->shape();
  Value out = NewArray(Shape(s.element_type(), s.dims()));
  if (in->byte_size() > 0) std::memcpy(out.array->data(), in->data(), in->byte_size());
  if (a.dimensions.empty() || in->byte_size() == 0) return out;
  Value scratch = NewArray(out.array->shape());
  for (size_t i = 0; i < a.dimensions.size(); ++i) {
    RotateInto(s, a.dimensions[i], a.shuffle_shifts[i], out.array->data(), scratch.array->data());
    std::swap(out, scratch);
  }
  return out;
}

}  // namespace hlox::rt
