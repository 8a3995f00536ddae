// Reducer pattern matching (see kernels/reducer.h).
#include "runtime/kernels/reducer.h"

namespace hlox::rt {

std::optional<Opcode> MatchBinaryReducer(const Computation& comp) {
  if (comp.parameter_count() != 2) return std::nullopt;
  const Instruction* root = comp.root();
  if (root == nullptr || root->operand_count() != 2) return std::nullopt;
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      break;
    default:
      return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter) return std::nullopt;
  if (a->parameter_number() == b->parameter_number()) return std::nullopt;
  const Shape& s = root->shape();
  if (!s.IsArray() || s.rank() != 0 || !a->shape().Compatible(s) || !b->shape().Compatible(s)) return std::nullopt;
  return root->opcode();
}

}  // namespace hlox::rt
