// Fusion machinery shared by InstructionFusion, SiblingFusion and FusionMerger: eligibility
// tests, wrapping an instruction into a new fusion, and fusing producers into fusions.
#include "passes/fusion/fusion_util.h"

#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/site_util.h"

namespace hlox::fusion {
namespace {

bool InFusionBody(const Instruction& instr) {
  return instr.parent() && instr.parent()->is_fusion_computation();
}

// Data-movement opcodes the fused executor understands as index maps.
bool IsIndexMapOp(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kBitcast:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kDynamicSlice:
    case Opcode::kConcatenate: case Opcode::kPad: case Opcode::kReverse:
      return true;
    default:
      return false;
  }
}

Instruction* AddParameter(Computation* body, int64_t number, const Shape& shape) {
  auto p = Instruction::CreateParameter(number, shape);
  p->set_name(body->parent()->UniqueName(absl::StrCat("param_", number)));
  return body->AddInstruction(std::move(p));
}

Instruction* AddClone(Computation* body, const Instruction& src, std::vector<Instruction*> ops) {
  auto c = src.CloneWithOperands(src.shape(), std::move(ops));
  c->set_name(body->parent()->UniqueName(src.name()));
  return body->AddInstruction(std::move(c));
}

// Removes instructions of a fused body that nothing uses (dead copies after inlining).
void RemoveDead(Computation* body) {
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<Instruction*> dead;
    for (const auto& i : body->instructions()) {
      if (i->user_count() == 0 && i.get() != body->root() && i->opcode() != Opcode::kParameter) {
        dead.push_back(i.get());
      }
    }
    for (Instruction* d : dead) changed |= body->RemoveInstruction(d);
  }
}

}  // namespace

bool IsExpensive(Opcode op) {
  switch (op) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kTanh: case Opcode::kLogistic: case Opcode::kPower: case Opcode::kSqrt:
    case Opcode::kRsqrt: case Opcode::kCbrt: case Opcode::kErf: case Opcode::kSin:
    case Opcode::kCos: case Opcode::kTan: case Opcode::kAtan2: case Opcode::kDivide:
    case Opcode::kRemainder: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin: case Opcode::kAtan:
    case Opcode::kAsinh: case Opcode::kAtanh: case Opcode::kCosh: case Opcode::kSinh:
      return true;
    default:
      return false;
  }
}

bool IsFusibleConsumer(const Instruction& instr) {
  if (InFusionBody(instr) || HasControlDeps(instr)) return false;
  if (instr.opcode() == Opcode::kFusion) {
    FusionKind k = instr.attrs().fusion_kind;
    return (k == FusionKind::kLoop || k == FusionKind::kInput) &&
           instr.called_computations().size() == 1;
  }
  if (!instr.shape().IsArray()) return false;
  return instr.IsElementwise() || IsIndexMapOp(instr.opcode()) ||
         instr.opcode() == Opcode::kReduce;
}

bool IsFusibleProducer(const Instruction& instr) {
  if (!instr.parent() || InFusionBody(instr) || !instr.shape().IsArray()) return false;
  if (instr.IsRoot() || instr.user_count() == 0 || HasControlDeps(instr)) return false;
  Opcode op = instr.opcode();
  bool ok = instr.IsElementwise() || IsIndexMapOp(op) || op == Opcode::kIota ||
            (op == Opcode::kConstant && instr.shape().rank() == 0 && instr.has_literal() &&
             !instr.literal().elided());
  if (!ok) return false;
  for (const Instruction* u : instr.users()) {
    if (u->parent() != instr.parent() || !IsFusibleConsumer(*u)) return false;
  }
  return true;
}

std::unordered_map<std::string, Instruction*> InstructionsByName(const Module& module) {
  std::unordered_map<std::string, Instruction*> by_name;
  for (Computation* comp : FusibleComputations(module)) {
    for (const auto& i : comp->instructions()) by_name[i->name()] = i.get();
  }
  return by_name;
}

