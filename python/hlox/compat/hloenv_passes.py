"""HloEnv's pass and pipeline objects (HloPass.X(...), Pass, Pipeline, AltPipeline) over hlox's passes.

HloEnv runs XLA's own passes; hlox has its own passes with the same roles. XLA_PASS_NAMES maps the
XLA pass names a HloEnv script uses onto hlox pass labels (docs/DECISIONS.md); any other name
raises UnsupportedPassError naming the pass and every supported name, so a script never runs a
silently different pipeline. Pass arguments (e.g. GpuInstructionFusion(may_duplicate=True)) are
accepted and ignored: hlox's passes expose their choices as decision sites instead.
"""
from .. import _hlox as native
from ..compose import ComposedPipeline

# XLA pass name -> hlox pass label. The fusion passes are hlox's counterparts, not ports: XLA's
# GPU multi-output fusion fuses siblings and producer-consumer pairs into multi-output fusions,
# hlox's sibling-fusion the siblings only.
XLA_PASS_NAMES = {
    "AlgebraicSimplifier": "simplify",
    "CallInliner": "inline",
    "HloCSE": "cse",
    "HloDCE": "dce",
    "HloConstantFolding": "constant-fold",
    "TupleSimplifier": "tuple-simplify",
    "GpuInstructionFusion": "fusion",
    "CpuInstructionFusion": "fusion",
    "InstructionFusion": "fusion",
    "GpuMultiOutputFusion": "sibling-fusion",
    "MultiOutputFusion": "sibling-fusion",
    "FusionMerger": "fusion-merger",
    # XLA's target-independent passes (passes/xla/), each after the XLA class of that name.
    "ZeroSizedHloElimination": "zero-sized-elim",
    "OptimizationBarrierExpander": "opt-barrier-expander",
    "LogisticExpander": "logistic-expander",
    "BroadcastCanonicalizer": "broadcast-canonicalizer",
    "OperandUpcaster": "operand-upcaster",
    "DotDimensionSorter": "dot-dimension-sorter",
    "ConditionalSimplifier": "conditional-simplifier",
    "WhileLoopSimplifier": "while-loop-simplifier",
    "MapInliner": "map-inliner",
    "DotMerger": "dot-merger",
    "BatchNormExpander": "batchnorm-expander",
    "ReshapeMover": "reshape-mover",
    "TransposeFolding": "transpose-folding",
    "SliceSinker": "slice-sinker",
    "ConvertMover": "convert-mover",
    "SortSimplifier": "sort-simplifier",
    "WhileLoopConstantSinking": "while-loop-constant-sinking",
    "SimplifyFPConversions": "simplify-fp-conversions",
    "WhileLoopInvariantCodeMotion": "while-loop-invariant-code-motion",
    "FlattenCallGraph": "flatten-call-graph",
    "DotDecomposer": "dot-decomposer",
    "GatherSimplifier": "gather-simplifier",
    "TreeReductionRewriter": "tree-reduction-rewriter",
    "ResultCaster": "result-caster",
    "DynamicIndexSplitter": "dynamic-index-splitter",
    "LayoutAssignment": "layout-assignment",
    "CpuLayoutAssignment": "layout-assignment",
}


class UnsupportedPassError(NotImplementedError):
    """A pass or pipeline name hlox does not have; the message lists the supported names."""


def supported_names():
    """Every name run() accepts: hlox pipelines, hlox pass labels, XLA pass names."""
    return list(native.pipelines()) + list(native.pass_labels()) + sorted(XLA_PASS_NAMES)


def label_of(name):
    """The hlox pass label for an XLA pass name or an hlox label; UnsupportedPassError otherwise."""
    if name in native.pass_labels():
        return name
    if name in XLA_PASS_NAMES:
        return XLA_PASS_NAMES[name]
    raise UnsupportedPassError("hlox has no pass %r; supported names: %s"
                               % (name, ", ".join(supported_names())))


class HloPassSpec:
    """One pass as HloPass.X(...) builds it: the XLA `name` and the hlox `label` it runs."""

    def __init__(self, name, **ignored_options):
        self.name, self.label = name, label_of(name)
        self.options = ignored_options

    def __repr__(self):
        return "HloPass.%s -> hlox %s" % (self.name, self.label)


class _HloPassFactory:
    """HloPass.AlgebraicSimplifier(), HloPass.HloCSE(...), ...; unknown names raise at lookup."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        label_of(name)  # raises UnsupportedPassError for a pass hlox lacks
        return lambda *args, **kwargs: HloPassSpec(name, **kwargs)


HloPass = _HloPassFactory()


# HloEnv's loop_count -1: "until no further changes, up to a maximum of 25 times".
UNTIL_UNCHANGED_CAP = 25


def _runs(loop_count):
    return UNTIL_UNCHANGED_CAP if int(loop_count) == -1 else max(int(loop_count), 1)


class Pass:
    """HloEnv's Pass(hlo_pass, loop_count): a pass run up to loop_count times, stopping early
    once it changes nothing (-1: up to 25 times)."""

    def __init__(self, hlo_pass, loop_count=1):
        self.hlo_pass, self.loop_count = _as_pass_spec(hlo_pass), int(loop_count)
        self.name = self.hlo_pass.name

    def steps(self):
        return [(self.hlo_pass.label, _runs(self.loop_count))]


class Pipeline:
    """HloEnv's Pipeline(name, loop_count): passes and nested pipelines in order, the whole
    repeated up to loop_count times until a round changes nothing (a fixpoint stage)."""

    def __init__(self, name="pipeline", loop_count=1):
        self.name, self.loop_count = name, int(loop_count)
        self.items = []

    def add_pass(self, item, loop_count=1):
        """Appends a pass (HloPass.X(), Pass, or an hlox label / XLA name) or a Pipeline."""
        self.items.append((item, int(loop_count)))
        return self

    def add_invariant_checker(self, item):
        """Accepted and ignored: hlox's passes keep the module verifiable by construction."""
        return self

    def steps(self):
        """This pipeline as ComposedPipeline steps: [(list of steps, max rounds)]."""
        inner = []
        for item, loop_count in self.items:
            if isinstance(item, (Pipeline, AltPipeline, Pass)):
                inner += item.steps()
            else:
                inner.append((_as_pass_spec(item).label, _runs(loop_count)))
        return [(inner, _runs(self.loop_count))]

    def composed(self):
        return ComposedPipeline(self.steps())


class AltPipeline:
    """HloEnv's AltPipeline(pass, loop_count): the same passes run "dry": their sites become
    alternatives for get_hlo_graph() and apply_alternatives()."""

    def __init__(self, pipeline, loop_count=1):
        self.pipeline, self.loop_count = pipeline, int(loop_count)
        self.name = getattr(pipeline, "name", str(pipeline))

    def steps(self):
        inner = self.pipeline.steps() if hasattr(self.pipeline, "steps") else \
            [(_as_pass_spec(self.pipeline).label, 1)]
        return [(inner, _runs(self.loop_count))]

    def composed(self):
        return ComposedPipeline(self.steps())


def _as_pass_spec(item):
    if isinstance(item, HloPassSpec):
        return item
    if isinstance(item, str):
        return HloPassSpec(item)
    raise TypeError("expected HloPass.X(), Pass, Pipeline or a pass name, got %r" % (item,))
