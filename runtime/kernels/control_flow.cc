// Control flow kernels: tuple, get-tuple-element, call, while, conditional (pred or index
// selector; an out-of-range index takes the last branch), map (a scalar computation applied
// elementwise), scan (a computation applied to each slice along one dimension, threading carries)
// and the async wrappers (async-start runs its computation at once).
#include <cstring>

#include "common/status_macros.h"
#include "runtime/core/executor.h"
#include "runtime/core/kernel.h"
#include "runtime/core/kernel_util.h"

namespace hlox::rt {
namespace {

absl::StatusOr<const Computation*> Called(const Instruction& instr, size_t i) {
  if (instr.called_computations().size() <= i || instr.called_computations()[i] == nullptr) {
    return KernelError(instr, "missing called computation");
  }
  return instr.called_computations()[i];
}

absl::StatusOr<bool> ReadPred(const Instruction& instr, const Value& v) {
  if (!v.is_array() || v.array->element_count() != 1) return KernelError(instr, "condition is not a scalar");
  return ReadIndex(*v.array, 0) != 0;
}

absl::StatusOr<Value> While(const Instruction& instr, const std::vector<const Value*>& ops, KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Computation* cond, Called(instr, 0));
  HLOX_ASSIGN_OR_RETURN(const Computation* body, Called(instr, 1));
  if (ops.size() != 1) return KernelError(instr, "while takes one operand");
  Value state = *ops[0];
  for (;;) {
    HLOX_ASSIGN_OR_RETURN(Value c, ctx.executor->RunComputation(*cond, {&state}));
    HLOX_ASSIGN_OR_RETURN(bool go, ReadPred(instr, c));
    if (!go) break;
    HLOX_ASSIGN_OR_RETURN(Value next, ctx.executor->RunComputation(*body, {&state}));
    state = std::move(next);
  }
  return state;
}

absl::StatusOr<Value> Conditional(const Instruction& instr, const std::vector<const Value*>& ops, KernelContext& ctx) {
  const auto& branches = instr.called_computations();
  if (ops.empty() || branches.empty() || ops.size() != branches.size() + 1) {
    return KernelError(instr, "conditional needs a selector and one operand per branch");
  }
  HLOX_ASSIGN_OR_RETURN(const Buffer* sel, ArrayOperand(instr, ops, 0));
  if (sel->element_count() != 1) return KernelError(instr, "selector is not a scalar");
  int64_t b;
  if (sel->shape().element_type() == PrimitiveType::kPred) {
    b = ReadIndex(*sel, 0) != 0 ? 0 : 1;
    if (branches.size() != 2) return KernelError(instr, "pred conditional needs two branches");
  } else {
    b = ReadIndex(*sel, 0);
    if (b < 0 || b >= static_cast<int64_t>(branches.size())) b = static_cast<int64_t>(branches.size()) - 1;
  }
  return ctx.executor->RunComputation(*branches[b], {ops[b + 1]});
}

// map: applies to_apply to each element tuple of the (same-shaped) operands.
absl::StatusOr<Value> Map(const Instruction& instr, const std::vector<const Value*>& ops, KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Computation* fn, Called(instr, 0));
  Value out = NewArray(instr.shape());
  int64_t n = out.array->element_count();
  int64_t out_es = PrimitiveByteSize(instr.shape().element_type());
  std::vector<Value> scalars;
  std::vector<int64_t> es;
  for (size_t k = 0; k < ops.size(); ++k) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, k));
    if (b->element_count() != n) return KernelError(instr, "map operands must match the result");
    scalars.push_back(NewArray(Shape(b->shape().element_type(), {})));
    es.push_back(PrimitiveByteSize(b->shape().element_type()));
  }
  std::vector<const Value*> args;
  for (const Value& s : scalars) args.push_back(&s);
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < ops.size(); ++k) {
      std::memcpy(scalars[k].array->data(), ops[k]->array->data() + i * es[k], es[k]);
    }
    HLOX_ASSIGN_OR_RETURN(Value r, ctx.executor->RunComputation(*fn, args));
    if (!r.is_array() || r.array->byte_size() != out_es) return KernelError(instr, "map computation must return a scalar");
    std::memcpy(out.array->data() + i * out_es, r.array->data(), out_es);
  }
  return out;
}

// The bytes of `s` before, along and after dimension d: outer blocks of `len` slices of `inner`
// bytes each.
struct SliceGeometry {
  int64_t outer = 1, len = 1, inner = 1;
  SliceGeometry(const Shape& s, int64_t d) {
    inner = PrimitiveByteSize(s.element_type());
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i < d) outer *= s.dim(i);
      if (i > d) inner *= s.dim(i);
    }
    len = s.dim(d);
  }
};

