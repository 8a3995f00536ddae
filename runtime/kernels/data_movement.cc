// Data movement kernels: broadcast, reshape, transpose, slice, concatenate, pad, reverse,
// dynamic-slice, dynamic-update-slice (start indices clamped as XLA does), iota, bitcast
// (physical reinterpretation through both layouts), copy and the pass-through ops
// (opt-barrier, add-dependency, domain, set-dimension-size, after-all, copy-start/-done).
// Everything is element-type agnostic: rows move by element size through strided_copy.
#include <algorithm>
#include <cstring>

#include "common/status_macros.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/strided_copy.h"

namespace hlox::rt {
namespace {

int64_t ElemSize(const Shape& s) { return PrimitiveByteSize(s.element_type()); }

absl::StatusOr<Value> Broadcast(const Instruction& instr, const Buffer& in, ThreadPool* pool) {
  const Shape& out_shape = instr.shape();
  const auto& bdims = instr.dimensions();
  if (static_cast<int64_t>(bdims.size()) != in.shape().rank()) return KernelError(instr, "dimensions size != operand rank");
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(out_shape.rank(), 0);
  for (size_t i = 0; i < bdims.size(); ++i) {
    if (bdims[i] < 0 || bdims[i] >= out_shape.rank() || out_shape.dim(bdims[i]) != in.shape().dim(i)) {
      return KernelError(instr, "bad broadcast dimensions");
    }
    strides[bdims[i]] = in_strides[i];
  }
  Value out = NewArray(out_shape);
  StridedCopy(out_shape.dims(), strides, 0, ElemSize(out_shape), in.data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> SameBytes(const Instruction& instr, const Buffer& in) {
  Value out = NewArray(instr.shape());
  if (out.array->byte_size() != in.byte_size()) return KernelError(instr, "element count differs from operand");
  if (in.byte_size() > 0) std::memcpy(out.array->data(), in.data(), in.byte_size());
  return out;
}

// Reshape-like ops on row-major bytes: the operand's bytes under the instruction's shape, no copy.
absl::StatusOr<Value> ViewAs(const Instruction& instr, const BufferPtr& in) {
  if (!instr.shape().IsArray() || instr.shape().ByteSize() != in->byte_size()) {
    return KernelError(instr, "element count differs from operand");
  }
  return Value::Array(Buffer::View(in, instr.shape()));
}

absl::StatusOr<Value> Transpose(const Instruction& instr, const Buffer& in, ThreadPool* pool) {
  const auto& perm = instr.dimensions();
  if (static_cast<int64_t>(perm.size()) != in.shape().rank()) return KernelError(instr, "bad permutation");
  Value out = NewArray(instr.shape());
  TransposeCopy(in.shape().dims(), perm, ElemSize(in.shape()), in.data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> Slice(const Instruction& instr, const Buffer& in, ThreadPool* pool) {
  const auto& sl = instr.attrs().slice;
  int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(sl.size()) != rank) return KernelError(instr, "slice rank mismatch");
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dims());
  std::vector<int64_t> strides(rank);
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t want = sl[d].stride > 0 ? std::max<int64_t>(0, (sl[d].limit - sl[d].start + sl[d].stride - 1) / sl[d].stride) : -1;
    if (sl[d].start < 0 || sl[d].limit > in.shape().dim(d) || want != instr.shape().dim(d)) {
      return KernelError(instr, "slice bounds do not match shapes");
    }
    strides[d] = in_strides[d] * sl[d].stride;
    offset += sl[d].start * in_strides[d];
  }
  Value out = NewArray(instr.shape());
  StridedCopy(instr.shape().dims(), strides, offset, ElemSize(in.shape()), in.data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> Reverse(const Instruction& instr, const Buffer& in, ThreadPool* pool) {
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dims());
  int64_t offset = 0;
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= in.shape().rank()) return KernelError(instr, "bad reverse dimension");
    offset += (in.shape().dim(d) - 1) * strides[d];
    strides[d] = -strides[d];
  }
  Value out = NewArray(instr.shape());
  if (in.element_count() == 0) return out;
  StridedCopy(in.shape().dims(), strides, offset, ElemSize(in.shape()), in.data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> Concatenate(const Instruction& instr, const std::vector<const Value*>& ops) {
  if (instr.dimensions().size() != 1) return KernelError(instr, "concatenate needs one dimension");
  int64_t dim = instr.dimensions()[0];
  const Shape& out_shape = instr.shape();
  if (dim < 0 || dim >= out_shape.rank()) return KernelError(instr, "bad concatenate dimension");
  int64_t es = ElemSize(out_shape);
  int64_t outer = 1, inner = es;
  for (int64_t d = 0; d < dim; ++d) outer *= out_shape.dim(d);
  for (int64_t d = dim + 1; d < out_shape.rank(); ++d) inner *= out_shape.dim(d);
  Value out = NewArray(out_shape);
  int64_t out_row = out_shape.dim(dim) * inner, pos = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, k));
    if (b->shape().rank() != out_shape.rank()) return KernelError(instr, "operand rank mismatch");
    int64_t chunk = b->shape().dim(dim) * inner;
    if (pos + chunk > out_row || b->byte_size() != outer * chunk) return KernelError(instr, "operand shape mismatch");
    for (int64_t o = 0; o < outer && chunk > 0; ++o) {
      std::memcpy(out.array->data() + o * out_row + pos, b->data() + o * chunk, chunk);
    }
    pos += chunk;
  }
  if (pos != out_row) return KernelError(instr, "operands do not fill the result");
  return out;
}

absl::StatusOr<Value> Pad(const Instruction& instr, const Buffer& in, const Buffer& pad_value) {
  const Shape& out_shape = instr.shape();
  const auto& cfg = instr.attrs().padding;
  int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(cfg.size()) != rank || pad_value.element_count() != 1) return KernelError(instr, "bad padding config");
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = in.shape().dim(d);
    int64_t want = cfg[d].low + cfg[d].high + n + std::max<int64_t>(0, n - 1) * cfg[d].interior;
    if (want != out_shape.dim(d) || cfg[d].interior < 0) return KernelError(instr, "padding does not match the shapes");
  }
  int64_t es = ElemSize(out_shape);
  Value out = NewArray(out_shape);
  uint8_t* dst = out.array->data();
  int64_t count = out.array->element_count();
  for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * es, pad_value.data(), es);
  if (in.element_count() == 0) return out;
  // Copy the input elements whose padded position lies inside the output, row by row.
  std::vector<int64_t> out_strides = RowMajorStrides(out_shape.dims());
  std::vector<int64_t> idx(rank, 0);
  const auto& in_dims = in.shape().dims();
  int64_t src = 0;
  do {
    int64_t off = 0;
    bool inside = true;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t p = cfg[d].low + idx[d] * (cfg[d].interior + 1);
      if (p < 0 || p >= out_shape.dim(d)) { inside = false; break; }
      off += p * out_strides[d];
    }
    if (inside) std::memcpy(dst + off * es, in.data() + src * es, es);
    ++src;
  } while (NextIndex(idx, in_dims));
  return out;
}

