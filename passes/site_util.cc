// Site helpers shared by every decision-exposing pass: ids, features, the name index and the
// in-order apply loop with stale detection.
#include "passes/site_util.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace hlox {

std::string SiteId(std::string_view rule, const Instruction& anchor) {
  std::string comp = anchor.parent() ? anchor.parent()->name() : std::string();
  return absl::StrCat(std::string(rule), "@", comp, "/", anchor.name());
}

std::vector<float> BasicSiteFeatures(const Instruction& anchor) {
  const Shape& s = anchor.shape();
  return {static_cast<float>(static_cast<int>(anchor.opcode())),
          static_cast<float>(s.IsArray() ? s.rank() : -1),
          static_cast<float>(s.IsArray() ? s.ElementCount() : 0),
          static_cast<float>(s.ByteSize()),
          static_cast<float>(anchor.operand_count()),
          static_cast<float>(anchor.user_count()),
          anchor.IsRoot() ? 1.0f : 0.0f};
}

DecisionSite MakeSite(std::string_view rule, const Instruction& anchor,
                      const std::vector<const Instruction*>& others, std::vector<std::string> choices,
                      int default_choice) {
  DecisionSite site;
  site.id = SiteId(rule, anchor);
  site.rule = std::string(rule);
  site.instructions.push_back(anchor.name());
  for (const Instruction* o : others) site.instructions.push_back(o->name());
  site.computation = anchor.parent() ? anchor.parent()->name() : std::string();
  site.choices = std::move(choices);
  site.default_choice = default_choice;
  site.features = BasicSiteFeatures(anchor);
  return site;
}

void InstructionIndex::Rebuild() {
  map_.clear();
  for (const auto& c : module_.computations()) {
    for (const auto& i : c->instructions()) map_[{c->name(), i->name()}] = i.get();
  }
}

Instruction* InstructionIndex::Find(std::string_view computation, std::string_view name) const {
  auto it = map_.find(std::make_pair(std::string(computation), std::string(name)));
  return it == map_.end() ? nullptr : it->second;
}

std::optional<std::vector<Instruction*>> InstructionIndex::Resolve(const DecisionSite& site) const {
  std::vector<Instruction*> out;
  out.reserve(site.instructions.size());
  for (const std::string& n : site.instructions) {
    Instruction* i = Find(site.computation, n);
    if (i == nullptr) return std::nullopt;
    out.push_back(i);
  }
  return out;
}

void InstructionIndex::Add(Instruction* instr) {
  if (instr->parent()) map_[{instr->parent()->name(), instr->name()}] = instr;
}

void InstructionIndex::Forget(const Instruction* instr) {
  if (!instr->parent()) return;
  auto it = map_.find(std::make_pair(instr->parent()->name(), instr->name()));
  if (it != map_.end() && it->second == instr) map_.erase(it);
}

absl::StatusOr<ApplyReport> ApplySitesInOrder(Module& module, const std::vector<DecisionSite>& sites,
                                              const DecisionVector& decisions, const SiteApplier& apply) {
  HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
  ApplyReport report;
  InstructionIndex index(module);
  std::set<std::string> touched;
  for (size_t k = 0; k < sites.size(); ++k) {
    if (decisions[k] == 0) continue;
    const DecisionSite& site = sites[k];
    std::optional<std::vector<Instruction*>> instrs = index.Resolve(site);
    SiteOutcome outcome = SiteOutcome::kStale;
    if (instrs.has_value()) {
      HLOX_ASSIGN_OR_RETURN(outcome, apply(site, decisions[k], *instrs, index));
    }
    if (outcome == SiteOutcome::kStale) {
      report.stale.push_back(site.id);
      continue;
    }
    ++report.applied;
    touched.insert(site.computation);
    report.changes.push_back(absl::StrCat(site.id, " -> ", site.choices[decisions[k]]));
  }
  for (const std::string& name : touched) {
    if (Computation* c = module.FindComputation(name)) SortComputation(*c);
  }
  return report;
}

