// One HLO instruction: opcode, result shape, operands, called computations, typed attributes
// and any attributes hlox does not model, kept verbatim so printing reproduces them. Owned by
// its Computation; everyone else holds raw pointers. Use the factory functions to build one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"

namespace hlox {

class Computation;

// An attribute kept as text: key and the value exactly as written (e.g. metadata={...}).
struct RawAttribute {
  std::string key;
  std::string value;
  bool operator==(const RawAttribute&) const = default;
};

class Instruction {
 public:
  // Generic factory; the caller fills attributes. Operand users are updated.
  static std::unique_ptr<Instruction> Create(Opcode opcode, Shape shape,
                                             std::vector<Instruction*> operands);
  static std::unique_ptr<Instruction> CreateParameter(int64_t number, Shape shape);
  static std::unique_ptr<Instruction> CreateConstant(Literal literal);
  ~Instruction();
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  void set_shape(Shape s) { shape_ = std::move(s); }
  // Unique within the module; assigned when added to a computation. Stable ids for sites.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  Computation* parent() const { return parent_; }
  void set_parent(Computation* c) { parent_ = c; }

  // Operands and users. Users are unique and in the order they were first added.
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  Instruction* operand(int64_t i) const { return operands_[i]; }
  const std::vector<Instruction*>& operands() const { return operands_; }
  const std::vector<Instruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  void AppendOperand(Instruction* op);
  // Replaces operand i; keeps user lists consistent.
  void ReplaceOperand(int64_t i, Instruction* new_op);
  // Replaces every occurrence of `old_op` among operands with `new_op`.
  void ReplaceOperandEverywhere(Instruction* old_op, Instruction* new_op);
  // Removes all operands (and this from their users), e.g. before deletion.
  void DetachOperands();
  // Redirects every user (and the parent's root, if this is it) to `replacement`.
  void ReplaceAllUsesWith(Instruction* replacement);

  // Called computations; their role depends on the opcode:
  // while {condition, body}; conditional {branch0, branch1, ...} (true, false for pred);
  // select-and-scatter {select, scatter}; fusion {fused}; everything else {to_apply} or the
  // custom call's called_computations.
  const std::vector<Computation*>& called_computations() const { return called_; }
  std::vector<Computation*>& mutable_called_computations() { return called_; }
  Computation* to_apply() const { return called_.empty() ? nullptr : called_[0]; }

  // Control predecessors (control-predecessors={a,b}).
  const std::vector<Instruction*>& control_predecessors() const { return control_preds_; }
  std::vector<Instruction*>& mutable_control_predecessors() { return control_preds_; }

  Attributes& attrs() { return attrs_; }
  const Attributes& attrs() const { return attrs_; }
  std::vector<RawAttribute>& raw_attributes() { return raw_; }
  const std::vector<RawAttribute>& raw_attributes() const { return raw_; }
  // Value of a raw attribute, or nullptr.
  const std::string* FindRawAttribute(std::string_view key) const;

  bool has_literal() const { return literal_ != nullptr; }
  const Literal& literal() const { return *literal_; }
  Literal& mutable_literal() { return *literal_; }
  void set_literal(Literal l) { literal_ = std::make_unique<Literal>(std::move(l)); }

  int64_t parameter_number() const { return attrs_.parameter_number; }
  int64_t tuple_index() const { return attrs_.tuple_index; }
  const std::vector<int64_t>& dimensions() const { return attrs_.dimensions; }

  bool IsRoot() const;
  bool IsElementwise() const { return hlox::IsElementwise(opcode_); }

  // Deep copy of the instruction's own data with new operands (called computations are shared,
  // control predecessors dropped, the origin dropped when `shape` is not compatible with this
  // one's); not yet in any computation.
  std::unique_ptr<Instruction> CloneWithOperands(const Shape& shape,
                                                 std::vector<Instruction*> operands) const;

 private:
  Instruction(Opcode opcode, Shape shape);
  void AddUser(Instruction* u);
  void RemoveUser(Instruction* u);

  Opcode opcode_;
  std::string name_;
  Shape shape_;
  int64_t unique_id_ = -1;
  Computation* parent_ = nullptr;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Computation*> called_;
  std::vector<Instruction*> control_preds_;
  Attributes attrs_;
  std::vector<RawAttribute> raw_;
  std::unique_ptr<Literal> literal_;
};

}  // namespace hlox
