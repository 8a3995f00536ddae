// Control flow kernels: tuple, get-tuple-element, call, while, conditional (pred or index
// selector; an out-of-range index takes the last branch), map (a scalar computation applied
// elementwise) and the async wrappers (async-start runs its computation at once).
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
