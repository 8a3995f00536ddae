// while-loop-constant-sinking (XLA's WhileLoopConstantSinking): a loop-carried value that enters
// the loop as a constant and that the body passes through unchanged is that constant on every
// iteration; the body's and the condition's reads of it (get-tuple-element of the parameter)
// become a copy of the constant inside them. Constants inside the loop can then fold with what
// reads them (a trip-count bound, a scale factor), and the tuple slot can later go dead.
//   init = (s32[], f32[8]) tuple(i0, constant c)
//   body: ... get-tuple-element(p), index=1 ...; ROOT tuple(..., get-tuple-element(p), index=1)
//     -> body: ... constant c ...              ; the root still passes the slot through
// The body root's own pass-through read stays (it is what makes the slot invariant), as in XLA.
//
// Sites: one per (while, tuple index), id `sink_constant@<comp>/<while>#<index>`, listing the
// while and the constant; {keep, apply}; default apply, as XLA. Left alone: loops whose body or
// condition is called from anywhere else (rewriting it would change the other caller), elided
// constants (their seeded values depend on where they are), non-array slots.
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

Computation* Condition(const Instruction& w) { return w.called_computations()[0]; }
Computation* Body(const Instruction& w) { return w.called_computations()[1]; }

// How many instructions of `module` call each computation.
std::map<const Computation*, int> CallerCounts(const Module& module) {
  std::map<const Computation*, int> n;
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) {
      for (const Computation* c : i->called_computations()) ++n[c];
    }
  }
  return n;
}

// The reads of slot `k` of computation `c`'s parameter, except uses by `keep` (the body root's
// pass-through; nullptr for the condition).
std::vector<Instruction*> SlotReads(const Computation& c, int64_t k, const Instruction* keep) {
  std::vector<Instruction*> reads;
  if (c.parameter_count() != 1) return reads;
  for (Instruction* u : c.parameter(0)->users()) {
    if (u->opcode() != Opcode::kGetTupleElement || u->tuple_index() != k) continue;
    for (Instruction* r : u->users()) {
      if (r != keep) {
        reads.push_back(u);
        break;
      }
    }
  }
  return reads;
}

// True when slot `k` of while `w` is a sinkable constant with reads to replace.
bool Sinkable(const Instruction& w, int64_t k, const std::map<const Computation*, int>& callers) {
  if (w.opcode() != Opcode::kWhile || w.operand_count() != 1 || w.called_computations().size() != 2 ||
      HasControlDeps(w)) {
    return false;
  }
  const Instruction& init = *w.operand(0);
  if (init.opcode() != Opcode::kTuple || k >= init.operand_count()) return false;
  const Instruction& c = *init.operand(k);
  if (c.opcode() != Opcode::kConstant || !c.has_literal() || c.literal().elided() || !c.shape().IsArray()) {
    return false;
  }
  Computation* body = Body(w);
  Computation* cond = Condition(w);
  if (callers.at(body) != 1 || callers.at(cond) != 1 || body == cond) return false;
  const Instruction* root = body->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple || k >= root->operand_count() ||
      body->parameter_count() != 1) {
    return false;
  }
  const Instruction& through = *root->operand(k);
  if (through.opcode() != Opcode::kGetTupleElement || through.tuple_index() != k ||
      through.operand(0) != body->parameter(0)) {
    return false;
  }
  return !SlotReads(*body, k, root).empty() || !SlotReads(*cond, k, nullptr).empty();
}

// Replaces the non-pass-through reads of slot `k` in `c` by a copy of `constant`.
void SinkInto(Computation& c, int64_t k, const Instruction* keep, const Instruction& constant,
              InstructionIndex& index) {
  std::vector<Instruction*> reads = SlotReads(c, k, keep);
  if (reads.empty()) return;
  Instruction* copy = c.AddInstruction(Instruction::CreateConstant(constant.literal()));
  copy->set_shape(constant.shape());
  index.Add(copy);
  for (Instruction* gte : reads) {
    std::vector<Instruction*> users = gte->users();
    for (Instruction* u : users) {
      if (u != keep) u->ReplaceOperandEverywhere(gte, copy);
    }
    RemoveDeadChain(gte, &index);
  }
  SortComputation(c);
}

int64_t IndexFromId(const std::string& id) {
  const size_t hash = id.rfind('#');
  int64_t k = -1;
  if (hash == std::string::npos || !absl::SimpleAtoi(id.substr(hash + 1), &k)) return -1;
  return k;
}

class WhileLoopConstantSinking : public Pass {
 public:
  std::string_view name() const override { return "while-loop-constant-sinking"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    const std::map<const Computation*, int> callers = CallerCounts(module);
    for (Computation* comp : module.PostOrderComputations()) {
      if (comp->is_fusion_computation()) continue;
      for (const Instruction* w : comp->PostOrder()) {
        if (w->opcode() != Opcode::kWhile || w->operand_count() != 1) continue;
        for (int64_t k = 0; k < w->operand(0)->operand_count(); ++k) {
          if (!Sinkable(*w, k, callers)) continue;
          DecisionSite s = MakeSite("sink_constant", *w, {w->operand(0)->operand(k)});
          s.id = absl::StrCat(s.id, "#", k);
          sites.push_back(std::move(s));
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto apply = [&module](const DecisionSite& site, int, const std::vector<Instruction*>& instrs,
                           InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* w = instrs[0];
      const int64_t k = IndexFromId(site.id);
      if (k < 0 || !Sinkable(*w, k, CallerCounts(module)) || w->operand(0)->operand(k) != instrs[1]) {
        return SiteOutcome::kStale;
      }
      SinkInto(*Body(*w), k, Body(*w)->root(), *instrs[1], index);
      SinkInto(*Condition(*w), k, nullptr, *instrs[1], index);
      return SiteOutcome::kApplied;
    };
    return ApplySitesInOrder(module, sites, decisions, apply);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateWhileLoopConstantSinking() { return std::make_unique<WhileLoopConstantSinking>(); }

}  // namespace hlox
