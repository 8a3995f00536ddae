// Collectives with single-replica semantics: this process is replica 0 and partition 0 of its
// group and every other participant is assumed to hold the same data. all-reduce, all-to-all,
// collective-permute, collective-broadcast and collective-reduce return their data operands (a
// dynamic root operand, has_dynamic_root=true, is not data); all-gather repeats the
// operand along its dimension to fill the declared result; reduce-scatter keeps replica 0's
// block. The -start/-done pairs wrap the same values in XLA's async tuple shapes.
// ragged-all-to-all copies the ragged rows this replica sends to itself (peer 0's updates) into
// its output buffer and leaves the other rows as they were. replica-id/partition-id are 0; rng-get-and-update-state returns (seed word, counter) and
// advances the counter by its delta.
#include <cstring>

#include "common/status_macros.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"
#include "runtime/core/strided_copy.h"

namespace hlox::rt {
namespace {

// The dimension along which `big` and `small` differ (the gather/scatter dimension).
int64_t CollectiveDim(const Instruction& instr, const Shape& a, const Shape& b) {
  if (!instr.dimensions().empty()) return instr.dimensions()[0];
  for (int64_t d = 0; d < a.rank() && d < b.rank(); ++d) {
    if (a.dim(d) != b.dim(d)) return d;
  }
  return 0;
}

// all-gather of one array: the operand tiled along `dim` to the output's extent.
absl::StatusOr<Value> GatherOne(const Instruction& instr, const Buffer& in, const Shape& out_shape) {
  if (!out_shape.IsArray() || out_shape.rank() != in.shape().rank()) return KernelError(instr, "all-gather shape mismatch");
  Value out = NewArray(out_shape);
  if (out.array->byte_size() == in.byte_size()) {
    if (in.byte_size() > 0) std::memcpy(out.array->data(), in.data(), in.byte_size());
    return out;
  }
  int64_t dim = CollectiveDim(instr, in.shape(), out_shape);
  if (dim < 0 || dim >= out_shape.rank() || in.shape().dim(dim) == 0 ||
      out_shape.dim(dim) % in.shape().dim(dim) != 0) {
    return KernelError(instr, "all-gather output is not a multiple of the operand");
  }
  int64_t es = PrimitiveByteSize(out_shape.element_type());
  int64_t outer = 1, chunk = es;
  for (int64_t d = 0; d < dim; ++d) outer *= in.shape().dim(d);
  for (int64_t d = dim; d < in.shape().rank(); ++d) chunk *= in.shape().dim(d);
  int64_t reps = out_shape.dim(dim) / in.shape().dim(dim);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r < reps; ++r) {
      std::memcpy(out.array->data() + (o * reps + r) * chunk, in.data() + o * chunk, chunk);
    }
  }
  return out;
}

// reduce-scatter of one array: replica 0's block along `dim`.
absl::StatusOr<Value> ScatterOne(const Instruction& instr, const Buffer& in, const Shape& out_shape, ThreadPool* pool) {
  if (!out_shape.IsArray() || out_shape.rank() != in.shape().rank()) return KernelError(instr, "reduce-scatter shape mismatch");
  Value out = NewArray(out_shape);
  for (int64_t d = 0; d < out_shape.rank(); ++d) {
    if (out_shape.dim(d) > in.shape().dim(d)) return KernelError(instr, "reduce-scatter output larger than operand");
  }
  StridedCopy(out_shape.dims(), RowMajorStrides(in.shape().dims()), 0, PrimitiveByteSize(out_shape.element_type()),
              in.data(), out.array->data(), pool);
  return out;
}

// Applies `one` to each operand, returning an array or a tuple matching `shape`.
template <typename Fn>
absl::StatusOr<Value> PerOperand(const Instruction& instr, const std::vector<const Value*>& ops, const Shape& shape, Fn one) {
  if (ops.size() == 1 && ops[0]->is_tuple && shape.IsTuple()) {
    std::vector<Value> elems;
    for (size_t i = 0; i < ops[0]->tuple.size() && i < static_cast<size_t>(shape.tuple_size()); ++i) {
      if (!ops[0]->tuple[i].is_array()) return KernelError(instr, "nested tuple operand");
      HLOX_ASSIGN_OR_RETURN(Value v, one(*ops[0]->tuple[i].array, shape.tuple_shape(i)));
      elems.push_back(std::move(v));
    }
    return Value::Tuple(std::move(elems));
  }
  if (ops.size() == 1 && !shape.IsTuple()) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, 0));
    return one(*b, shape);
  }
  if (!shape.IsTuple() || shape.tuple_size() != static_cast<int64_t>(ops.size())) {
    return KernelError(instr, "operand count does not match the result tuple");
  }
  std::vector<Value> elems;
  for (size_t i = 0; i < ops.size(); ++i) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, i));
    HLOX_ASSIGN_OR_RETURN(Value v, one(*b, shape.tuple_shape(i)));
    elems.push_back(std::move(v));
  }
  return Value::Tuple(std::move(elems));
}

Value Identity(const std::vector<const Value*>& ops) {
  if (ops.size() == 1) return *ops[0];
  std::vector<Value> elems;
  for (const Value* v : ops) elems.push_back(*v);
  return Value::Tuple(std::move(elems));
}

// Element k of an s32/s64 offsets array.
int64_t IndexAt(const Buffer& b, int64_t k) {
  return b.shape().element_type() == PrimitiveType::kS32 ? b.as<int32_t>()[k] : b.as<int64_t>()[k];
}

