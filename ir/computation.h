// A computation: an ordered list of instructions it owns, its parameters and its root.
#pragma once

#include <list>
#include <memory>
#include <string>
#include <vector>

#include "ir/instruction.h"

namespace hlox {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  Module* parent() const { return parent_; }
  void set_parent(Module* m) { parent_ = m; }
  bool IsEntry() const;
  // True for computations called by a fusion instruction.
  bool is_fusion_computation() const { return is_fusion_; }
  void set_is_fusion_computation(bool f) { is_fusion_ = f; }

  // Adds an instruction (appended in text order); assigns a module-unique id and, if the
  // name is empty or taken, a fresh unique name. Returns the non-owning pointer.
  Instruction* AddInstruction(std::unique_ptr<Instruction> instr);
  // Deletes an instruction that has no users and is not the root. Returns false otherwise.
  bool RemoveInstruction(Instruction* instr);
  // Replaces `old_instr` by `new_instr` for every user and the root, then removes `old_instr`.
  void ReplaceInstruction(Instruction* old_instr, Instruction* new_instr);

  Instruction* root() const { return root_; }
  void set_root(Instruction* r) { root_ = r; }

  // Parameters indexed by parameter number (size = number of parameters).
  const std::vector<Instruction*>& parameters() const { return params_; }
  Instruction* parameter(int64_t i) const { return params_[i]; }
  int64_t parameter_count() const { return static_cast<int64_t>(params_.size()); }
  // Recomputes the parameter index from the instruction list; call after adding parameters.
  void RebuildParameterList();

  // Instructions in text/insertion order.
  const std::list<std::unique_ptr<Instruction>>& instructions() const { return instrs_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instrs_.size()); }
  // Topological order (operands and control predecessors before users), deterministic:
  // a depth-first post order from the root, then any unreachable instructions in text order.
  std::vector<Instruction*> PostOrder() const;
  // Reorders the owned list to PostOrder() so printing is def-before-use.
  void SortToPostOrder();

  // Signature as written in the computation header (may be empty when the text omitted it).
  std::vector<std::pair<std::string, Shape>>& header_params() { return header_params_; }
  const std::vector<std::pair<std::string, Shape>>& header_params() const { return header_params_; }
  std::optional<Shape>& header_result() { return header_result_; }
  const std::optional<Shape>& header_result() const { return header_result_; }

  // The thread it runs on (`}, execution_thread="name"` after the body); empty when the text
  // names none, which XLA reads as "main".
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  // Shape of the computation's result (the root's shape).
  const Shape& ResultShape() const { return root_->shape(); }

 private:
  std::string name_;
  Module* parent_ = nullptr;
  bool is_fusion_ = false;
  std::list<std::unique_ptr<Instruction>> instrs_;
  std::vector<Instruction*> params_;
  Instruction* root_ = nullptr;
  std::vector<std::pair<std::string, Shape>> header_params_;
  std::optional<Shape> header_result_;
  std::string execution_thread_;
};

}  // namespace hlox
