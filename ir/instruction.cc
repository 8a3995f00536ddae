// Instruction construction and use-def maintenance.
#include "ir/instruction.h"

#include <algorithm>

#include "ir/computation.h"

namespace hlox {

Instruction::Instruction(Opcode opcode, Shape shape) : opcode_(opcode), shape_(std::move(shape)) {}

Instruction::~Instruction() = default;

std::unique_ptr<Instruction> Instruction::Create(Opcode opcode, Shape shape,
                                                 std::vector<Instruction*> operands) {
  std::unique_ptr<Instruction> instr(new Instruction(opcode, std::move(shape)));
  for (Instruction* op : operands) instr->AppendOperand(op);
  return instr;
}

std::unique_ptr<Instruction> Instruction::CreateParameter(int64_t number, Shape shape) {
  auto instr = Create(Opcode::kParameter, std::move(shape), {});
  instr->attrs_.parameter_number = number;
  return instr;
}

std::unique_ptr<Instruction> Instruction::CreateConstant(Literal literal) {
  auto instr = Create(Opcode::kConstant, literal.shape(), {});
  instr->set_literal(std::move(literal));
  return instr;
}

void Instruction::AddUser(Instruction* u) {
  if (std::find(users_.begin(), users_.end(), u) == users_.end()) users_.push_back(u);
}

void Instruction::RemoveUser(Instruction* u) {
  auto it = std::find(users_.begin(), users_.end(), u);
  if (it != users_.end()) users_.erase(it);
}

void Instruction::AppendOperand(Instruction* op) {
  operands_.push_back(op);
  op->AddUser(this);
}

void Instruction::ReplaceOperand(int64_t i, Instruction* new_op) {
  Instruction* old_op = operands_[i];
  if (old_op == new_op) return;
  operands_[i] = new_op;
  new_op->AddUser(this);
  if (std::find(operands_.begin(), operands_.end(), old_op) == operands_.end()) {
    old_op->RemoveUser(this);
  }
}

void Instruction::ReplaceOperandEverywhere(Instruction* old_op, Instruction* new_op) {
  for (int64_t i = 0; i < operand_count(); ++i) {
    if (operands_[i] == old_op) ReplaceOperand(i, new_op);
  }
}

void Instruction::DetachOperands() {
  for (Instruction* op : operands_) op->RemoveUser(this);
  operands_.clear();
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  std::vector<Instruction*> users = users_;
  for (Instruction* u : users) {
    if (u != replacement) u->ReplaceOperandEverywhere(this, replacement);
    for (Instruction*& p : u->control_preds_) {
      if (p == this) p = replacement;
    }
  }
  if (parent_ && parent_->root() == this) parent_->set_root(replacement);
}

const std::string* Instruction::FindRawAttribute(std::string_view key) const {
  for (const RawAttribute& a : raw_) {
    if (a.key == key) return &a.value;
  }
  return nullptr;
}

bool Instruction::IsRoot() const { return parent_ && parent_->root() == this; }

std::unique_ptr<Instruction> Instruction::CloneWithOperands(
    const Shape& shape, std::vector<Instruction*> operands) const {
  auto c = Create(opcode_, shape, std::move(operands));
  c->name_ = name_;
  c->called_ = called_;
  c->attrs_ = attrs_;
  // The origin tree follows the result's shape; like XLA's CopyOriginalValue, a clone of
  // another shape does not keep it (it would no longer parse).
  if (!shape.Compatible(shape_)) c->attrs_.original_value.reset();
  c->raw_ = raw_;
  if (literal_) c->literal_ = std::make_unique<Literal>(*literal_);
  return c;
}

}  // namespace hlox