std::vector<Computation*> FusibleComputations(const Module& module) {
  std::unordered_set<const Computation*> excluded;
  for (const auto& c : module.computations()) {
    if (c->is_fusion_computation()) excluded.insert(c.get());
    for (const auto& i : c->instructions()) {
      Opcode op = i->opcode();
      if (op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall) continue;
      for (const Computation* callee : i->called_computations()) excluded.insert(callee);
    }
  }
  std::vector<Computation*> out;
  for (Computation* c : module.PostOrderComputations()) {
    if (!excluded.count(c)) out.push_back(c);
  }
  return out;
}

std::unordered_set<const Instruction*> ControlPredecessors(const Computation& comp) {
  std::unordered_set<const Instruction*> out;
  for (const auto& i : comp.instructions()) {
    for (const Instruction* p : i->control_predecessors()) out.insert(p);
  }
  return out;
}

Instruction* WrapInFusion(Instruction* instr) {
  Computation* parent = instr->parent();
  Module* m = parent->parent();
  Computation* body = m->AddComputation(std::make_unique<Computation>("fused_computation"));
  body->set_is_fusion_computation(true);
  std::vector<Instruction*> fusion_ops;
  std::unordered_map<Instruction*, Instruction*> param_of;
  std::vector<Instruction*> mapped;
  for (Instruction* op : instr->operands()) {
    auto it = param_of.find(op);
    if (it == param_of.end()) {
      int64_t k = static_cast<int64_t>(fusion_ops.size());
      fusion_ops.push_back(op);
      it = param_of.emplace(op, AddParameter(body, k, op->shape())).first;
    }
    mapped.push_back(it->second);
  }
  body->set_root(AddClone(body, *instr, mapped));
  auto f = Instruction::Create(Opcode::kFusion, instr->shape(), fusion_ops);
  f->mutable_called_computations().push_back(body);
  f->attrs().fusion_kind = FusionKind::kLoop;
  f->set_name(m->UniqueName("fusion"));
  Instruction* fusion = parent->AddInstruction(std::move(f));
  instr->ReplaceAllUsesWith(fusion);
  parent->RemoveInstruction(instr);
  UpdateFusionKind(fusion);
  return fusion;
}

Instruction* ConsumerFusion(Instruction* consumer, NameIndex& by_name) {
  if (consumer->opcode() == Opcode::kFusion) return consumer;
  by_name.erase(consumer->name());
  Instruction* fusion = WrapInFusion(consumer);
  by_name[fusion->name()] = fusion;
  return fusion;
}

void FuseInto(Instruction* fusion, Instruction* producer) {
  Computation* body = fusion->called_computations()[0];
  auto param_for = [&](Instruction* op) -> Instruction* {
    for (int64_t k = 0; k < fusion->operand_count(); ++k) {
      if (fusion->operand(k) == op) return body->parameter(k);
    }
    int64_t k = fusion->operand_count();
    fusion->AppendOperand(op);
    return AddParameter(body, k, op->shape());
  };
  Instruction* replacement = nullptr;
  if (producer->opcode() == Opcode::kFusion) {
    const Computation* pbody = producer->called_computations()[0];
    std::unordered_map<const Instruction*, Instruction*> map;
    for (Instruction* i : pbody->PostOrder()) {
      if (i->opcode() == Opcode::kParameter) {
        map[i] = param_for(producer->operand(i->parameter_number()));
        continue;
      }
      std::vector<Instruction*> ops;
      for (Instruction* op : i->operands()) ops.push_back(map.at(op));
      map[i] = AddClone(body, *i, ops);
    }
    replacement = map.at(pbody->root());
  } else {
    std::vector<Instruction*> ops;
    for (Instruction* op : producer->operands()) ops.push_back(param_for(op));
    replacement = AddClone(body, *producer, ops);
  }
  // Drop the operand slots that read the producer; renumber the remaining parameters.
  std::vector<Instruction*> kept_ops, kept_params, dropped;
  for (int64_t k = 0; k < fusion->operand_count(); ++k) {
    Instruction* p = body->parameter(k);
    if (fusion->operand(k) == producer) {
      p->ReplaceAllUsesWith(replacement);
      dropped.push_back(p);
    } else {
      kept_ops.push_back(fusion->operand(k));
      kept_params.push_back(p);
    }
  }
  fusion->DetachOperands();
  for (Instruction* op : kept_ops) fusion->AppendOperand(op);
  for (Instruction* p : dropped) body->RemoveInstruction(p);
  for (size_t k = 0; k < kept_params.size(); ++k) {
    kept_params[k]->attrs().parameter_number = static_cast<int64_t>(k);
  }
  body->RebuildParameterList();
  RemoveDead(body);
  body->SortToPostOrder();
  UpdateFusionKind(fusion);
}

