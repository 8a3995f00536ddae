// InstructionFusion: producer->consumer fusion as decisions. One site per fusible producer
// ("fuse:<producer>"), choices {keep, fuse}; "fuse" fuses the producer into every consumer
// (duplicating it when it has several), wrapping plain consumers into new kLoop/kInput fusions.
//
// Site order and overlap rule: computations in module post order; inside one, producers in
// reverse post order (consumers before producers, as XLA fuses). At Apply time each site is
// re-checked; a producer that is gone or no longer fusible (e.g. a consumer became a fusion
// kind that cannot take it, or it grew control dependencies) is stale: skipped and reported.
#include <algorithm>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "passes/fusion/fusion_util.h"
#include "passes/passes.h"

namespace hlox {
namespace {

// Largest fused body the default policy grows (instructions, parameters excluded).
constexpr int64_t kMaxDefaultFusionSize = 96;

bool AllUsersElementwise(const Instruction& instr) {
  for (const Instruction* u : instr.users()) {
    if (!u->IsElementwise()) return false;
  }
  return true;
}

// Producers the default policy duplicates into several consumers: ones that read at most one
// value per element and compute nothing. Duplicating computing producers compounds (their own
// producers are then fused into every copy), which made whole elementwise chains (e.g. a
// layer-norm backward) run once per consumer fusion.
bool CheapToDuplicate(const Instruction& producer) {
  switch (producer.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kReshape:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

// Plans the default decisions of one computation, consumers before producers (the site order),
// so each producer is judged by the consumers it will have when Apply reaches it, not by its
// users in the graph Apply starts from: once a producer's users are fused into their own
// consumers, fusing the producer copies it into every one of those (a gradient-clip select with
// one reshape user ended up in 48 fusions).
class DefaultPlanner {
 public:
  // The XLA-like heuristic, applied to the planned consumers: fuse producers with a single
  // consumer, duplicate only trivially cheap ones (CheapToDuplicate) into several; never grow a
  // consumer fusion past kMaxDefaultFusionSize. Records the choice for later producers.
  bool Decide(const Instruction& producer) {
    std::vector<const Instruction*> consumers;
    for (const Instruction* u : producer.users()) {
      for (const Instruction* t : TargetsOf(u)) {
        if (std::find(consumers.begin(), consumers.end(), t) == consumers.end()) consumers.push_back(t);
      }
    }
    if (consumers.size() > 1 && !CheapToDuplicate(producer)) return false;
    for (const Instruction* t : consumers) {
      int64_t size = t->opcode() == Opcode::kFusion ? fusion::FusedInstructionCount(*t) : 1;
      auto it = planned_.find(t);
      if (it != planned_.end()) size += it->second;
      if (size >= kMaxDefaultFusionSize) return false;
    }
    for (const Instruction* t : consumers) ++planned_[t];
    targets_[&producer] = std::move(consumers);
    return true;
  }

 private:
  // The instructions whose fusions will hold `instr`: itself unless it is planned to be fused.
  std::vector<const Instruction*> TargetsOf(const Instruction* instr) const {
    auto it = targets_.find(instr);
    return it == targets_.end() ? std::vector<const Instruction*>{instr} : it->second;
  }

  std::unordered_map<const Instruction*, std::vector<const Instruction*>> targets_;
  std::unordered_map<const Instruction*, int64_t> planned_;  // producers planned into each target
};

std::vector<float> Features(const Instruction& p) {
  int64_t fusion_users = 0;
  for (const Instruction* u : p.users()) fusion_users += u->opcode() == Opcode::kFusion;
  return {static_cast<float>(p.opcode()),
          static_cast<float>(p.shape().ElementCount()),
          static_cast<float>(p.shape().ByteSize()),
          static_cast<float>(p.user_count()),
          AllUsersElementwise(p) ? 1.f : 0.f,
          fusion::IsExpensive(p.opcode()) ? 1.f : 0.f,
          static_cast<float>(p.operand_count()),
          static_cast<float>(p.shape().rank()),
          static_cast<float>(fusion_users)};
}

class InstructionFusion : public Pass {
 public:
  std::string_view name() const override { return "instruction-fusion"; }

  absl::StatusOr<std::vector<DecisionSite>> FindSites(const Module& module) override {
    std::vector<DecisionSite> sites;
    for (Computation* comp : fusion::FusibleComputations(module)) {
      DefaultPlanner planner;
      std::vector<Instruction*> order = comp->PostOrder();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Instruction& p = **it;
        if (!fusion::IsFusibleProducer(p)) continue;
        DecisionSite s;
        s.id = absl::StrCat("fuse:", p.name());
        s.rule = "fuse_producer";
        s.instructions.push_back(p.name());
        for (const Instruction* u : p.users()) s.instructions.push_back(u->name());
        s.computation = comp->name();
        s.choices = {"keep", "fuse"};
        s.default_choice = planner.Decide(p) ? 1 : 0;
        s.features = Features(p);
        sites.push_back(std::move(s));
      }
    }
    return sites;
  }

  absl::StatusOr<ApplyReport> Apply(Module& module, const std::vector<DecisionSite>& sites,
                                    const DecisionVector& decisions) override {
    auto rewrite = [](const DecisionSite& site, fusion::NameIndex& by_name) -> fusion::RewriteResult {
      auto it = by_name.find(site.instructions.empty() ? "" : site.instructions[0]);
      if (it == by_name.end() || !fusion::IsFusibleProducer(*it->second)) return std::nullopt;
      Instruction* producer = it->second;
      Computation* comp = producer->parent();
      std::vector<Instruction*> users = producer->users();
      std::vector<std::string> into;
      for (Instruction* u : users) {
        Instruction* consumer = fusion::ConsumerFusion(u, by_name);
        fusion::FuseInto(consumer, producer);
        into.push_back(consumer->name());
      }
      by_name.erase(producer->name());
      std::string pname = producer->name();
      comp->RemoveInstruction(producer);
      return std::make_pair(absl::StrCat("fused ", pname, " into ", absl::StrJoin(into, ",")), comp);
    };
    return fusion::ApplyChosenSites(module, sites, decisions, rewrite);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateInstructionFusion() { return std::make_unique<InstructionFusion>(); }

}  // namespace hlox
