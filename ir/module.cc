// Module: computation ownership, call-graph order, unique names and deep copies.
#include "ir/module.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace hlox {

Computation* Module::AddComputation(std::unique_ptr<Computation> c) {
  if (c->name().empty() || FindComputation(c->name()) != nullptr) {
    c->set_name(UniqueName(c->name().empty() ? "computation" : c->name()));
  }
  names_.insert(c->name());
  c->set_parent(this);
  for (auto& i : c->instructions()) {
    if (i->unique_id() < 0) i->set_unique_id(NextUniqueId());
    names_.insert(i->name());
  }
  comp_index_[c->name()] = c.get();
  comps_.push_back(std::move(c));
  return comps_.back().get();
}

bool Module::RemoveComputation(Computation* c) {
  if (c == entry_) return false;
  auto it = std::find_if(comps_.begin(), comps_.end(), [&](const auto& p) { return p.get() == c; });
  if (it == comps_.end()) return false;
  comp_index_.erase(c->name());
  comps_.erase(it);
  return true;
}

Computation* Module::FindComputation(std::string_view name) const {
  auto it = comp_index_.find(std::string(name));
  if (it != comp_index_.end() && it->second->name() == name) return it->second;
  for (const auto& c : comps_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::vector<Computation*> Module::PostOrderComputations() const {
  std::vector<Computation*> order;
  std::unordered_set<Computation*> visited;
  std::function<void(Computation*)> visit = [&](Computation* c) {
    if (!visited.insert(c).second) return;
    for (auto& i : c->instructions()) {
      for (Computation* callee : i->called_computations()) visit(callee);
    }
    order.push_back(c);
  };
  for (const auto& c : comps_) {
    if (c.get() != entry_) visit(c.get());
  }
  if (entry_) visit(entry_);
  return order;
}

int Module::RemoveUnreachableComputations() {
  if (!entry_) return 0;
  std::unordered_set<Computation*> reachable;
  std::vector<Computation*> stack{entry_};
  while (!stack.empty()) {
    Computation* c = stack.back();
    stack.pop_back();
    if (!reachable.insert(c).second) continue;
    for (auto& i : c->instructions()) {
      for (Computation* callee : i->called_computations()) stack.push_back(callee);
    }
  }
  size_t before = comps_.size();
  comps_.erase(std::remove_if(comps_.begin(), comps_.end(),
                              [&](const auto& c) { return !reachable.count(c.get()); }),
               comps_.end());
  comp_index_.clear();
  for (const auto& c : comps_) comp_index_[c->name()] = c.get();
  return static_cast<int>(before - comps_.size());
}

std::string Module::UniqueName(std::string_view prefix) {
  // Strip a trailing ".N" so clones of "add.5" become "add.hxK"-style names, not "add.5.hxK".
  size_t dot = prefix.rfind('.');
  if (dot != std::string_view::npos && dot + 1 < prefix.size() &&
      std::all_of(prefix.begin() + dot + 1, prefix.end(), ::isdigit)) {
    prefix = prefix.substr(0, dot);
  }
  if (prefix.empty()) prefix = "v";
  while (true) {
    std::string candidate = absl::StrCat(std::string(prefix), ".hx", name_counter_++);
    if (names_.insert(candidate).second) return candidate;
  }
}

int64_t Module::InstructionCount() const {
  int64_t n = 0;
  for (const auto& c : comps_) n += c->instruction_count();
  return n;
}

std::unique_ptr<Module> Module::Clone() const {
  auto m = std::make_unique<Module>(name_);
  m->header_ = header_;
  m->trailer_ = trailer_;
  m->aliases_ = aliases_;
  m->donors_ = donors_;
  m->names_ = names_;
  m->next_id_ = next_id_;
  m->name_counter_ = name_counter_;
  std::unordered_map<const Computation*, Computation*> comp_map;
  for (const auto& c : comps_) {
    auto nc = std::make_unique<Computation>(c->name());
    nc->set_is_fusion_computation(c->is_fusion_computation());
    nc->header_params() = c->header_params();
    nc->header_result() = c->header_result();
    nc->set_execution_thread(c->execution_thread());
    comp_map[c.get()] = nc.get();
    nc->set_parent(m.get());
    m->comp_index_[nc->name()] = nc.get();
    m->comps_.push_back(std::move(nc));
  }
  for (const auto& c : comps_) {
    Computation* nc = comp_map[c.get()];
    std::unordered_map<const Instruction*, Instruction*> map;
    // Two passes so operands defined later in the text (allowed by HLO) are handled.
    for (const auto& i : c->instructions()) {
      auto ni = i->CloneWithOperands(i->shape(), {});
      for (Computation*& callee : ni->mutable_called_computations()) callee = comp_map.at(callee);
      Instruction* raw = ni.get();
      nc->AddInstruction(std::move(ni));  // Module is the parent: name reserved, id assigned.
      raw->set_unique_id(i->unique_id());
      map[i.get()] = raw;
    }
    for (const auto& i : c->instructions()) {
      for (Instruction* op : i->operands()) map[i.get()]->AppendOperand(map.at(op));
    }
    for (const auto& i : c->instructions()) {
      for (Instruction* p : i->control_predecessors()) {
        map[i.get()]->mutable_control_predecessors().push_back(map.at(p));
      }
    }
    if (c->root()) nc->set_root(map.at(c->root()));
    nc->RebuildParameterList();
  }
  if (entry_) m->entry_ = comp_map.at(entry_);
  m->next_id_ = next_id_;
  return m;
}

int64_t OpCount(const Module& module) {
  if (module.entry() == nullptr) return 0;
  int64_t n = 0;
  std::unordered_set<const Computation*> seen;
  std::vector<const Computation*> stack{module.entry()};
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const auto& i : c->instructions()) {
      switch (i->opcode()) {
        case Opcode::kParameter:
        case Opcode::kConstant:
        case Opcode::kTuple:
        case Opcode::kGetTupleElement:
          break;
        default:
          ++n;
      }
      if (i->opcode() == Opcode::kCall || i->opcode() == Opcode::kWhile ||
          i->opcode() == Opcode::kConditional) {
        for (const Computation* callee : i->called_computations()) stack.push_back(callee);
      }
    }
  }
  return n;
}

}  // namespace hlox