// Start indices of dynamic-(update-)slice, clamped to [0, operand_dim - size].
absl::StatusOr<std::vector<int64_t>> ClampedStarts(const Instruction& instr, const std::vector<const Value*>& ops,
                                                   size_t first, const Shape& operand, const std::vector<int64_t>& sizes) {
  int64_t rank = operand.rank();
  std::vector<int64_t> starts(rank, 0);
  if (ops.size() == first + 1 && rank != 1 && ops[first]->is_array() && ops[first]->array->element_count() == rank) {
    for (int64_t d = 0; d < rank; ++d) starts[d] = ReadIndex(*ops[first]->array, d);  // old vector form
  } else {
    if (static_cast<int64_t>(ops.size()) != static_cast<int64_t>(first) + rank) return KernelError(instr, "wrong number of start indices");
    for (int64_t d = 0; d < rank; ++d) {
      HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, first + d));
      if (b->element_count() != 1) return KernelError(instr, "start index is not a scalar");
      starts[d] = ReadIndex(*b, 0);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] > operand.dim(d)) return KernelError(instr, "slice larger than operand");
    starts[d] = std::clamp<int64_t>(starts[d], 0, operand.dim(d) - sizes[d]);
  }
  return starts;
}

absl::StatusOr<Value> DynamicSlice(const Instruction& instr, const std::vector<const Value*>& ops, ThreadPool* pool) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, ops, 0));
  const Shape& out_shape = instr.shape();
  if (out_shape.rank() != in->shape().rank()) return KernelError(instr, "rank mismatch");
  HLOX_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ClampedStarts(instr, ops, 1, in->shape(), out_shape.dims()));
  std::vector<int64_t> strides = RowMajorStrides(in->shape().dims());
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * strides[d];
  Value out = NewArray(out_shape);
  StridedCopy(out_shape.dims(), strides, offset, ElemSize(out_shape), in->data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> DynamicUpdateSlice(const Instruction& instr, const std::vector<const Value*>& ops, ThreadPool* pool) {
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, ops, 0));
  HLOX_ASSIGN_OR_RETURN(const Buffer* upd, ArrayOperand(instr, ops, 1));
  if (upd->shape().rank() != in->shape().rank()) return KernelError(instr, "rank mismatch");
  HLOX_ASSIGN_OR_RETURN(std::vector<int64_t> starts, ClampedStarts(instr, ops, 2, in->shape(), upd->shape().dims()));
  HLOX_ASSIGN_OR_RETURN(Value out, SameBytes(instr, *in));
  std::vector<int64_t> strides = RowMajorStrides(in->shape().dims());
  int64_t offset = 0;
  for (size_t d = 0; d < starts.size(); ++d) offset += starts[d] * strides[d];
  StridedScatterCopy(upd->shape().dims(), strides, offset, ElemSize(in->shape()), upd->data(), out.array->data(), pool);
  return out;
}