void UpdateFusionKind(Instruction* fusion) {
  const Instruction* root = fusion->called_computations()[0]->root();
  bool reduce_root = root->opcode() == Opcode::kReduce;
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* op : root->operands()) reduce_root |= op->opcode() == Opcode::kReduce;
  }
  if (reduce_root) fusion->attrs().fusion_kind = FusionKind::kInput;
}

int64_t FusedInstructionCount(const Instruction& fusion) {
  const Computation* body = fusion.called_computations()[0];
  return body->instruction_count() - body->parameter_count();
}

bool Reaches(const Instruction* from, const Instruction* to) {
  std::vector<const Instruction*> stack{from};
  std::unordered_set<const Instruction*> seen{from};
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* u : i->users()) {
      if (u == to) return true;
      if (seen.insert(u).second) stack.push_back(u);
    }
  }
  return false;
}

absl::StatusOr<ApplyReport> ApplyChosenSites(Module& module, const std::vector<DecisionSite>& sites,
                                             const DecisionVector& decisions, const SiteRewrite& rewrite) {
  HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
  ApplyReport report;
  NameIndex by_name = InstructionsByName(module);
  std::vector<Computation*> touched;
  for (size_t s = 0; s < sites.size(); ++s) {
    if (decisions[s] == 0) continue;
    RewriteResult done = rewrite(sites[s], by_name);
    if (!done) {
      report.stale.push_back(sites[s].id);
      continue;
    }
    touched.push_back(done->second);
    ++report.applied;
    report.changes.push_back(std::move(done->first));
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  for (Computation* c : touched) c->SortToPostOrder();
  return report;
}

namespace {

std::string StripKeys(std::string config, const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    size_t pos = config.find(key);
    if (pos == std::string::npos) continue;
    size_t end = key.back() == '"' ? config.find('"', pos + key.size()) : config.find_first_of(",}", pos);
    if (end == std::string::npos) continue;
    if (key.back() == '"') ++end;  // past a string value's closing quote
    if (end < config.size() && config[end] == ',') ++end;
    config.erase(pos, end - pos);
  }
  if (config.size() >= 2 && config[config.size() - 2] == ',' && config.back() == '}') {
    config.erase(config.size() - 2, 1);
  }
  return config;
}

}  // namespace

void SetBackendConfigKeys(Instruction& instr, const std::string& keys, const std::vector<std::string>& replaced) {
  Attributes& a = instr.attrs();
  std::string rest = StripKeys(a.has_backend_config ? a.backend_config : "", replaced);
  if (rest.size() >= 2 && rest.front() == '{' && rest.back() == '}') {
    std::string inner = rest.substr(1, rest.size() - 2);
    a.backend_config = inner.empty() ? absl::StrCat("{", keys, "}") : absl::StrCat("{", keys, ",", inner, "}");
  } else {
    a.backend_config = absl::StrCat("{", keys, "}");
  }
  a.has_backend_config = true;
}

}  // namespace hlox::fusion
