// Structural helpers for passes and tools that move instructions between computations and
// modules: inlining a computation body at a call site, deep-copying a computation (with its
// callees) into another module, and extracting a computation as a standalone module.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/module.h"

namespace hlox {

// Clones `callee`'s instructions into `caller` (fresh unique names), parameters mapped to
// `args` (one per callee parameter). Returns the clone of callee's root. Called computations
// are shared, not copied. Requires args.size() == callee.parameter_count().
Instruction* InlineComputationBody(const Computation& callee, const std::vector<Instruction*>& args,
                                   Computation& caller);

using ComputationMap = std::unordered_map<const Computation*, Computation*>;
// Deep-copies `comp` and (first) everything it calls into `dst`, keeping names where free.
// `map` remembers copies so shared callees are copied once. Returns the copy of `comp`.
Computation* CopyComputationInto(const Computation& comp, Module& dst, ComputationMap& map);

// A new module named `name` whose entry is a copy of `comp` (and its callees). The entry's
// header signature is dropped so it is recomputed from the instructions.
std::unique_ptr<Module> ExtractComputation(const Computation& comp, const std::string& name);

}  // namespace hlox
