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
std::unique_ptr<Pass> CreateOutputFusion();        // passes/fusion/: dot + elementwise epilogue
std::unique_ptr<Pass> CreateCodegenTuning();       // passes/fusion/: fused loops, dots, convolutions
std::unique_ptr<Pass> CreateScratchpadTiling();    // passes/fusion/: tiles for the scratchpad objective

// XLA's target-independent passes (passes/xla/, one file each, named after XLA's).
std::unique_ptr<Pass> CreateZeroSizedElimination();   // zero-sized-elim
std::unique_ptr<Pass> CreateOptBarrierExpander();     // opt-barrier-expander
std::unique_ptr<Pass> CreateLogisticExpander();       // logistic-expander
std::unique_ptr<Pass> CreateBroadcastCanonicalizer(); // broadcast-canonicalizer
std::unique_ptr<Pass> CreateOperandUpcaster();        // operand-upcaster
std::unique_ptr<Pass> CreateDotDimensionSorter();     // dot-dimension-sorter
std::unique_ptr<Pass> CreateConditionalSimplifier();  // conditional-simplifier
std::unique_ptr<Pass> CreateWhileLoopSimplifier();    // while-loop-simplifier
std::unique_ptr<Pass> CreateMapInliner();             // map-inliner
std::unique_ptr<Pass> CreateDotMerger();              // dot-merger
std::unique_ptr<Pass> CreateBatchNormExpander();      // batchnorm-expander
std::unique_ptr<Pass> CreateReshapeMover();           // reshape-mover
std::unique_ptr<Pass> CreateTransposeFolding();       // transpose-folding
std::unique_ptr<Pass> CreateSliceSinker();            // slice-sinker
std::unique_ptr<Pass> CreateConvertMover();           // convert-mover
std::unique_ptr<Pass> CreateSortSimplifier();         // sort-simplifier
std::unique_ptr<Pass> CreateWhileLoopConstantSinking();  // while-loop-constant-sinking
std::unique_ptr<Pass> CreateSimplifyFpConversions();  // simplify-fp-conversions
std::unique_ptr<Pass> CreateWhileLoopInvariantCodeMotion();  // while-loop-invariant-code-motion
std::unique_ptr<Pass> CreateFlattenCallGraph();       // flatten-call-graph
std::unique_ptr<Pass> CreateDotDecomposer();          // dot-decomposer
std::unique_ptr<Pass> CreateGatherSimplifier();       // gather-simplifier
std::unique_ptr<Pass> CreateTreeReductionRewriter();  // tree-reduction-rewriter
std::unique_ptr<Pass> CreateResultCaster();           // result-caster
std::unique_ptr<Pass> CreateDynamicIndexSplitter();   // dynamic-index-splitter
std::unique_ptr<Pass> CreateCustomCallExpander();     // custom-call-expander
std::unique_ptr<Pass> CreateLayoutAssignment();       // layout-assignment

}  // namespace hlox
