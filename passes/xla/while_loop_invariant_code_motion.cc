// while-loop-invariant-code-motion (XLA's WhileLoopInvariantCodeMotion): an instruction of a
// while body whose operands never change from one iteration to the next is computed once,
// before the loop, and carried into the body as one more element of the loop state.
//
// A loop-state element i is invariant when the body's root tuple passes gte(param, i) straight
// back; an instruction is invariant when it is such a get-tuple-element, a constant, or a pure
// instruction (no side effect, no randomness, no control edges, not control flow) whose operands
// are all invariant. Each invariant array-valued instruction of a body is a site {keep, apply}
// anchored at it, listed consumers first; applying clones it, with the invariant instructions
// it reads, in front of the loop, appends the clone to the loop's initial tuple and replaces the
// anchor by a new get-tuple-element of the body's parameter (what fed only the anchor goes, so
// the sites of its producers go stale; CSE merges a producer hoisted twice). The default follows XLA: it hoists everything but
// the ops XLA finds not worth hoisting on their own (constants, reshapes, bitcasts, broadcasts,
// iotas, reverses, slices, transposes, tuples: cheap, or bigger after than before); those move
// only along with a hoisted instruction that reads them.
//
// A hoisted fusion gets its own copy of its fused computation (the original goes when nothing
// calls it any more). Left alone: loops whose body or condition is called from anywhere else (flatten-call-graph
// gives each its own), whose body root is not a tuple, or whose parameters are used other than
// through get-tuple-element; loops in fusion bodies.
#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "passes/module_util.h"
#include "passes/passes.h"
#include "passes/site_util.h"

namespace hlox {
namespace {

// The parts of a while loop the pass reads, when the loop can be rewritten.
struct Loop {
  Instruction* instr = nullptr;
  Computation* cond = nullptr;
  Computation* body = nullptr;
};

int64_t CallCount(const Module& module, const Computation* c) {
  int64_t n = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) {
      n += std::count(i->called_computations().begin(), i->called_computations().end(), c);
    }
  }
  return n;
}

bool OnlyGteUsers(const Computation* c) {
  if (c->parameter_count() != 1) return false;
  for (const Instruction* u : c->parameter(0)->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
  }
  return c->root() != c->parameter(0);
}

// The rewritable loop whose body is `body`, if any.
std::optional<Loop> LoopOfBody(const Module& module, const Computation* body) {
  for (const auto& comp : module.computations()) {
    if (comp->is_fusion_computation()) continue;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() != Opcode::kWhile || i->called_computations().size() != 2 ||
          i->called_computations()[1] != body) {
        continue;
      }
      Loop loop{i.get(), i->called_computations()[0], i->called_computations()[1]};
      const Instruction* root = body->root();
      if (i->operand_count() != 1 || !i->shape().IsTuple() || i->operand(0)->shape() != i->shape() ||
          loop.cond == body || root == nullptr || root->opcode() != Opcode::kTuple ||
          root->operand_count() != i->shape().tuple_size() || !OnlyGteUsers(body) || !OnlyGteUsers(loop.cond) ||
          CallCount(module, body) != 1 || CallCount(module, loop.cond) != 1 || HasControlDeps(*i)) {
        return std::nullopt;
      }
      return loop;
    }
  }
  return std::nullopt;
}

bool IsStateGte(const Instruction& i, const Computation& body) {
  return i.opcode() == Opcode::kGetTupleElement && i.operand(0) == body.parameter(0);
}

// The body's invariant instructions (see the file comment).
std::unordered_set<const Instruction*> Invariants(const Loop& loop) {
  std::unordered_set<const Instruction*> inv;
  const Instruction* root = loop.body->root();
  const std::unordered_set<const Instruction*> ordered = ControlDepInstructions(*loop.body);
  for (const Instruction* i : loop.body->PostOrder()) {
    if (IsStateGte(*i, *loop.body)) {
      const Instruction* back = root->operand(i->tuple_index());
      if (IsStateGte(*back, *loop.body) && back->tuple_index() == i->tuple_index()) inv.insert(i);
      continue;
    }
    switch (i->opcode()) {
      case Opcode::kParameter:
      case Opcode::kWhile:
      case Opcode::kConditional:
      case Opcode::kCall:
      case Opcode::kCustomCall:
        continue;
      default:
        break;
    }
    if (i == root || ordered.count(i) || IsNondeterministicOrEffectful(*i)) continue;
    if (std::all_of(i->operands().begin(), i->operands().end(), [&](const Instruction* op) { return inv.count(op) > 0; })) {
      inv.insert(i);
    }
  }
  return inv;
}