absl::StatusOr<Value> Iota(const Instruction& instr) {
  const Shape& s = instr.shape();
  int64_t dim = instr.attrs().iota_dimension;
  if (dim < 0 || dim >= s.rank()) return KernelError(instr, "bad iota dimension");
  Value out = NewArray(s);
  std::vector<int64_t> strides = RowMajorStrides(s.dims());
  int64_t n = out.array->element_count(), stride = strides[dim], size = s.dim(dim);
  absl::Status st = DispatchType(s.element_type(), "iota", [&](auto tag) {
    using Tr = typename decltype(tag)::Traits;
    using T = typename Tr::Compute;
    auto* p = out.array->as<typename Tr::Storage>();
    for (int64_t i = 0; i < n; ++i) p[i] = Tr::Store(static_cast<T>((i / stride) % size));
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

// Logical row-major -> physical order of `shape`'s layout (major-to-minor dims).
std::vector<int64_t> MajorToMinor(const Shape& s) {
  std::vector<int64_t> m2m = s.MinorToMajor();
  std::reverse(m2m.begin(), m2m.end());
  return m2m;
}

absl::StatusOr<Value> Bitcast(const Instruction& instr, const BufferPtr& in_ptr, ThreadPool* pool) {
  const Buffer& in = *in_ptr;
  const Shape& out_shape = instr.shape();
  const Shape& in_shape = instr.operand(0)->shape();  // carries the operand's layout
  bool in_default = !in_shape.has_layout() || in_shape.HasDefaultLayout();
  bool out_default = !out_shape.has_layout() || out_shape.HasDefaultLayout();
  if (in_default && out_default) {
    if (!out_shape.IsArray() || out_shape.ByteSize() != in.byte_size()) {
      return KernelError(instr, "bitcast changes the byte size");
    }
    return ViewAs(instr, in_ptr);
  }
  Value out = NewArray(out_shape);
  if (out.array->byte_size() != in.byte_size()) return KernelError(instr, "bitcast changes the byte size");
  if (in.byte_size() == 0) return out;
  int64_t es = ElemSize(in_shape);
  if (es != ElemSize(out_shape)) return KernelError(instr, "bitcast between element sizes with non-default layouts");
  // Physical bytes of the input: transpose logical into its layout's major-to-minor order.
  std::vector<int64_t> in_perm = MajorToMinor(in_shape);
  std::vector<uint8_t> phys(in.byte_size());
  TransposeCopy(in.shape().dims(), in_perm, es, in.data(), phys.data(), pool);
  // Read those bytes as the output's physical array, then transpose back to logical order.
  std::vector<int64_t> out_perm = MajorToMinor(out_shape);
  std::vector<int64_t> phys_dims(out_perm.size()), inverse(out_perm.size());
  for (size_t k = 0; k < out_perm.size(); ++k) {
    phys_dims[k] = out_shape.dim(out_perm[k]);
    inverse[out_perm[k]] = static_cast<int64_t>(k);
  }
  TransposeCopy(phys_dims, inverse, es, phys.data(), out.array->data(), pool);
  return out;
}

Value Scalar32(int32_t v) {
  Value out = NewArray(Shape(PrimitiveType::kS32, {}));
  *out.array->as<int32_t>() = v;
  return out;
}

}  // namespace

absl::StatusOr<Value> DataMovementKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                         KernelContext& ctx) {
  ThreadPool* pool = ctx.pool;
  switch (instr.opcode()) {
    case Opcode::kIota: return Iota(instr);
    case Opcode::kAfterAll: return Value::Token();
    case Opcode::kConcatenate: return Concatenate(instr, operands);
    case Opcode::kDynamicSlice: return DynamicSlice(instr, operands, pool);
    case Opcode::kDynamicUpdateSlice: return DynamicUpdateSlice(instr, operands, pool);
    default: break;
  }
  if (operands.empty()) return KernelError(instr, "missing operand");
  const Value& v0 = *operands[0];
  switch (instr.opcode()) {
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
      return v0;
    case Opcode::kCopyDone:
      if (!v0.is_tuple || v0.tuple.empty()) return KernelError(instr, "copy-done needs a copy-start tuple");
      return v0.tuple[0];
    case Opcode::kGetDimensionSize: {
      int64_t d = instr.dimensions().empty() ? 0 : instr.dimensions()[0];
      if (!v0.is_array() || d < 0 || d >= v0.array->shape().rank()) return KernelError(instr, "bad dimension");
      return Scalar32(static_cast<int32_t>(v0.array->shape().dim(d)));
    }
    default:
      break;
  }
  if (v0.is_tuple && instr.opcode() == Opcode::kCopy) return CloneValue(v0);
  HLOX_ASSIGN_OR_RETURN(const Buffer* in, ArrayOperand(instr, operands, 0));
  switch (instr.opcode()) {
    case Opcode::kBroadcast: return Broadcast(instr, *in, pool);
    case Opcode::kReshape: return ViewAs(instr, v0.array);
    case Opcode::kDynamicReshape:
    case Opcode::kCopy:
    case Opcode::kSetDimensionSize:
      return SameBytes(instr, *in);
    case Opcode::kCopyStart: {
      HLOX_ASSIGN_OR_RETURN(Value copy, SameBytes(instr.shape().IsTuple() ? *instr.operand(0) : instr, *in));
      Value ctx_val = NewArray(Shape(PrimitiveType::kU32, {}));
      *ctx_val.array->as<uint32_t>() = 0;
      return Value::Tuple({copy, v0, ctx_val});
    }
    case Opcode::kTranspose: return Transpose(instr, *in, pool);
    case Opcode::kSlice: return Slice(instr, *in, pool);
    case Opcode::kReverse: return Reverse(instr, *in, pool);
    case Opcode::kPad: {
      HLOX_ASSIGN_OR_RETURN(const Buffer* pv, ArrayOperand(instr, operands, 1));
      return Pad(instr, *in, *pv);
    }
    case Opcode::kBitcast: return Bitcast(instr, v0.array, pool);
    default:
      return absl::UnimplementedError(absl::StrCat("data movement kernel does not handle ",
                                                   std::string(OpcodeName(instr.opcode()))));
  }
}

}  // namespace hlox::rt
