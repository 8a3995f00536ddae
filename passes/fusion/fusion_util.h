// Shared machinery of the fusion passes: which instructions may be fused, wrapping an
// instruction into a fresh fusion, and fusing a producer (a plain instruction or a whole
// fusion) into a consumer fusion. Fused computations are named fused_computation*, flagged
// with set_is_fusion_computation(true), and have parameters param_<k> in operand order.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace hlox::fusion {

// Opcodes that are costly per element (transcendentals, divide): duplicating them into
// several consumers repeats that cost, so the default policies avoid it.
bool IsExpensive(Opcode op);
// True when `instr` may be fused into its consumers by InstructionFusion (array-shaped
// elementwise/data-movement op, scalar constant, iota, ...; no control dependencies).
bool IsFusibleProducer(const Instruction& instr);
// True when `instr` may receive a fused producer: a kLoop/kInput fusion, or an op that can be
// the root of a new loop/input fusion (elementwise, data movement, single-output reduce).
bool IsFusibleConsumer(const Instruction& instr);
// Computations the fusion passes work on: not fusion bodies and not reducers/comparators
// (to_apply of reduce, map, sort, scatter, ...). Deterministic (module post order).
std::vector<Computation*> FusibleComputations(const Module& module);
// Instructions of the fusible computations by name (how Apply finds each site's anchor).
std::unordered_map<std::string, Instruction*> InstructionsByName(const Module& module);
// Instructions that appear as control predecessors in `comp` (never fused).
std::unordered_set<const Instruction*> ControlPredecessors(const Computation& comp);

// Replaces `instr` by a fusion instruction whose fused computation holds a copy of it.
// Returns the fusion. `instr` is deleted.
Instruction* WrapInFusion(Instruction* instr);
// Fuses `producer` (a plain instruction, or a fusion whose body is inlined) into the consumer
// `fusion`, replacing every operand slot of `fusion` that reads `producer`. The producer is
// left in place (the caller removes it once it has no users).
void FuseInto(Instruction* fusion, Instruction* producer);
// Sets the fusion kind from the fused root (kInput when a reduce is a root output).
void UpdateFusionKind(Instruction* fusion);
// Instructions of the fused computation excluding parameters.
int64_t FusedInstructionCount(const Instruction& fusion);
// True if `to` is reachable from `from` through operand->user edges (from != to).
bool Reaches(const Instruction* from, const Instruction* to);

using NameIndex = std::unordered_map<std::string, Instruction*>;
// `consumer` itself when it is a fusion, else a fresh fusion wrapping it (WrapInFusion), with
// `by_name` updated: what a producer is fused into.
Instruction* ConsumerFusion(Instruction* consumer, NameIndex& by_name);
// One chosen site's rewrite: looks its instructions up in (and keeps up to date) the name
// index, rewrites, and returns the change's description and the computation it touched; or
// nullopt when the site went stale (an earlier choice removed or changed its instructions).
using RewriteResult = std::optional<std::pair<std::string, Computation*>>;
using SiteRewrite = std::function<RewriteResult(const DecisionSite& site, NameIndex& by_name)>;
// The Apply loop the fusion passes share: validates `decisions`, runs `rewrite` on each site
// whose choice is not 0 in site order, reports stale sites, and re-sorts every touched
// computation to post order.
absl::StatusOr<ApplyReport> ApplyChosenSites(Module& module, const std::vector<DecisionSite>& sites,
                                             const DecisionVector& decisions, const SiteRewrite& rewrite);

// Writes JSON keys ("\"k\":v,...") into `instr`'s backend_config (kept: whatever else is there,
// XLA's keys included), first removing each key that starts one of `replaced` ("\"hlox_block\":"),
// so re-tuning does not stack them.
void SetBackendConfigKeys(Instruction& instr, const std::string& keys, const std::vector<std::string>& replaced);

}  // namespace hlox::fusion
