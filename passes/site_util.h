// Shared helpers for decision-exposing passes: stable site ids, default site features, a
// name index to find a site's instructions again at apply time, the in-order apply loop with
// stale-site detection, side-effect queries and dead-instruction removal. Every pass in
// passes/ (and simplify/, fusion/) can build on these so all passes resolve overlaps the same
// way (docs/DECISIONS.md, "Overlap and stale sites").
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox {

// "<rule>@<computation>/<anchor name>": stable for the same module text.
std::string SiteId(std::string_view rule, const Instruction& anchor);

// A site anchored at `anchor` (listed first) involving `others`. Choices default to
// {"keep", "apply"} with "apply" as the default policy; features are BasicSiteFeatures().
DecisionSite MakeSite(std::string_view rule, const Instruction& anchor,
                      const std::vector<const Instruction*>& others = {},
                      std::vector<std::string> choices = {"keep", "apply"}, int default_choice = 1);

// Numeric features of an anchor: opcode id, rank, element count, bytes, operand count, user
// count, is-root. Fixed length kBasicSiteFeatureCount.
inline constexpr int kBasicSiteFeatureCount = 7;
std::vector<float> BasicSiteFeatures(const Instruction& anchor);

// Finds instructions by (computation name, instruction name). Pointers go stale when the
// module changes: call Forget() for each removed instruction (RemoveDeadChain does) or Rebuild().
class InstructionIndex {
 public:
  explicit InstructionIndex(Module& module) : module_(module) { Rebuild(); }
  void Rebuild();
  // The instruction, or nullptr if it no longer exists.
  Instruction* Find(std::string_view computation, std::string_view name) const;
  // All of a site's instructions (in site order), or nullopt if any is gone.
  std::optional<std::vector<Instruction*>> Resolve(const DecisionSite& site) const;
  void Add(Instruction* instr);
  void Forget(const Instruction* instr);
  Module& module() const { return module_; }

 private:
  Module& module_;
  std::map<std::pair<std::string, std::string>, Instruction*, std::less<>> map_;
};

// What an applier did with one site.
enum class SiteOutcome { kApplied, kStale };

// Applies one site's non-keep `choice`. `instrs` are the site's resolved instructions. Returns
// kStale when the rewrite no longer holds (the site is then skipped and reported).
using SiteApplier = std::function<absl::StatusOr<SiteOutcome>(
    const DecisionSite& site, int choice, const std::vector<Instruction*>& instrs,
    InstructionIndex& index)>;

// Validates `decisions` against `sites` (INVALID_DECISIONS on mismatch), then applies each
// non-keep site in order: a site whose instructions are gone is stale; otherwise `apply` runs.
// Computations named by applied sites are re-sorted to post order at the end.
absl::StatusOr<ApplyReport> ApplySitesInOrder(Module& module, const std::vector<DecisionSite>& sites,
                                              const DecisionVector& decisions, const SiteApplier& apply);

// Ops whose execution is observable besides their result (send/recv, infeed/outfeed,
// collectives, rng state, custom calls marked custom_call_has_side_effect=true).
bool HasSideEffectNoRecurse(const Instruction& instr);
// Also true when a called computation (transitively) holds a side-effecting op.
bool HasSideEffect(const Instruction& instr);
// True when `instr` has control predecessors or is one (a rewrite that replaces it would drop
// the ordering edge).
bool HasControlDeps(const Instruction& instr);
// The instructions of `computation` that HasControlDeps holds for, found in one scan: a loop
// over a computation's instructions asks this once instead of HasControlDeps per instruction
// (each call scans the whole computation for successors).
std::unordered_set<const Instruction*> ControlDepInstructions(const Computation& computation);
// An array with no dynamic dimension (any layout), what shape-moving rewrites can reason about.
bool IsStaticArray(const Shape& shape);
// Ops that must not be duplicated or merged: side effects plus random number generation.
bool IsNondeterministicOrEffectful(const Instruction& instr);

// Removes `instr` if it is dead (no users, not root, not a parameter, no side effect), then
// every operand that became dead, transitively. Keeps `index` (if given) in sync. Returns the
// number of instructions removed.
int64_t RemoveDeadChain(Instruction* instr, InstructionIndex* index);

// Redirects every use of `anchor` to `replacement`, removes the anchor (even when it counts as
// having an effect: it is replaced, not dropped) and then whatever fed only it
// (RemoveDeadChain). Internal error if the anchor is still used (the root of another
// computation's call, say).
absl::Status ReplaceAnchor(Instruction* anchor, Instruction* replacement, InstructionIndex* index);

// Re-sorts a computation to post order (def before use) so printing stays valid after rewrites.
void SortComputation(Computation& computation);

}  // namespace hlox
