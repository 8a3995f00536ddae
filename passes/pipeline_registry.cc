// The built-in pipelines and the pass labels steps use. The default pipeline follows XLA's CPU
// pipeline: expanders, simplification to a fixpoint (capped), transpose folding, then fusion.
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "passes/pass_order.h"
#include "passes/passes.h"
#include "passes/pipeline.h"

namespace hlox {
namespace {

constexpr int kFixpointCap = 8;

PipelineStage Seq(std::vector<PipelineStep> steps) { return PipelineStage{std::move(steps), 1}; }

PipelineStage SimplifyFixpoint() {
  return PipelineStage{{{"simplify"}, {"cse"}, {"constant-fold"}, {"tuple-simplify"}, {"dce"}}, kFixpointCap};
}

PipelineStage FusionStage(bool fuse_all, bool scratchpad = false) {
  std::vector<PipelineStep> steps = {{"fusion", fuse_all}, {"sibling-fusion"}, {"fusion-merger"},
                                     {"output-fusion"}, {"codegen"}, {"dce"}};
  if (scratchpad) steps.push_back({"scratchpad-tiling"});
  return Seq(std::move(steps));
}

// The default pipeline: XLA's CPU pipeline (cpu_compiler.cc: the passes through layout
// assignment, then fusion) with the hlox pass of each XLA pass that has one, in XLA's order:
// expanders and canonicalizers once, the simplification group to a fixpoint, transpose folding
// and clean-ups, then the fusion stage. layout-assignment (XLA runs it after simplification)
// comes before the fixpoint here, which then removes the transposes its choices make cancel.
// Left out, measured: tree-reduction-rewriter (XLA runs it in the fixpoint; splitting long
// reductions made gh_bert_fwd_bwd_tp1 3x slower on hlox's reduce kernels, docs/MEASUREMENTS.md
// "The default pipeline in XLA's order").
std::vector<PipelineStage> DefaultStages(bool fuse_all, bool fusion = true, bool scratchpad = false) {
  std::vector<PipelineStage> stages = {
      Seq({{"operand-upcaster"}, {"result-caster"}, {"zero-sized-elim"}, {"dynamic-index-splitter"},
           {"map-inliner"}, {"inline"}, {"dot-decomposer"}, {"batchnorm-expander"}, {"logistic-expander"},
           {"layout-assignment"}}),
      PipelineStage{{{"simplify"}, {"sort-simplifier"}, {"dce"}, {"gather-simplifier"}, {"zero-sized-elim"},
                     {"while-loop-invariant-code-motion"}, {"tuple-simplify"}, {"while-loop-constant-sinking"},
                     {"while-loop-simplifier"}, {"dce"}, {"reshape-mover"}, {"constant-fold"},
                     {"conditional-simplifier"}, {"cse"}},
                    kFixpointCap},
      Seq({{"transpose-folding"}, {"cse"}, {"opt-barrier-expander"}, {"tuple-simplify"}, {"flatten-call-graph"},
           {"broadcast-canonicalizer"}})};
  if (fusion) stages.push_back(FusionStage(fuse_all, scratchpad));
  return stages;
}

}  // namespace

std::vector<std::string> PipelineNames() {
  return {"none", "default", "classic", "fusion-only", "simplify-only", "no-fuse", "all-fuse", "order", "scratchpad"};
}

std::vector<std::string> PassLabels() {
  return {"inline", "simplify", "cse", "constant-fold", "tuple-simplify", "dce",
          "fusion", "sibling-fusion", "fusion-merger", "output-fusion", "codegen",
          "zero-sized-elim", "opt-barrier-expander", "logistic-expander", "broadcast-canonicalizer",
          "operand-upcaster", "dot-dimension-sorter", "conditional-simplifier", "while-loop-simplifier",
          "map-inliner", "dot-merger", "batchnorm-expander",
          "reshape-mover", "transpose-folding", "slice-sinker", "convert-mover", "sort-simplifier",
          "while-loop-constant-sinking", "simplify-fp-conversions",
          "while-loop-invariant-code-motion", "flatten-call-graph", "dot-decomposer", "gather-simplifier",
          "tree-reduction-rewriter", "result-caster", "dynamic-index-splitter",
          "custom-call-expander", "layout-assignment", "scratchpad-tiling"};
}

std::vector<PassInfo> PassInfos() {
  return {
      {"inline", "inline call instructions (callees before callers)", {"inline_call"}},
      {"simplify", "algebraic simplifier: rule table of XLA-style identities (passes/simplify/)",
       {"simp:<rule> (one kind per rule, `hlox sites --pipeline only:simplify` lists them)"}, true},
      {"cse", "common subexpression elimination within a computation", {"identical"}},
      {"constant-fold", "evaluate instructions whose operands are all constants", {"fold"}},
      {"tuple-simplify", "get-tuple-element of tuple, tuple of get-tuple-elements", {"gte_of_tuple", "tuple_of_gtes"}},
      {"dce", "remove dead instructions (and unreachable computations)", {"dead"}},
      {"fusion", "producer-consumer fusion into loop and input fusions", {"fuse_producer"}, true},
      {"sibling-fusion", "multi-output fusion of consumers of a shared operand", {"sibling_fusion"}, true},
      {"fusion-merger", "merge a producer fusion into its consumer fusions", {"merge_fusion"}, true},
      {"output-fusion",
       "fuse a dot or convolution into its elementwise consumer (bias, batch norm, activation, residual): one kOutput "
       "kernel",
       {"dot_epilogue", "conv_epilogue"}},
      {"codegen", "how the runtime runs each fused loop, dot and convolution",
       {"codegen_params", "gemm_params", "conv_params"}},
      {"zero-sized-elim", "replace computations of zero-element arrays by empty constants", {"zero_sized"}},
      {"opt-barrier-expander", "remove optimization barriers", {"opt_barrier"}},
      {"logistic-expander", "logistic(x) -> 1/(1+exp(-x)) (default: keep the runtime's kernel)", {"logistic"}, true},
      {"broadcast-canonicalizer", "broadcasts with unsorted dimensions -> transpose + sorted broadcast",
       {"unsorted_broadcast"}},
      {"operand-upcaster", "explicit converts of dot/convolution operands narrower than the result",
       {"narrow_operand"}},
      {"dot-dimension-sorter", "sort a dot's contracting dimensions", {"unsorted_contracting"}},
      {"conditional-simplifier", "a conditional with a constant selector (or one branch) -> call of that branch",
       {"fixed_branch"}},
      {"while-loop-simplifier", "a while loop whose condition is constant false -> its initial value",
       {"zero_trip"}},
      {"map-inliner", "map of a one-instruction elementwise computation -> that instruction", {"inline_map"}},
      {"dot-merger", "dots sharing an operand -> one dot on the other operands concatenated, then slices",
       {"shared_lhs", "shared_rhs"}, true},
      {"batchnorm-expander", "batch-norm training/inference -> reductions and elementwise ops (default: keep)",
       {"batch_norm_training", "batch_norm_inference"}, true},
      {"reshape-mover", "elementwise op of equal reshapes/transposes (or constants, broadcasts) -> op, then one",
       {"sink_rearrange"}, true},
      {"transpose-folding", "fold transposes into dot/convolution dimension numbers (default: dot matrix transposes)",
       {"row_column_dot", "transpose_dot", "transpose_conv"}, true},
      {"slice-sinker", "elementwise ops on slices of the same sources -> one op on the sources, then slices",
       {"sink_slices"}, true},
      {"convert-mover", "widening converts down, narrowing converts up across data-movement ops",
       {"widen_down", "narrow_up"}},
      {"sort-simplifier", "drop sort operands whose results are unused and the comparator ignores",
       {"unused_operands"}},
      {"while-loop-constant-sinking", "loop-invariant constants in a while tuple -> constants in body and condition",
       {"sink_constant"}},
      {"simplify-fp-conversions", "chains of float converts -> one convert (rounding chains default: keep)",
       {"exact_chain", "rounding_chain"}, true},
      {"while-loop-invariant-code-motion",
       "hoist loop-invariant instructions out of while bodies (default: not the cheap ops XLA leaves)",
       {"invariant"}, true},
      {"flatten-call-graph", "a computation run by several call/while/conditional sites -> one copy per site",
       {"shared_call", "shared_condition", "shared_body", "shared_branch"}},
      {"dot-decomposer", "dots outside batch-matmul form -> transposes/reshapes around a [b,m,k]x[b,k,n] dot",
       {"non_canonical_dot"}},
      {"gather-simplifier", "gathers that are a broadcast slice or one dynamic-slice -> those ops",
       {"full_slice", "dynamic_slice"}},
      {"tree-reduction-rewriter", "a reduction over a dimension longer than 32 -> two nested reductions",
       {"long_reduction"}},
      {"result-caster", "dot/convolution with a result narrower than its operands -> wide op, then convert",
       {"narrow_result"}},
      {"dynamic-index-splitter", "dynamic-(update-)slice with a vector of start indices -> scalar indices",
       {"vector_index"}},
      {"custom-call-expander", "AWS Neuron custom calls (transfer, GELUs, RMS norm) -> plain HLO (default: keep)",
       {"transfer", "gelu", "gelu_tanh", "gelu_backward", "rms_norm"}, true},
      {"layout-assignment",
       "the dimension order each convolution runs in (channels-last or channels-first) and each dot writes its "
       "result in, with explicit transposes (default: keep)",
       {"conv_layout", "dot_layout"}, true},
      {"scratchpad-tiling",
       "tile sizes and loop order of each kernel with reuse on a scratchpad accelerator (the scratchpad objective's "
       "decision; the CPU runtime ignores it)",
       {"sp_tiling"}},
  };
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePassByLabel(const std::string& label) {
  if (label == "inline") return CreateCallInliner();
  if (label == "simplify") return CreateAlgebraicSimplifier();
  if (label == "cse") return CreateCse();
  if (label == "constant-fold") return CreateConstantFolding();
  if (label == "tuple-simplify") return CreateTupleSimplifier();
  if (label == "dce") return CreateDce();
  if (label == "fusion") return CreateInstructionFusion();
  if (label == "sibling-fusion") return CreateSiblingFusion();
  if (label == "fusion-merger") return CreateFusionMerger();
  if (label == "output-fusion") return CreateOutputFusion();
  if (label == "codegen") return CreateCodegenTuning();
  if (label == "zero-sized-elim") return CreateZeroSizedElimination();
  if (label == "opt-barrier-expander") return CreateOptBarrierExpander();
  if (label == "logistic-expander") return CreateLogisticExpander();
  if (label == "broadcast-canonicalizer") return CreateBroadcastCanonicalizer();
  if (label == "operand-upcaster") return CreateOperandUpcaster();
  if (label == "dot-dimension-sorter") return CreateDotDimensionSorter();
  if (label == "conditional-simplifier") return CreateConditionalSimplifier();
  if (label == "while-loop-simplifier") return CreateWhileLoopSimplifier();
  if (label == "map-inliner") return CreateMapInliner();
  if (label == "dot-merger") return CreateDotMerger();
  if (label == "batchnorm-expander") return CreateBatchNormExpander();
  if (label == "reshape-mover") return CreateReshapeMover();
  if (label == "transpose-folding") return CreateTransposeFolding();
  if (label == "slice-sinker") return CreateSliceSinker();
  if (label == "convert-mover") return CreateConvertMover();
  if (label == "sort-simplifier") return CreateSortSimplifier();
  if (label == "while-loop-constant-sinking") return CreateWhileLoopConstantSinking();
  if (label == "simplify-fp-conversions") return CreateSimplifyFpConversions();
  if (label == "while-loop-invariant-code-motion") return CreateWhileLoopInvariantCodeMotion();
  if (label == "flatten-call-graph") return CreateFlattenCallGraph();
  if (label == "dot-decomposer") return CreateDotDecomposer();
  if (label == "gather-simplifier") return CreateGatherSimplifier();
  if (label == "tree-reduction-rewriter") return CreateTreeReductionRewriter();
  if (label == "result-caster") return CreateResultCaster();
  if (label == "dynamic-index-splitter") return CreateDynamicIndexSplitter();
  if (label == "custom-call-expander") return CreateCustomCallExpander();
  if (label == "layout-assignment") return CreateLayoutAssignment();
  if (label == "scratchpad-tiling") return CreateScratchpadTiling();
  if (label == "pass-order") return CreatePassOrderSlots();  // the "order" pipeline's, not a menu item
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pass '", label, "'; known: ", absl::StrJoin(PassLabels(), ", ")));
}

absl::StatusOr<PipelineSpec> GetPipeline(const std::string& name) {
  PipelineSpec spec{name, {}};
  if (name == "none") return spec;
  if (name == "default" || name == "all-fuse") {
    spec.stages = DefaultStages(name == "all-fuse");
    return spec;
  }
  if (name == "scratchpad") {  // the default, then the scratchpad tiling of the fused kernels
    spec.stages = DefaultStages(false, true, true);
    return spec;
  }
  if (name == "classic") {  // the default before XLA's passes joined it (2026-11-28)
    spec.stages = {Seq({{"inline"}}), SimplifyFixpoint(), FusionStage(false)};
    return spec;
  }
  if (name == "order") {  // the default pipeline as a pass sequence whose slots are decisions
    spec.stages = {Seq({{"pass-order"}})};
    return spec;
  }
  if (name == "no-fuse") {
    spec.stages = DefaultStages(false, false);
    return spec;
  }
  if (name == "fusion-only") {
    spec.stages = {FusionStage(false)};
    return spec;
  }
  if (name == "simplify-only") {
    spec.stages = {PipelineStage{{{"simplify"}, {"dce"}}, kFixpointCap}};
    return spec;
  }
  if (absl::StartsWith(name, "seq:")) {  // "seq:simplify,cse,fusion:all": a pass sequence
    std::vector<PipelineStep> steps;
    for (absl::string_view item : absl::StrSplit(name.substr(4), ',')) {
      constexpr absl::string_view kAll = ":all";
      const bool all = absl::EndsWith(item, kAll);
      std::string label(all ? item.substr(0, item.size() - kAll.size()) : item);
      if (absl::Status s = CreatePassByLabel(label).status(); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("pipeline '", name, "': ", s.message()));
      }
      steps.push_back({label, all});
    }
    spec.stages = {Seq(std::move(steps))};
    return spec;
  }
  if (absl::StartsWith(name, "only:")) {
    std::string label = name.substr(5);
    if (!CreatePassByLabel(label).ok()) return CreatePassByLabel(label).status();
    spec.stages = {Seq({{label}})};
    return spec;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown pipeline '", name, "'; known: ",
                                                 absl::StrJoin(PipelineNames(), ", "),
                                                 ", only:<pass>, seq:<pass>[:all],..."));
}

}  // namespace hlox