// XLA's "not worth hoisting individually".
bool NotWorthHoistingAlone(Opcode op) {
  switch (op) {
    case Opcode::kConstant:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kTuple:
      return true;
    default:
      return false;
  }
}

bool IsSite(const Instruction& i, const Loop& loop, const std::unordered_set<const Instruction*>& inv) {
  return inv.count(&i) && !IsStateGte(i, *loop.body) && i.opcode() != Opcode::kConstant && i.shape().IsArray() &&
         i.user_count() > 0;
}

// A copy of `c` alone in `module` (what it calls stays shared).
Computation* CopyOnly(Module& module, Computation* c) {
  ComputationMap map;
  for (const auto& other : module.computations()) {
    if (other.get() != c) map[other.get()] = other.get();
  }
  return CopyComputationInto(*c, module, map);
}

void SetStateShape(Computation* c, const Shape& state, bool is_body) {
  c->parameter(0)->set_shape(state);
  if (!c->header_params().empty()) c->header_params()[0].second = state;
  if (is_body && c->header_result()) c->header_result() = state;
}

// Hoists `anchor` (and the invariant instructions it reads) out of `loop`. The computation
// holding the loop is left unsorted (the caller sorts it once, after its last hoist).
void Hoist(const Loop& loop, Instruction* anchor, InstructionIndex& index) {
  Computation* outer = loop.instr->parent();
  Computation* body = loop.body;
  Instruction* init = loop.instr->operand(0);
  const int64_t n = loop.instr->shape().tuple_size();
  auto add = [&](Computation* c, std::unique_ptr<Instruction> i) {
    Instruction* added = c->AddInstruction(std::move(i));
    index.Add(added);
    return added;
  };
  std::vector<Instruction*> state_in(n, nullptr);  // the loop's initial element i, outside
  auto outer_state = [&](int64_t k) {
    if (state_in[k] == nullptr) {
      if (init->opcode() == Opcode::kTuple) {
        state_in[k] = init->operand(k);
      } else {
        auto g = Instruction::Create(Opcode::kGetTupleElement, init->shape().tuple_shape(k), {init});
        g->attrs().tuple_index = k;
        state_in[k] = add(outer, std::move(g));
      }
    }
    return state_in[k];
  };
  // The anchor's invariant cone, operands first.
  std::vector<Instruction*> cone;
  std::unordered_set<const Instruction*> seen;
  std::function<void(Instruction*)> visit = [&](Instruction* i) {
    if (!seen.insert(i).second) return;
    if (!IsStateGte(*i, *body)) {
      for (Instruction* op : i->operands()) visit(op);
    }
    cone.push_back(i);
  };
  visit(anchor);
  std::unordered_map<const Instruction*, Instruction*> outside;
  std::vector<Computation*> fused_originals;  // fusion bodies the clones got copies of
  for (Instruction* i : cone) {
    if (IsStateGte(*i, *body)) {
      outside[i] = outer_state(i->tuple_index());
      continue;
    }
    std::vector<Instruction*> ops;
    for (Instruction* op : i->operands()) ops.push_back(outside.at(op));
    std::unique_ptr<Instruction> clone = i->CloneWithOperands(i->shape(), std::move(ops));
    clone->set_name(outer->parent()->UniqueName(i->name()));  // names must stay unique in `outer`
    if (i->opcode() == Opcode::kFusion) {  // a fusion body has one caller: the clone gets its own
      for (Computation*& fused : clone->mutable_called_computations()) {
        fused_originals.push_back(fused);
        fused = CopyOnly(*outer->parent(), fused);
      }
    }
    outside[i] = add(outer, std::move(clone));
  }
  Instruction* hoisted = outside.at(anchor);

  // The loop state grows by one element carrying the hoisted value.
  std::vector<Shape> elems = loop.instr->shape().tuple_shapes();
  elems.push_back(hoisted->shape());
  const Shape state = Shape::Tuple(elems);
  std::vector<Instruction*> init_ops;
  for (int64_t k = 0; k < n; ++k) init_ops.push_back(outer_state(k));
  init_ops.push_back(hoisted);
  Instruction* new_init = add(outer, Instruction::Create(Opcode::kTuple, state, init_ops));
  // Users that read the whole loop value keep seeing the old state.
  std::vector<Instruction*> whole_users;
  for (Instruction* u : loop.instr->users()) {
    if (u->opcode() != Opcode::kGetTupleElement) whole_users.push_back(u);
  }
  const bool was_root = loop.instr->IsRoot();
  const Shape old_state = loop.instr->shape();
  loop.instr->ReplaceOperand(0, new_init);
  loop.instr->set_shape(state);
  if (!whole_users.empty() || was_root) {
    std::vector<Instruction*> parts;
    for (int64_t k = 0; k < n; ++k) {
      auto g = Instruction::Create(Opcode::kGetTupleElement, old_state.tuple_shape(k), {loop.instr});
      g->attrs().tuple_index = k;
      parts.push_back(add(outer, std::move(g)));
    }
    Instruction* restore = add(outer, Instruction::Create(Opcode::kTuple, old_state, parts));
    for (Instruction* u : whole_users) u->ReplaceOperandEverywhere(loop.instr, restore);
    if (was_root) outer->set_root(restore);
  }
  RemoveDeadChain(init, &index);
  SetStateShape(loop.cond, state, false);
  SetStateShape(body, state, true);

  // Inside: the anchor becomes the new element, which the root passes back unchanged.
  auto g = Instruction::Create(Opcode::kGetTupleElement, hoisted->shape(), {body->parameter(0)});
  g->attrs().tuple_index = n;
  Instruction* carried = add(body, std::move(g));
  anchor->ReplaceAllUsesWith(carried);
  Instruction* old_root = body->root();
  std::vector<Instruction*> root_ops = old_root->operands();
  root_ops.push_back(carried);
  std::unique_ptr<Instruction> new_root = old_root->CloneWithOperands(state, root_ops);
  new_root->set_name("");
  body->set_root(add(body, std::move(new_root)));
  RemoveDeadChain(old_root, &index);
  RemoveDeadChain(anchor, &index);
  for (Computation* fused : fused_originals) {
    if (CallCount(*outer->parent(), fused) == 0) outer->parent()->RemoveComputation(fused);
  }
}

