// HloEnv-style training data: standalone modules cut out of a bigger one. Each extracted
// module verifies on its own, so it can be optimized, run and timed like any input.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"

namespace hlox {

struct ExtractedModule {
  std::string name;                 // file stem, e.g. "fusion.3" or "subgraph_s7_2"
  std::string kind;                 // "fusion", "computation" or "subgraph"
  std::unique_ptr<Module> module;
};

// One module per fusion instruction's fused computation (its parameters stay parameters).
std::vector<ExtractedModule> ExtractFusions(const Module& module);
// One module per non-fusion called computation with at least `min_ops` non-parameter
// instructions (scalar reducers are skipped by the default).
std::vector<ExtractedModule> ExtractCalledComputations(const Module& module, int64_t min_ops = 4);
// `count` random connected subgraphs of the entry with up to `size` instructions each (no
// parameters, constants are copied, other outside operands become parameters; the root is a
// tuple of the values used outside). Deterministic in `seed`; duplicates are dropped.
std::vector<ExtractedModule> ExtractRandomSubgraphs(const Module& module, int count, uint64_t seed,
                                                    int size);

}  // namespace hlox