// ragged-all-to-all in a group of one: each update u of peer 0 moves send_sizes[0][u] leading
// rows from input[input_offsets[0][u]] to output[output_offsets[0][u]]; the rest of the output
// buffer is returned unchanged. Rows are checked against both buffers (XLA leaves an
// out-of-range update undefined; here it is an error).
absl::StatusOr<Value> RaggedAllToAll(const Instruction& instr, const std::vector<const Value*>& ops) {
  std::vector<const Buffer*> b(6);
  for (size_t k = 0; k < 6; ++k) {
    HLOX_ASSIGN_OR_RETURN(b[k], ArrayOperand(instr, ops, k));
  }
  const Buffer& in = *b[0];
  Value out = NewArray(b[1]->shape());
  if (b[1]->byte_size() > 0) std::memcpy(out.array->data(), b[1]->data(), b[1]->byte_size());
  const Shape& idx = b[2]->shape();
  const int64_t updates = idx.rank() == 2 ? idx.dim(1) : 1;
  if (idx.ElementCount() == 0) return out;
  const int64_t row_bytes = in.shape().dim(0) == 0 ? 0 : in.byte_size() / in.shape().dim(0);
  const int64_t in_rows = in.shape().dim(0), out_rows = out.array->shape().dim(0);
  for (int64_t u = 0; u < updates; ++u) {
    const int64_t from = IndexAt(*b[2], u), rows = IndexAt(*b[3], u), to = IndexAt(*b[4], u);
    if (rows < 0 || from < 0 || to < 0 || from > in_rows - rows || to > out_rows - rows) {
      return KernelError(instr, absl::StrCat("update ", u, " moves rows [", from, ", ", from + rows,
                                             ") to [", to, ", ", to + rows, ") outside input rows ",
                                             in_rows, " or output rows ", out_rows));
    }
    if (rows > 0) std::memmove(out.array->data() + to * row_bytes, in.data() + from * row_bytes, rows * row_bytes);
  }
  return out;
}

Value ScalarU32(uint32_t v) {
  Value out = NewArray(Shape(PrimitiveType::kU32, {}));
  *out.array->as<uint32_t>() = v;
  return out;
}

absl::StatusOr<Value> RngState(const Instruction& instr, KernelContext& ctx) {
  const Shape& s = instr.shape();
  if (!s.IsArray() || s.ElementCount() < 1 || PrimitiveByteSize(s.element_type()) != 8) {
    return KernelError(instr, "rng-get-and-update-state must produce u64/s64 words");
  }
  int64_t delta = 1;
  if (const std::string* d = instr.FindRawAttribute("delta")) delta = std::strtoll(d->c_str(), nullptr, 10);
  Value out = NewArray(s);
  uint64_t* w = out.array->as<uint64_t>();
  uint64_t counter = ctx.rng_state ? *ctx.rng_state : 0;
  for (int64_t i = 0; i < s.ElementCount(); ++i) w[i] = MixSeed(ctx.seed, static_cast<uint64_t>(i));
  w[s.ElementCount() - 1] = counter;
  if (ctx.rng_state) *ctx.rng_state = counter + static_cast<uint64_t>(delta);
  return out;
}

}  // namespace

absl::StatusOr<Value> CollectiveKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                       KernelContext& ctx) {
  const Shape& shape = instr.shape();
  switch (instr.opcode()) {
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return ScalarU32(0);
    case Opcode::kRngGetAndUpdateState:
      return RngState(instr, ctx);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce:
    case Opcode::kCollectivePermute: {
      std::vector<const Value*> data = operands;
      if (instr.attrs().has_dynamic_root && !data.empty()) data.pop_back();
      if (data.empty()) return KernelError(instr, "missing operand");
      return Identity(data);
    }
    case Opcode::kAllReduceDone:
      return *operands.at(0);
    case Opcode::kRaggedAllToAll:
      return RaggedAllToAll(instr, operands);
    case Opcode::kCollectivePermuteStart:
      if (operands.empty()) return KernelError(instr, "missing operand");
      return Value::Tuple({*operands[0], *operands[0], ScalarU32(0), ScalarU32(0)});
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      if (operands.size() != 1 || !operands[0]->is_tuple || operands[0]->tuple.size() < 2) {
        return KernelError(instr, "-done needs its -start tuple");
      }
      return operands[0]->tuple[1];
    case Opcode::kAllGather:
      return PerOperand(instr, operands, shape, [&](const Buffer& b, const Shape& s) { return GatherOne(instr, b, s); });
    case Opcode::kAllGatherStart: {
      // Result shape: (operands, outputs).
      if (!shape.IsTuple() || shape.tuple_size() != 2) return KernelError(instr, "all-gather-start shape");
      HLOX_ASSIGN_OR_RETURN(Value gathered, PerOperand(instr, operands, shape.tuple_shape(1), [&](const Buffer& b, const Shape& s) {
        return GatherOne(instr, b, s);
      }));
      return Value::Tuple({Identity(operands), std::move(gathered)});
    }
    case Opcode::kReduceScatter:
      return PerOperand(instr, operands, shape, [&](const Buffer& b, const Shape& s) { return ScatterOne(instr, b, s, ctx.pool); });
    default:
      return absl::UnimplementedError(absl::StrCat("collective kernel does not handle ",
                                                   std::string(OpcodeName(instr.opcode()))));
  }
}

}  // namespace hlox::rt
