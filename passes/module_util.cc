// Inlining, deep copies between modules, extraction and the op-count metric.
#include "passes/module_util.h"

#include <unordered_set>

namespace hlox {

Instruction* InlineComputationBody(const Computation& callee, const std::vector<Instruction*>& args,
                                   Computation& caller) {
  Module* module = caller.parent();
  std::unordered_map<const Instruction*, Instruction*> map;
  for (int64_t p = 0; p < callee.parameter_count(); ++p) map[callee.parameter(p)] = args[p];
  std::vector<Instruction*> order = callee.PostOrder();
  for (const Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> ops;
    for (const Instruction* op : i->operands()) ops.push_back(map.at(op));
    std::unique_ptr<Instruction> c = i->CloneWithOperands(i->shape(), std::move(ops));
    c->set_name(module ? module->UniqueName(i->name()) : i->name());
    map[i] = caller.AddInstruction(std::move(c));
  }
  for (const Instruction* i : order) {
    if (i->opcode() == Opcode::kParameter) continue;
    for (const Instruction* p : i->control_predecessors()) {
      if (p->opcode() != Opcode::kParameter) map[i]->mutable_control_predecessors().push_back(map.at(p));
    }
  }
  return map.at(callee.root());
}

Computation* CopyComputationInto(const Computation& comp, Module& dst, ComputationMap& map) {
  if (auto it = map.find(&comp); it != map.end()) return it->second;
  for (const auto& i : comp.instructions()) {
    for (const Computation* callee : i->called_computations()) CopyComputationInto(*callee, dst, map);
  }
  auto nc = std::make_unique<Computation>(comp.name());
  nc->set_is_fusion_computation(comp.is_fusion_computation());
  nc->header_params() = comp.header_params();
  nc->header_result() = comp.header_result();
  nc->set_execution_thread(comp.execution_thread());
  Computation* c = dst.AddComputation(std::move(nc));
  std::unordered_map<const Instruction*, Instruction*> imap;
  for (const Instruction* i : comp.PostOrder()) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : i->operands()) ops.push_back(imap.at(op));
    std::unique_ptr<Instruction> ni = i->CloneWithOperands(i->shape(), std::move(ops));
    for (Computation*& callee : ni->mutable_called_computations()) callee = map.at(callee);
    imap[i] = c->AddInstruction(std::move(ni));
  }
  for (const auto& i : comp.instructions()) {
    for (const Instruction* p : i->control_predecessors()) {
      imap.at(i.get())->mutable_control_predecessors().push_back(imap.at(p));
    }
  }
  if (comp.root()) c->set_root(imap.at(comp.root()));
  c->RebuildParameterList();
  map[&comp] = c;
  return c;
}

std::unique_ptr<Module> ExtractComputation(const Computation& comp, const std::string& name) {
  auto m = std::make_unique<Module>(name);
  ComputationMap map;
  Computation* entry = CopyComputationInto(comp, *m, map);
  entry->set_is_fusion_computation(false);
  m->set_entry(entry);
  return m;
}

}  // namespace hlox