// scan (XLA's semantics, ir/shape_inference_newer_ops.cc): step t reads slice t of every input
// along the scanned dimension (slice length-1-t when is_reverse), calls to_apply(slices...,
// carries...) and writes its outputs at the same position; the carries thread through.
absl::StatusOr<Value> Scan(const Instruction& instr, const std::vector<const Value*>& ops, KernelContext& ctx) {
  HLOX_ASSIGN_OR_RETURN(const Computation* fn, Called(instr, 0));
  const Attributes& a = instr.attrs();
  const int64_t n = static_cast<int64_t>(ops.size()), k = a.num_carries;
  if (a.dimensions.size() != 1 || k > n) return KernelError(instr, "scan needs one dimension and num_carries <= operands");
  const int64_t n_in = n - k, d = a.dimensions[0];
  const std::vector<Shape> results = instr.shape().IsTuple() ? instr.shape().tuple_shapes() : std::vector<Shape>{instr.shape()};
  const int64_t n_out = static_cast<int64_t>(results.size()) - k;
  if (n_out < 0) return KernelError(instr, "scan result has fewer elements than carries");
  std::vector<const Buffer*> inputs;
  for (int64_t i = 0; i < n_in; ++i) {
    HLOX_ASSIGN_OR_RETURN(const Buffer* b, ArrayOperand(instr, ops, i));
    if (d < 0 || d >= b->shape().rank()) return KernelError(instr, "scan dimension outside an input");
    inputs.push_back(b);
  }
  for (int64_t i = 0; i < n_out; ++i) {
    if (!results[i].IsArray() || d < 0 || d >= results[i].rank()) return KernelError(instr, "scan dimension outside an output");
  }
  int64_t length = n_in > 0 ? inputs[0]->shape().dim(d) : n_out > 0 ? results[0].dim(d) : -1;
  if (length < 0) return KernelError(instr, "scan without inputs or outputs has no length");
  std::vector<Value> outs, carries;
  for (int64_t i = 0; i < n_out; ++i) outs.push_back(NewArray(results[i]));
  for (int64_t j = 0; j < k; ++j) carries.push_back(*ops[n_in + j]);
  for (int64_t t = 0; t < length; ++t) {
    const int64_t at = a.is_reverse ? length - 1 - t : t;
    // Fresh slices every step: to_apply may return a parameter, which then lives on as a carry.
    std::vector<Value> slices;
    for (const Buffer* in : inputs) {
      std::vector<int64_t> dims = in->shape().dims();
      dims.erase(dims.begin() + d);
      Value slice = NewArray(Shape(in->shape().element_type(), dims));
      const SliceGeometry g(in->shape(), d);
      for (int64_t o = 0; o < g.outer; ++o) {
        std::memcpy(slice.array->data() + o * g.inner, in->data() + (o * g.len + at) * g.inner, g.inner);
      }
      slices.push_back(std::move(slice));
    }
    std::vector<const Value*> args;
    for (const Value& v : slices) args.push_back(&v);
    for (const Value& v : carries) args.push_back(&v);
    HLOX_ASSIGN_OR_RETURN(Value r, ctx.executor->RunComputation(*fn, args));
    std::vector<Value> step = r.is_tuple ? std::move(r.tuple) : std::vector<Value>{std::move(r)};
    if (static_cast<int64_t>(step.size()) != n_out + k) return KernelError(instr, "scan computation returned the wrong arity");
    for (int64_t i = 0; i < n_out; ++i) {
      const SliceGeometry g(results[i], d);
      if (!step[i].is_array() || step[i].array->byte_size() != g.outer * g.inner) {
        return KernelError(instr, "scan output slice does not fit its output");
      }
      for (int64_t o = 0; o < g.outer; ++o) {
        std::memcpy(outs[i].array->data() + (o * g.len + at) * g.inner, step[i].array->data() + o * g.inner, g.inner);
      }
    }
    for (int64_t j = 0; j < k; ++j) carries[j] = std::move(step[n_out + j]);
  }
  for (Value& c : carries) outs.push_back(std::move(c));
  if (!instr.shape().IsTuple()) return std::move(outs[0]);
  return Value::Tuple(std::move(outs));
}

}  // namespace

absl::StatusOr<Value> ControlFlowKernel(const Instruction& instr, const std::vector<const Value*>& operands,
                                        KernelContext& ctx) {
  switch (instr.opcode()) {
    case Opcode::kTuple: {
      std::vector<Value> elems;
      elems.reserve(operands.size());
      for (const Value* v : operands) elems.push_back(*v);
      return Value::Tuple(std::move(elems));
    }
    case Opcode::kGetTupleElement: {
      if (operands.size() != 1 || !operands[0]->is_tuple) return KernelError(instr, "operand is not a tuple");
      int64_t i = instr.tuple_index();
      if (i < 0 || i >= static_cast<int64_t>(operands[0]->tuple.size())) return KernelError(instr, "tuple index out of range");
      return operands[0]->tuple[i];
    }
    default:
      break;
  }
  if (ctx.executor == nullptr) return KernelError(instr, "needs an executor to run called computations");
  switch (instr.opcode()) {
    case Opcode::kCall: {
      HLOX_ASSIGN_OR_RETURN(const Computation* fn, Called(instr, 0));
      return ctx.executor->RunComputation(*fn, operands);
    }
    case Opcode::kWhile: return While(instr, operands, ctx);
    case Opcode::kConditional: return Conditional(instr, operands, ctx);
    case Opcode::kMap: return Map(instr, operands, ctx);
    case Opcode::kScan: return Scan(instr, operands, ctx);
    case Opcode::kAsyncStart: {
      HLOX_ASSIGN_OR_RETURN(const Computation* fn, Called(instr, 0));
      HLOX_ASSIGN_OR_RETURN(Value r, ctx.executor->RunComputation(*fn, operands));
      std::vector<Value> args;
      for (const Value* v : operands) args.push_back(*v);
      Value context = NewArray(Shape(PrimitiveType::kS32, {}));
      *context.array->as<int32_t>() = 0;
      return Value::Tuple({Value::Tuple(std::move(args)), std::move(r), std::move(context)});
    }
    case Opcode::kAsyncUpdate:
      if (operands.size() != 1) return KernelError(instr, "async-update takes one operand");
      return *operands[0];
    case Opcode::kAsyncDone:
      if (operands.size() != 1 || !operands[0]->is_tuple || operands[0]->tuple.size() < 2) {
        return KernelError(instr, "async-done needs an async-start tuple");
      }
      return operands[0]->tuple[1];
    default:
      return absl::UnimplementedError(absl::StrCat("control flow kernel does not handle ",
                                                   std::string(OpcodeName(instr.opcode()))));
  }
}

}  // namespace hlox::rt
