// Factories for every pass hlox has. Each is implemented next to its pass; the pipeline
// registry (pipeline.cc) builds named pipelines from these.
#pragma once

#include <cstdint>
#include <memory>

#include "passes/pass.h"

namespace hlox {

std::unique_ptr<Pass> CreateDce();                 // passes/dce.cc
std::unique_ptr<Pass> CreateCse();                 // passes/cse.cc
// Folds instructions whose operands are all constants, up to `max_elements` result elements.
std::unique_ptr<Pass> CreateConstantFolding(int64_t max_elements = 1 << 14);
std::unique_ptr<Pass> CreateCallInliner();         // passes/inliner.cc
std::unique_ptr<Pass> CreateTupleSimplifier();     // passes/tuple_simplifier.cc
std::unique_ptr<Pass> CreateAlgebraicSimplifier(); // passes/simplify/
std::unique_ptr<Pass> CreateInstructionFusion();   // passes/fusion/: producer->consumer
std::unique_ptr<Pass> CreateSiblingFusion();       // passes/fusion/: multi-output
std::unique_ptr<Pass> CreateFusionMerger();        // passes/fusion/
std::unique_ptr<Pass> CreateCodegenTuning();       // passes/fusion/: block size / threads per fusion

}  // namespace hlox
