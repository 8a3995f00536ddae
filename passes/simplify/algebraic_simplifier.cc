// The algebraic simplifier pass: every (rule, instruction) match of the rule table is a
// decision site "simp:<rule>:<instruction>" with choices {keep, apply}.
//
// Order and overlap: sites are listed per computation (module text order, fusion computations
// skipped), per instruction in post order, per rule in table order, and applied in that order.
// A site is stale, skipped and reported, when its anchor or an instruction its pattern looked
// through was replaced by an earlier site of the same Apply, or its rule no longer matches.
//
// Dead code: the pass removes what it alone made dead (each replaced anchor, then operands
// left without users, never parameters or side-effecting ops, never instructions that were
// already dead before the pass); pre-existing dead code is left for DCE. Live anchors only:
// dead instructions are not offered as sites.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/status_macros.h"
#include "passes/passes.h"
#include "passes/simplify/rule.h"
#include "passes/simplify/simp_util.h"

namespace hlox {
namespace {

using simp::SimpRule;

bool IsLive(const Instruction& i) { return i.user_count() > 0 || i.IsRoot(); }

// Ops the pass may delete once unused: everything without side effects or called code.
bool Removable(const Instruction& i) {
  switch (i.opcode()) {
    case Opcode::kParameter: case Opcode::kRng: case Opcode::kRngGetAndUpdateState:
    case Opcode::kCustomCall: case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend:
    case Opcode::kSendDone: case Opcode::kRecv: case Opcode::kRecvDone: case Opcode::kAfterAll:
    case Opcode::kWhile: case Opcode::kCall: case Opcode::kConditional: case Opcode::kFusion:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllGather: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllToAll: case Opcode::kRaggedAllToAll: case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone: case Opcode::kCollectiveBroadcast: case Opcode::kReduceScatter:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kOptimizationBarrier: case Opcode::kAddDependency:
      return false;
    default:
      return true;
  }
}

class AlgebraicSimplifier : public Pass {
 public:
  std::string_view name() const override { return "simplify"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    const std::vector<SimpRule>& rules = simp::AllRules();
    std::vector<DecisionSite> sites;
    for (const auto& comp : module.computations()) {
      if (comp->is_fusion_computation()) continue;
      for (const Instruction* instr : comp->PostOrder()) {
        if (!IsLive(*instr) || !instr->control_predecessors().empty()) continue;
        for (size_t r = 0; r < rules.size(); ++r) {
          std::vector<const Instruction*> involved;
          if (!rules[r].match(*instr, &involved)) continue;
          DecisionSite s;
          s.id = absl::StrCat("simp:", std::string(rules[r].name), ":", instr->name());
          s.rule = std::string(rules[r].name);
          s.instructions.push_back(instr->name());
          for (const Instruction* i : involved) s.instructions.push_back(i->name());
          s.computation = comp->name();
          s.choices = {"keep", "apply"};
          s.default_choice = rules[r].exact ? 1 : 0;
          s.features = {static_cast<float>(r), static_cast<float>(instr->opcode()),
                        static_cast<float>(instr->shape().ElementCount())};
          sites.push_back(std::move(s));
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    HLOX_RETURN_IF_ERROR(ValidateDecisions(sites, decisions));
    std::unordered_map<std::string_view, const SimpRule*> rules;
    for (const SimpRule& r : simp::AllRules()) rules[r.name] = &r;
    // (computation, instruction name) -> instruction, and what was dead before we started.
    std::unordered_map<std::string, Instruction*> by_name;
    std::unordered_set<const Instruction*> dead_before;
    for (const auto& comp : module.computations()) {
      for (const auto& i : comp->instructions()) {
        by_name[absl::StrCat(comp->name(), "/", i->name())] = i.get();
        if (!IsLive(*i)) dead_before.insert(i.get());
      }
    }
    ApplyReport report;
    std::unordered_set<const Instruction*> replaced;
    std::vector<Instruction*> removal;
    std::unordered_set<Computation*> changed;
    for (size_t k = 0; k < sites.size(); ++k) {
      if (decisions[k] == 0) continue;
      const DecisionSite& site = sites[k];
      auto rule = rules.find(site.rule);
      if (rule == rules.end()) {
        return InvalidDecisionsError(absl::StrCat("site ", site.id, " names unknown rule ", site.rule));
      }
      bool stale = site.instructions.empty();
      std::vector<Instruction*> involved;
      for (const std::string& n : site.instructions) {
        auto it = by_name.find(absl::StrCat(site.computation, "/", n));
        if (it == by_name.end() || replaced.count(it->second)) {
          stale = true;
          break;
        }
        involved.push_back(it->second);
      }
      if (!stale && !rule->second->match(*involved[0], nullptr)) stale = true;
      if (stale) {
        report.stale.push_back(site.id);
        continue;
      }
      Instruction* anchor = involved[0];
      Instruction* rep = rule->second->apply(*anchor);
      if (rep == nullptr || rep == anchor) {
        report.stale.push_back(site.id);
        continue;
      }
      if (!simp::SameLayoutShape(rep->shape(), anchor->shape())) {
        if (!rep->shape().Compatible(anchor->shape())) {
          return absl::InternalError(absl::StrCat("simplifier rule ", site.rule, " built ",
                                                  rep->shape().ToString(), " for ",
                                                  anchor->shape().ToString(), " at ", anchor->name()));
        }
        rep = simp::AddNew(*anchor, Opcode::kCopy, anchor->shape(), {rep});
      }
      anchor->ReplaceAllUsesWith(rep);
      replaced.insert(anchor);
      removal.push_back(anchor);
      changed.insert(anchor->parent());
      ++report.applied;
      report.changes.push_back(absl::StrCat(site.id, ": ", anchor->name(), " -> ", rep->name()));
      log::passes().trace("simplify: {} -> {}", site.id, rep->name());
    }
    // Remove what this pass made dead (see the file comment).
    std::unordered_set<const Instruction*> removed;  // compared by address only, never read
    while (!removal.empty()) {
      Instruction* x = removal.back();
      removal.pop_back();
      if (removed.count(x) || IsLive(*x) || !Removable(*x) || dead_before.count(x)) continue;
      std::vector<Instruction*> ops = x->operands();
      if (!x->parent()->RemoveInstruction(x)) continue;
      removed.insert(x);
      for (Instruction* op : ops) {
        if (!removed.count(op) && !IsLive(*op)) removal.push_back(op);
      }
    }
    for (Computation* c : changed) c->SortToPostOrder();
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateAlgebraicSimplifier() { return std::make_unique<AlgebraicSimplifier>(); }

}  // namespace hlox