class WhileLoopInvariantCodeMotion : public Pass {
 public:
  std::string_view name() const override { return "while-loop-invariant-code-motion"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : module.PostOrderComputations()) {
      std::optional<Loop> loop = LoopOfBody(module, comp);
      if (!loop.has_value()) continue;
      const std::unordered_set<const Instruction*> inv = Invariants(*loop);
      // Consumers first: hoisting one takes the invariant instructions it reads along, so the
      // loop state grows by one value per hoisted frontier, not one per instruction.
      const std::vector<Instruction*> order = comp->PostOrder();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Instruction* i = *it;
        if (!IsSite(*i, *loop, inv)) continue;
        sites.push_back(MakeSite("invariant", *i, {}, {"keep", "apply"}, NotWorthHoistingAlone(i->opcode()) ? 0 : 1));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    // The loop of each body, looked up once: finding it scans the whole module, and a hoist
    // keeps every condition LoopOfBody checks (the same while instruction, one tuple-shaped
    // state, get-tuple-element users, one caller), so a body with a thousand sites would
    // otherwise rescan the module a thousand times.
    std::unordered_map<const Computation*, std::optional<Loop>> loops;
    std::unordered_set<Computation*> outers;  // computations that received hoisted code
    auto apply = [&module, &loops, &outers](const DecisionSite&, int, const std::vector<Instruction*>& instrs,
                                   InstructionIndex& index) -> absl::StatusOr<SiteOutcome> {
      Instruction* anchor = instrs[0];
      auto known = loops.find(anchor->parent());
      if (known == loops.end()) known = loops.emplace(anchor->parent(), LoopOfBody(module, anchor->parent())).first;
      const std::optional<Loop>& loop = known->second;
      if (!loop.has_value()) return SiteOutcome::kStale;
      const std::unordered_set<const Instruction*> inv = Invariants(*loop);
      if (!IsSite(*anchor, *loop, inv)) return SiteOutcome::kStale;
      Hoist(*loop, anchor, index);
      outers.insert(loop->instr->parent());
      return SiteOutcome::kApplied;
    };
    absl::StatusOr<ApplyReport> report = ApplySitesInOrder(module, sites, decisions, apply);
    for (Computation* outer : outers) SortComputation(*outer);
    return report;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateWhileLoopInvariantCodeMotion() {
  return std::make_unique<WhileLoopInvariantCodeMotion>();
}

}  // namespace hlox
