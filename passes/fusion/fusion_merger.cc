// FusionMerger: merges a kLoop fusion into all of its consumer fusions, one site per
// producer fusion ("merge:<fusion>"), choices {keep, merge}. The producer's body is inlined
// into each consumer (duplicated when there are several) and the producer is removed.
//
// Overlap rule: sites in computation post order, producers in reverse post order
// (consumers first); a producer that is gone or whose users are no longer all fusions is
// stale: skipped and reported.
#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace hlox {
namespace {

constexpr int64_t kMaxDefaultMergedSize = 128;

bool Mergeable(const Instruction& p) {
  if (p.opcode() != Opcode::kFusion || p.attrs().fusion_kind != FusionKind::kLoop) return false;
  if (!p.shape().IsArray() || p.IsRoot() || p.user_count() == 0) return false;
  if (p.called_computations().size() != 1 || !p.control_predecessors().empty()) return false;
  for (const Instruction* u : p.users()) {
    if (u->opcode() != Opcode::kFusion || !fusion::IsFusibleConsumer(*u)) return false;
  }
  return true;
}

bool HasExpensiveOp(const Instruction& fusion) {
  for (const auto& i : fusion.called_computations()[0]->instructions()) {
    if (fusion::IsExpensive(i->opcode())) return true;
  }
  return false;
}

// Most instructions the default policy duplicates in all (body size x extra consumers).
// Recomputing a long body in every consumer costs more than materializing it once, and
// repeated merges compound (a layer-norm backward ended up in six fusions).
constexpr int64_t kMaxDefaultDuplicated = 8;

// Merge when it duplicates no expensive work and little work at all, and keeps every
// consumer small.
bool DefaultMerge(const Instruction& p) {
  if (p.user_count() > 1 && HasExpensiveOp(p)) return false;
  int64_t size = fusion::FusedInstructionCount(p);
  if ((p.user_count() - 1) * size > kMaxDefaultDuplicated) return false;
  for (const Instruction* u : p.users()) {
    if (fusion::FusedInstructionCount(*u) + size > kMaxDefaultMergedSize) return false;
  }
  return true;
}

bool CalledAnywhere(const Module& module, const Computation* body) {
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      for (const Computation* callee : i->called_computations()) {
        if (callee == body) return true;
      }
    }
  }
  return false;
}

class FusionMerger : public Pass {
 public:
  std::string_view name() const override { return "fusion-merger"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      std::vector<Instruction*> order = comp->PostOrder();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Instruction& p = **it;
        if (!Mergeable(p)) continue;
        DecisionSite s;
        s.id = absl::StrCat("merge:", p.name());
        s.rule = "merge_fusion";
        s.instructions.push_back(p.name());
        for (const Instruction* u : p.users()) s.instructions.push_back(u->name());
        s.computation = comp->name();
        s.choices = {"keep", "merge"};
        s.default_choice = DefaultMerge(p) ? 1 : 0;
        s.features = {static_cast<float>(fusion::FusedInstructionCount(p)),
                      static_cast<float>(p.shape().ElementCount()),
                      static_cast<float>(p.shape().ByteSize()),
                      static_cast<float>(p.user_count()),
                      HasExpensiveOp(p) ? 1.f : 0.f};
        sites.push_back(std::move(s));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto rewrite = [&](const DecisionSite& site, fusion::NameIndex& by_name) -> fusion::RewriteResult {
      auto it = by_name.find(site.instructions.empty() ? "" : site.instructions[0]);
      if (it == by_name.end() || !Mergeable(*it->second)) return std::nullopt;
      Instruction* producer = it->second;
      Computation* comp = producer->parent();
      Computation* body = producer->called_computations()[0];
      std::vector<Instruction*> users = producer->users();
      std::vector<std::string> into;
      for (Instruction* u : users) {
        fusion::FuseInto(u, producer);
        into.push_back(u->name());
      }
      by_name.erase(producer->name());
      std::string pname = producer->name();
      comp->RemoveInstruction(producer);
      if (!CalledAnywhere(module, body)) module.RemoveComputation(body);
      return std::make_pair(absl::StrCat("merged ", pname, " into ", absl::StrJoin(into, ",")), comp);
    };
    return fusion::ApplyChosenSites(module, sites, decisions, rewrite);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateFusionMerger() { return std::make_unique<FusionMerger>(); }

}  // namespace hlox
