// SiblingFusion (multi-output fusion): two consumers of a shared operand (kLoop/kInput
// fusions or plain elementwise ops) with equal output dimensions become one fusion with a
// tuple root; their users read get-tuple-element. One site per candidate pair
// ("sibling:<a>+<b>"), choices {keep, fuse}. Candidates: for each operand, consecutive pairs
// of its eligible users (at most kMaxPairsPerOperand), neither reachable from the other.
//
// Overlap rule: sites are applied in order; a pair whose member was already merged away by an
// earlier site, or that became dependent, is stale: skipped and reported.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace hlox {
namespace {

constexpr int kMaxPairsPerOperand = 4;
constexpr int64_t kMaxDefaultSize = 64;
constexpr int64_t kMinDefaultSharedBytes = 1024;

bool SiblingEligible(const Instruction& i) {
  if (!i.shape().IsArray() || !fusion::IsFusibleConsumer(i)) return false;
  if (i.opcode() == Opcode::kFusion) return i.attrs().fusion_kind == FusionKind::kLoop;
  return i.IsElementwise();
}

int64_t BodySize(const Instruction& i) {
  return i.opcode() == Opcode::kFusion ? fusion::FusedInstructionCount(i) : 1;
}

bool PairOk(const Instruction& a, const Instruction& b) {
  return &a != &b && a.parent() == b.parent() && SiblingEligible(a) && SiblingEligible(b) &&
         a.shape().SameDimensions(b.shape()) && !fusion::Reaches(&a, &b) &&
         !fusion::Reaches(&b, &a);
}

int64_t SharedBytes(const Instruction& a, const Instruction& b) {
  int64_t bytes = 0;
  std::set<const Instruction*> seen;
  for (const Instruction* x : a.operands()) {
    if (seen.insert(x).second &&
        std::find(b.operands().begin(), b.operands().end(), x) != b.operands().end()) {
      bytes += x->shape().ByteSize();
    }
  }
  return bytes;
}

// Redirects every use of `old_instr` except by `keep_user` (and the root) to `replacement`.
void RedirectUses(Instruction* old_instr, Instruction* replacement, Instruction* keep_user) {
  std::vector<Instruction*> users = old_instr->users();
  for (Instruction* u : users) {
    if (u != keep_user && u != replacement) u->ReplaceOperandEverywhere(old_instr, replacement);
  }
  if (old_instr->IsRoot()) old_instr->parent()->set_root(replacement);
}

class SiblingFusion : public Pass {
 public:
  std::string_view name() const override { return "sibling-fusion"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    std::set<std::pair<const Instruction*, const Instruction*>> seen;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      for (Instruction* x : comp->PostOrder()) {
        std::vector<const Instruction*> cands;
        for (const Instruction* u : x->users()) {
          if (SiblingEligible(*u)) cands.push_back(u);
        }
        int pairs = 0;
        for (size_t i = 0; i + 1 < cands.size() && pairs < kMaxPairsPerOperand; ++i) {
          const Instruction* a = cands[i];
          const Instruction* b = cands[i + 1];
          if (!PairOk(*a, *b) || !seen.insert({a, b}).second) continue;
          ++pairs;
          DecisionSite s;
          s.id = absl::StrCat("sibling:", a->name(), "+", b->name());
          s.rule = "sibling_fusion";
          s.instructions = {a->name(), b->name(), x->name()};
          s.computation = comp->name();
          s.choices = {"keep", "fuse"};
          int64_t size = BodySize(*a) + BodySize(*b);
          int64_t shared = SharedBytes(*a, *b);
          s.default_choice = size <= kMaxDefaultSize && shared >= kMinDefaultSharedBytes ? 1 : 0;
          s.features = {static_cast<float>(size), static_cast<float>(shared),
                        static_cast<float>(a->shape().ElementCount()),
                        a->opcode() == Opcode::kFusion ? 1.f : 0.f,
                        b->opcode() == Opcode::kFusion ? 1.f : 0.f};
          sites.push_back(std::move(s));
        }
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto rewrite = [&](const DecisionSite& site, fusion::NameIndex& by_name) -> fusion::RewriteResult {
      Instruction* a = nullptr;
      Instruction* b = nullptr;
      if (site.instructions.size() >= 2) {
        auto ia = by_name.find(site.instructions[0]);
        auto ib = by_name.find(site.instructions[1]);
        if (ia != by_name.end() && ib != by_name.end()) { a = ia->second; b = ib->second; }
      }
      if (!a || !b || !PairOk(*a, *b)) return std::nullopt;
      Computation* comp = a->parent();
      std::string an = a->name(), bn = b->name();
      by_name.erase(an);
      by_name.erase(bn);
      auto t = Instruction::Create(Opcode::kTuple, Shape::Tuple({a->shape(), b->shape()}), {a, b});
      Instruction* tuple = comp->AddInstruction(std::move(t));
      Instruction* f = fusion::WrapInFusion(tuple);
      for (int64_t k = 0; k < 2; ++k) {
        Instruction* member = k == 0 ? a : b;
        auto g = Instruction::Create(Opcode::kGetTupleElement, member->shape(), {f});
        g->attrs().tuple_index = k;
        Instruction* gte = comp->AddInstruction(std::move(g));
        RedirectUses(member, gte, f);
        Computation* old_body =
            member->opcode() == Opcode::kFusion ? member->called_computations()[0] : nullptr;
        fusion::FuseInto(f, member);
        comp->RemoveInstruction(member);
        if (old_body) module.RemoveComputation(old_body);
      }
      fusion::UpdateFusionKind(f);
      by_name[f->name()] = f;
      return std::make_pair(absl::StrCat("sibling-fused ", an, " and ", bn, " into ", f->name()), comp);
    };
    return fusion::ApplyChosenSites(module, sites, decisions, rewrite);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateSiblingFusion() { return std::make_unique<SiblingFusion>(); }

}  // namespace hlox
