// Cutting fusions, called computations and random connected subgraphs out of a module.
#include "passes/dataset.h"

#include <algorithm>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "passes/module_util.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

std::string Sanitize(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  return s;
}

bool Subgraphable(const Instruction& i) {
  return i.opcode() != Opcode::kParameter && i.opcode() != Opcode::kConstant && !HasSideEffect(i) &&
         !i.shape().IsToken() && i.control_predecessors().empty() &&
         i.opcode() != Opcode::kRngGetAndUpdateState && i.opcode() != Opcode::kCustomCall;
}

// Builds a module from `nodes` (instructions of one computation, in post order).
std::unique_ptr<Module> BuildSubgraph(const std::vector<const Instruction*>& nodes, const std::string& name) {
  auto m = std::make_unique<Module>(name);
  ComputationMap cmap;
  for (const Instruction* i : nodes) {
    for (const Computation* c : i->called_computations()) CopyComputationInto(*c, *m, cmap);
  }
  Computation* entry = m->AddComputation(std::make_unique<Computation>("main"));
  std::unordered_set<const Instruction*> in(nodes.begin(), nodes.end());
  std::unordered_map<const Instruction*, Instruction*> map;
  int64_t params = 0;
  for (const Instruction* i : nodes) {
    std::vector<Instruction*> ops;
    for (const Instruction* op : i->operands()) {
      if (!map.count(op)) {
        std::unique_ptr<Instruction> outside =
            op->opcode() == Opcode::kConstant ? op->CloneWithOperands(op->shape(), {})
                                              : Instruction::CreateParameter(params++, op->shape());
        outside->set_name(m->UniqueName(op->opcode() == Opcode::kConstant ? "constant" : "arg"));
        map[op] = entry->AddInstruction(std::move(outside));
      }
      ops.push_back(map.at(op));
    }
    std::unique_ptr<Instruction> c = i->CloneWithOperands(i->shape(), std::move(ops));
    for (Computation*& callee : c->mutable_called_computations()) callee = cmap.at(callee);
    map[i] = entry->AddInstruction(std::move(c));
  }
  // Outputs: values used outside the subgraph (or the original root), else the last node.
  std::vector<Instruction*> outs;
  for (const Instruction* i : nodes) {
    bool external = i->IsRoot() || i->user_count() == 0;
    for (const Instruction* u : i->users()) external |= !in.count(u);
    if (external) outs.push_back(map.at(i));
  }
  if (outs.empty()) outs.push_back(map.at(nodes.back()));
  Instruction* root = outs[0];
  if (outs.size() > 1) {
    std::vector<Shape> shapes;
    for (Instruction* o : outs) shapes.push_back(o->shape());
    root = entry->AddInstruction(Instruction::Create(Opcode::kTuple, Shape::Tuple(shapes), outs));
  }
  entry->set_root(root);
  entry->RebuildParameterList();
  m->set_entry(entry);
  return m;
}

}  // namespace

std::vector<ExtractedModule> ExtractFusions(const Module& module) {
  std::vector<ExtractedModule> out;
  for (const Computation* comp : module.PostOrderComputations()) {
    for (const auto& i : comp->instructions()) {
      if (i->opcode() != Opcode::kFusion || i->called_computations().empty()) continue;
      std::string name = Sanitize(i->name());
      out.push_back({name, "fusion", ExtractComputation(*i->called_computations()[0], name)});
    }
  }
  return out;
}

std::vector<ExtractedModule> ExtractCalledComputations(const Module& module, int64_t min_ops) {
  std::vector<ExtractedModule> out;
  for (const auto& c : module.computations()) {
    if (c.get() == module.entry() || c->is_fusion_computation()) continue;
    int64_t ops = c->instruction_count() - c->parameter_count();
    if (ops < min_ops) continue;
    std::string name = Sanitize(c->name());
    out.push_back({name, "computation", ExtractComputation(*c, name)});
  }
  return out;
}

std::vector<ExtractedModule> ExtractRandomSubgraphs(const Module& module, int count, uint64_t seed, int size) {
  std::vector<ExtractedModule> out;
  if (module.entry() == nullptr || count <= 0 || size <= 0) return out;
  std::vector<Instruction*> order = module.entry()->PostOrder();
  std::vector<Instruction*> candidates;
  for (Instruction* i : order) {
    if (Subgraphable(*i)) candidates.push_back(i);
  }
  if (candidates.empty()) return out;
  std::unordered_map<const Instruction*, size_t> pos;
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  std::mt19937_64 rng(seed);
  std::set<std::vector<size_t>> seen;
  for (int attempt = 0; attempt < count * 4 && static_cast<int>(out.size()) < count; ++attempt) {
    std::vector<const Instruction*> frontier{candidates[rng() % candidates.size()]};
    std::unordered_set<const Instruction*> chosen;
    while (!frontier.empty() && static_cast<int>(chosen.size()) < size) {
      size_t pick = rng() % frontier.size();
      const Instruction* i = frontier[pick];
      frontier.erase(frontier.begin() + pick);
      if (!chosen.insert(i).second) continue;
      for (const Instruction* n : i->operands()) {
        if (Subgraphable(*n) && !chosen.count(n)) frontier.push_back(n);
      }
      for (const Instruction* n : i->users()) {
        if (Subgraphable(*n) && !chosen.count(n)) frontier.push_back(n);
      }
    }
    std::vector<size_t> key;
    for (const Instruction* i : chosen) key.push_back(pos.at(i));
    std::sort(key.begin(), key.end());
    if (!seen.insert(key).second) continue;
    // A value computed outside from inside values and fed back in simply becomes a parameter.
    std::vector<const Instruction*> nodes;
    for (size_t k : key) nodes.push_back(order[k]);
    std::string name = absl::StrCat("subgraph_s", seed, "_", out.size());
    out.push_back({name, "subgraph", BuildSubgraph(nodes, name)});
  }
  return out;
}

}  // namespace hlox