bool HasSideEffectNoRecurse(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kReduceScatter:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return true;
    case Opcode::kCustomCall: {
      const std::string* v = instr.FindRawAttribute("custom_call_has_side_effect");
      return v != nullptr && *v == "true";
    }
    default:
      return false;
  }
}

bool HasSideEffect(const Instruction& instr) {
  if (HasSideEffectNoRecurse(instr)) return true;
  std::unordered_set<const Computation*> seen;
  std::vector<const Computation*> stack(instr.called_computations().begin(),
                                        instr.called_computations().end());
  while (!stack.empty()) {
    const Computation* c = stack.back();
    stack.pop_back();
    if (!seen.insert(c).second) continue;
    for (const auto& i : c->instructions()) {
      if (HasSideEffectNoRecurse(*i)) return true;
      for (const Computation* callee : i->called_computations()) stack.push_back(callee);
    }
  }
  return false;
}

bool IsNondeterministicOrEffectful(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
      return true;
    default:
      break;
  }
  if (HasSideEffect(instr)) return true;
  // Randomness inside called computations also counts.
  for (const Computation* c : instr.called_computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == Opcode::kRng || i->opcode() == Opcode::kRngBitGenerator) return true;
    }
  }
  return false;
}

absl::Status ReplaceAnchor(Instruction* anchor, Instruction* replacement, InstructionIndex* index) {
  anchor->ReplaceAllUsesWith(replacement);
  std::vector<Instruction*> operands = anchor->operands();
  if (index) index->Forget(anchor);
  if (!anchor->parent()->RemoveInstruction(anchor)) {
    return absl::InternalError(absl::StrCat("replaced instruction ", anchor->name(), " still used"));
  }
  for (Instruction* op : operands) RemoveDeadChain(op, index);
  return absl::OkStatus();
}

int64_t RemoveDeadChain(Instruction* instr, InstructionIndex* index) {
  int64_t removed = 0;
  // Control successors reference their predecessors; keep those rather than drop an ordering edge.
  std::unordered_set<const Instruction*> control_preds;
  if (instr->parent()) {
    for (const auto& other : instr->parent()->instructions()) {
      for (const Instruction* p : other->control_predecessors()) control_preds.insert(p);
    }
  }
  std::vector<Instruction*> work{instr};
  while (!work.empty()) {
    Instruction* i = work.back();
    work.pop_back();
    Computation* comp = i->parent();
    if (comp == nullptr || i->user_count() != 0 || i->IsRoot() ||
        i->opcode() == Opcode::kParameter || HasSideEffect(*i)) {
      continue;
    }
    if (control_preds.count(i)) continue;
    std::vector<Instruction*> ops = i->operands();
    if (index) index->Forget(i);
    if (!comp->RemoveInstruction(i)) continue;
    ++removed;
    for (Instruction* op : ops) {
      if (std::find(work.begin(), work.end(), op) == work.end()) work.push_back(op);
    }
  }
  return removed;
}

void SortComputation(Computation& computation) { computation.SortToPostOrder(); }

bool IsStaticArray(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.is_dynamic_dim(d)) return false;
  }
  return true;
}

std::unordered_set<const Instruction*> ControlDepInstructions(const Computation& computation) {
  std::unordered_set<const Instruction*> out;
  for (const auto& i : computation.instructions()) {
    if (i->control_predecessors().empty()) continue;
    out.insert(i.get());
    out.insert(i->control_predecessors().begin(), i->control_predecessors().end());
  }
  return out;
}

bool HasControlDeps(const Instruction& instr) {
  if (!instr.control_predecessors().empty()) return true;
  if (!instr.parent()) return false;
  for (const auto& other : instr.parent()->instructions()) {
    for (const Instruction* p : other->control_predecessors()) {
      if (p == &instr) return true;
    }
  }
  return false;
}

}  // namespace hlox
