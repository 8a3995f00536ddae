// Computation: owning instruction list, topological order, parameter index.
#include "ir/computation.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/module.h"

namespace hlox {

bool Computation::IsEntry() const { return parent_ && parent_->entry() == this; }

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instr) {
  Instruction* raw = instr.get();
  raw->set_parent(this);
  if (parent_) {
    if (raw->name().empty()) {
      raw->set_name(parent_->UniqueName(OpcodeName(raw->opcode())));
    } else {
      parent_->ReserveName(raw->name());
    }
    raw->set_unique_id(parent_->NextUniqueId());
  }
  instrs_.push_back(std::move(instr));
  if (raw->opcode() == Opcode::kParameter) {
    // Same result as RebuildParameterList() (the last one added wins), without its O(n) scan,
    // so adding many parameters stays linear.
    int64_t n = raw->parameter_number();
    if (n >= 0) {
      if (n >= parameter_count()) params_.resize(n + 1, nullptr);
      params_[n] = raw;
    }
  }
  return raw;
}

bool Computation::RemoveInstruction(Instruction* instr) {
  if (instr->user_count() != 0 || instr == root_) return false;
  for (auto it = instrs_.begin(); it != instrs_.end(); ++it) {
    if (it->get() == instr) {
      instr->DetachOperands();
      for (auto& other : instrs_) {
        auto& preds = other->mutable_control_predecessors();
        preds.erase(std::remove(preds.begin(), preds.end(), instr), preds.end());
      }
      bool was_param = instr->opcode() == Opcode::kParameter;
      instrs_.erase(it);
      if (was_param) RebuildParameterList();
      return true;
    }
  }
  return false;
}

void Computation::ReplaceInstruction(Instruction* old_instr, Instruction* new_instr) {
  old_instr->ReplaceAllUsesWith(new_instr);
  RemoveInstruction(old_instr);
}

void Computation::RebuildParameterList() {
  int64_t n = 0;
  for (auto& i : instrs_) {
    if (i->opcode() == Opcode::kParameter) n = std::max(n, i->parameter_number() + 1);
  }
  params_.assign(n, nullptr);
  for (auto& i : instrs_) {
    if (i->opcode() == Opcode::kParameter && i->parameter_number() >= 0) {
      params_[i->parameter_number()] = i.get();
    }
  }
}

std::vector<Instruction*> Computation::PostOrder() const {
  std::vector<Instruction*> order;
  order.reserve(instrs_.size());
  std::unordered_set<const Instruction*> visited;
  // Iterative DFS so deep graphs do not overflow the stack.
  auto visit = [&](Instruction* start) {
    if (visited.count(start)) return;
    std::vector<std::pair<Instruction*, size_t>> stack{{start, 0}};
    visited.insert(start);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      size_t n_ops = node->operands().size();
      size_t n_all = n_ops + node->control_predecessors().size();
      if (next < n_all) {
        Instruction* dep = next < n_ops ? node->operand(next)
                                        : node->control_predecessors()[next - n_ops];
        ++next;
        if (!visited.count(dep)) {
          visited.insert(dep);
          stack.push_back({dep, 0});
        }
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  };
  // Parameters first in number order keeps printing stable; then the root; then the rest.
  for (Instruction* p : params_) {
    if (p) visit(p);
  }
  if (root_) visit(root_);
  for (auto& i : instrs_) visit(i.get());
  return order;
}

void Computation::SortToPostOrder() {
  std::vector<Instruction*> order = PostOrder();
  std::unordered_map<Instruction*, size_t> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  std::vector<std::unique_ptr<Instruction>> tmp;
  for (auto& i : instrs_) tmp.push_back(std::move(i));
  std::sort(tmp.begin(), tmp.end(), [&](const auto& a, const auto& b) { return pos[a.get()] < pos[b.get()]; });
  instrs_.clear();
  for (auto& i : tmp) instrs_.push_back(std::move(i));
}

}  // namespace hlox
