// ScratchpadTiling: how each kernel with reuse to plan is tiled on a scratchpad accelerator, as
// decisions for the scratchpad traffic objective (cost/scratchpad.h, cost/loop_nest.h). One site
// "sp:<kernel>" per dot, convolution, reduce and reduce-window, and per fusion holding one of
// them or a transpose, in the computations fusion runs on: choices keep (the native tiling)
// and, per loop order, tiles filling the scratchpad or an eighth of it with one step's data:
//   out_l, out_s   output-stationary: the reduction loops innermost;
//   in0_l, in0_s   operand 0's tile stays: the loops it does not use innermost;
//   in1_l, in1_s   the same for operand 1 (a kernel without one takes the out order).
// And one site "stage:<kernel>" per kernel that reads the result of the kernel just before it in
// the schedule: split (keep) or join, run interleaved with that kernel over a loop they share, a
// few rows at a time, so that the rows one writes and the other reads never leave the
// scratchpad (cost/scratchpad_internal.h PlanStageGroups says when a join takes effect).
// A choice writes backend_config "hlox_sp_tiling" or "hlox_sp_stage"; the CPU runtime reads
// neither, so they never change what or how the module runs on the CPU: they are the scratchpad
// objective's decisions.
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/alias_ops.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace hlox {
namespace {

const std::vector<std::string> kChoices = {"keep", "out_l", "out_s", "in0_l", "in0_s", "in1_l", "in1_s"};
const std::vector<std::string> kKey = {"\"hlox_sp_tiling\":\""};
const std::vector<std::string> kStageChoices = {"split", "join"};
const std::vector<std::string> kStageKey = {"\"hlox_sp_stage\":\""};

// Kernels a join can stage: not control flow, and none of the ops the traffic model reads as
// opaque bytes (no loop to share). A custom call's backend_config belongs to its target.
bool Stageable(Opcode op) {
  switch (op) {
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator: return false;
    default: return true;
  }
}

// Whether `instr` reads `kernel`'s result, directly or through ops that only forward values.
bool ReadsResultOf(const Instruction& instr, const Instruction* kernel, int depth = 0) {
  for (const Instruction* op : instr.operands()) {
    if (op == kernel) return true;
    if (depth < 8 && IsAliasInstruction(*op) && ReadsResultOf(*op, kernel, depth + 1)) return true;
  }
  return false;
}

// The kernels (instructions that are not alias ops) that can join the kernel before them: they
// read its result, and both are stageable.
std::vector<Instruction*> StageCandidates(const Computation& comp) {
  std::vector<Instruction*> out;
  const Instruction* prev = nullptr;
  for (Instruction* i : comp.PostOrder()) {
    if (IsAliasInstruction(*i)) continue;
    if (prev != nullptr && Stageable(i->opcode()) && Stageable(prev->opcode()) && ReadsResultOf(*i, prev)) {
      out.push_back(i);
    }
    prev = i;
  }
  return out;
}

bool Planned(Opcode op) {
  return op == Opcode::kDot || op == Opcode::kConvolution || op == Opcode::kReduce || op == Opcode::kReduceWindow;
}

// Whether the kernel has reuse for a tiling to plan (an op over several loops that touches a
// tensor along a subset of them, or in another order).
bool Tiled(const Instruction& i) {
  if (Planned(i.opcode())) return true;
  if (i.opcode() != Opcode::kFusion || i.called_computations().size() != 1) return false;
  for (const Instruction* f : i.called_computations()[0]->PostOrder()) {
    if (Planned(f->opcode()) || f->opcode() == Opcode::kTranspose) return true;
  }
  return false;
}

// A site on kernel `i`; features: opcode, result bytes, operand bytes, operand count.
DecisionSite KernelSite(const Instruction& i, const Computation& comp, const char* prefix, const char* rule,
                        const std::vector<std::string>& choices) {
  DecisionSite s;
  s.id = absl::StrCat(prefix, i.name());
  s.rule = rule;
  s.instructions = {i.name()};
  s.computation = comp.name();
  s.choices = choices;
  s.default_choice = 0;
  int64_t operand_bytes = 0;
  for (const Instruction* op : i.operands()) operand_bytes += op->shape().ByteSize();
  s.features = {static_cast<float>(i.opcode()), static_cast<float>(i.shape().ByteSize()),
                static_cast<float>(operand_bytes), static_cast<float>(i.operand_count())};
  return s;
}

class ScratchpadTiling : public Pass {
 public:
  std::string_view name() const override { return "scratchpad-tiling"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (Instruction* i : comp->PostOrder()) {
        if (Tiled(*i)) sites.push_back(KernelSite(*i, *comp, "sp:", "sp_tiling", kChoices));
      }
      for (Instruction* i : StageCandidates(*comp)) {
        sites.push_back(KernelSite(*i, *comp, "stage:", "sp_stage", kStageChoices));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    return fusion::ApplyChosenSites(
        module, sites, decisions, [&](const DecisionSite& site, fusion::NameIndex& by_name) -> fusion::RewriteResult {
          auto it = by_name.find(site.instructions.empty() ? "" : site.instructions[0]);
          const bool stage = site.rule == "sp_stage";
          if (it == by_name.end() || (!stage && !Tiled(*it->second))) return std::nullopt;
          const std::string& choice = site.choices[decisions[&site - sites.data()]];
          const std::vector<std::string>& key = stage ? kStageKey : kKey;
          fusion::SetBackendConfigKeys(*it->second, absl::StrCat(key[0], choice, "\""), key);
          return std::make_pair(absl::StrCat(stage ? "scratchpad staging of " : "scratchpad tiling of ",
                                             it->second->name(), ": ", choice),
                                it->second->parent());
        });
  }
};

}  // namespace

std::unique_ptr<Pass> CreateScratchpadTiling() { return std::make_unique<ScratchpadTiling>(); }

}  // namespace hlox
