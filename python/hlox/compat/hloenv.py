"""HloEnv's Python API over hlox: a script written for HloEnv ports with an import change.

    import hlox.compat.hloenv as hloenv     # was: import hloenv
    from hlox.compat.hloenv import HloEnv   # was: from hloenv import HloEnv

HloEnv (github.com/sail-sg/hloenv) drives XLA's passes in "dry" mode, which turns each rewrite it could
make into an alternative the agent picks. hlox's passes expose decision sites instead; this
module maps one onto the other:

  HloEnv                             hlox
  HloEnv(path, platform),
  HloEnv(text, "txt", platform)      load_module / parse_module; platform "cpu" or "gpu" accepted,
                                     every time is measured by hlox's CPU runtime
  pre_fusion_optimizations()         the "no-fuse" pipeline (inline; fixpoint of simplify, cse,
                                     constant-fold, tuple-simplify, dce) with default decisions
  pre_fusion_dry_passes(),
  post_fusion_dry_passes()           nothing to do (hlox's pre/post passes are not dry-run)
  fusion_dry_run()                   the next decision point of the "fusion-only" pipeline
                                     (fusion, sibling-fusion, fusion-merger, output-fusion,
                                     codegen, dce);
                                     True when it has alternatives
  get_hlo_graph()                    graph_features / the point's features, as a CSR HloGraph;
                                     one alternative node per site, its operands its choices
  apply_alternatives(decisions)      decides that point (next_decision_point, apply_decisions)
  post_fusion_optimizations()        finishes a pending dry run with default decisions
  optimize_hlo_module()              the "default" pipeline
  run(pass_or_pipeline)              hlox pipeline names, pass labels or XLA pass names
                                     (hloenv_passes.XLA_PASS_NAMES), HloPass.X(), Pass, Pipeline
                                     (composed with hlox.compose_pipeline), AltPipeline (dry run);
                                     returns True when alternatives are pending
  evaluate(times)                    hlox.evaluate(module, "none", measure=True): durations in ns
  has_equal_output(a, b, times),
  has_equal_output_as(other, times)  hlox.equal_outputs on seeds 0..times-1
  export_hlo_to_str(), get_hlo_module(), clone_hlo(), save_hlo(), load_hlo(), verify_module(),
  get_hlo_module_hash()              Module.text, Module.clone(), Module.verify(), Module.hash
                                     (HloEnv's hash is a uint64: the first 64 bits of hlox's)
  HloModule(...).cost_analysis()     the analytical costs (flops, bytes, roofline seconds)
  prepare_for_eval()                 nothing to do (hlox runs the module as it is)

An alternative is a decision site; its choices are hlox's (0 = keep, 1 = apply, more for some
passes; as in HloEnv, an alternative node's operand count is its number of choices).
apply_alternatives takes HloEnv's rows [alternative node, choice] or one choice per alternative
in alternative_indices order; a site left out takes its pass's default.
A dry run decides one pass invocation per apply_alternatives call, so HloEnv's loop "dry run,
graph, apply, until no alternatives" walks fusion, sibling-fusion, fusion-merger, output-fusion and codegen in
turn; after the last, fusion_dry_run reports no alternatives until the module changes another way.
A pass hlox does not have raises UnsupportedPassError (a NotImplementedError) naming it and every
supported name. Not provided: GPU execution and GPU-specific passes (layout assignment, convolution
rewriting, ...), per-opcode attribute vectors in the graph (opcode_attrs), RewritePipeline and the
rewrite graph (get_hlo_rewrite_graph, apply_rewrites), GpuBackend, module config / debug options,
and the extract_* submodule tools.
"""
import warnings

import numpy as np

from .. import _hlox as native
from ..compare import equal_outputs
from ..env import as_module
from .hloenv_passes import (XLA_PASS_NAMES, AltPipeline, HloPass, Pass, Pipeline,
                            UnsupportedPassError, label_of, supported_names)
from .hloenv_types import EvaluationResult, HloGraph, HloModule, graph_of, module_hash

__all__ = ["HloEnv", "HloPass", "Pass", "Pipeline", "AltPipeline", "HloModule", "HloGraph",
           "EvaluationResult", "UnsupportedPassError", "XLA_PASS_NAMES", "supported_names"]

PLATFORMS = ("cpu", "gpu")
FUSION_PIPELINE = "fusion-only"


class _Named:
    """A native pipeline name with ComposedPipeline's two methods."""

    def __init__(self, name):
        self.name = name

    def next_decision_point(self, module, decisions):
        return native.next_decision_point(module, self.name, decisions)

    def apply(self, module, decisions):
        return native.apply_decisions(module, self.name, decisions)


class _DryRun:
    """A pipeline being decided point by point: its input, the decisions so far, the pending point."""

    def __init__(self, pipeline, module, label):
        self.pipeline, self.base, self.label = pipeline, module, label
        self.decisions = {}
        self.point = pipeline.next_decision_point(module, {})

    def decide(self, vector):
        self.decisions[self.point["key"]] = [int(c) for c in vector]
        self.point = self.pipeline.next_decision_point(self.base, self.decisions)

    def finish(self):
        """The pipeline's output: recorded decisions, defaults for the undecided rest."""
        return self.pipeline.apply(self.base, self.decisions)


class HloEnv:
    """One module being optimized, with HloEnv's methods (see the module docstring)."""

    def __init__(self, hlo_input, format_or_platform="cpu", platform=None):
        """HloEnv(path, platform), HloEnv(text, format, platform) with format "path" or "txt",
        or HloEnv(HloModule, platform), as HloEnv's three constructors."""
        fmt = None
        if platform is None:
            platform = format_or_platform
        else:
            fmt = format_or_platform
        if platform not in PLATFORMS:
            raise ValueError("platform must be one of %s, got %r" % (PLATFORMS, platform))
        if platform == "gpu":
            warnings.warn("hlox.compat.hloenv: times are measured on hlox's CPU runtime, not a GPU",
                          stacklevel=2)
        self.platform = platform
        self._load(hlo_input, fmt)

    # -- module state ----------------------------------------------------------------------------
    def get_hlo_module(self):
        return HloModule(self._module)

    def clone_hlo(self):
        return HloModule(self._module.clone())

    def save_hlo(self):
        return self.clone_hlo()

    def load_hlo(self, hlo_data, format="path"):  # noqa: A002 - HloEnv's name
        """Replaces the module (HloModule, or a path / text per `format`); drops a pending dry run."""
        self._load(hlo_data, format)

    def export_hlo_to_str(self):
        return self._module.text

    def get_hlo_module_hash(self):
        return module_hash(self._module)

    def verify_module(self):
        """Raises ValueError when the current module does not verify."""
        self._module.verify()

    def get_hlo_graph(self, debug=False, inline_fused_comp=False, do_hash_verification=False):
        """HloGraph of the current module; during a dry run, with the pending alternatives."""
        return graph_of(self._module, self._dry.point if self._dry else None)

    def prepare_for_eval(self):
        """Nothing to do: hlox's runtime executes the module as it is."""

    prepare_hlo_module_for_ir_emitting = prepare_for_eval

    # -- passes ----------------------------------------------------------------------------------
    def pre_fusion_optimizations(self):
        self.run("no-fuse")

    def pre_fusion_dry_passes(self):
        pass

    def post_fusion_dry_passes(self):
        pass

    def fusion_dry_run(self, may_duplicate=True):
        """Starts (or continues) the fusion dry run; True when alternatives are pending."""
        if self._dry is None and not self._fusion_done:
            self._start(_DryRun(_Named(FUSION_PIPELINE), self._module, FUSION_PIPELINE))
            self._fusion_done = True
        return self._dry is not None

    def post_fusion_optimizations(self):
        self._finish()

    def optimize_hlo_module(self):
        self.run("default")

    def run(self, pipeline, dry=False):
        """Runs a pipeline or pass (see the module docstring); a dry run (AltPipeline or dry=True)
        leaves its sites as alternatives. Returns True when alternatives are pending."""
        self._finish()
        if isinstance(pipeline, AltPipeline):
            runner, dry = pipeline.composed(), True
        elif isinstance(pipeline, Pipeline):
            runner = pipeline.composed()
        elif isinstance(pipeline, Pass):
            runner = Pipeline("pass").add_pass(pipeline).composed()
        elif isinstance(pipeline, str) and pipeline in native.pipelines():
            runner = _Named(pipeline)
        else:
            name = pipeline.name if hasattr(pipeline, "name") else pipeline
            runner = _Named("only:" + label_of(name))
        if dry:
            self._start(_DryRun(runner, self._module, repr(pipeline)))
            return self._dry is not None
        self._set_module(runner.apply(self._module, {}))
        return False

    def apply_alternatives(self, decisions):
        """Decides the pending alternatives: rows [node index, choice] or one choice per
        alternative; ValueError when none are pending or a row names no alternative."""
        if self._dry is None:
            raise ValueError("no alternatives pending: call fusion_dry_run() or run(AltPipeline(...)) first")
        self._dry.decide(_decision_vector(self._dry.point["sites"], self._dry.point["features"], decisions))
        if self._dry.point is None:
            self._finish()
        else:
            self._module = self._dry.point["module"]

    # -- running ---------------------------------------------------------------------------------
    def evaluate(self, times=20, do_not_prep_for_eval=False, seed=0, time_cap_seconds=10.0):
        """Measures the current module: at most `times` samples (fewer once their spread is
        small), in ns. RuntimeError when it does not run."""
        record = native.evaluate(self._module, "none", {}, seed=seed, validate=False, measure=True,
                                 max_samples=max(int(times), 1), time_cap_seconds=time_cap_seconds)
        if record["status"] != "OK":
            raise RuntimeError("evaluate: %s: %s" % (record["status"], record.get("message", "")))
        output = native.run(self._module, native.seeded_inputs(self._module, seed), seed=seed)
        return EvaluationResult(record, output)

    def has_equal_output(self, first_module, second_module, times=1, rtol=None, atol=None):
        """True when the two modules agree on seeded inputs 0..times-1 (HloModule, hlox Module,
        path or text; hlox.equal_outputs's tolerances unless rtol / atol are given)."""
        a, b = _module_of(first_module), _module_of(second_module)
        return all(equal_outputs(a, b, seed=s, rtol=rtol, atol=atol) for s in range(max(int(times), 1)))

    def has_equal_output_as(self, other_module, times=1, rtol=None, atol=None):
        """has_equal_output(other_module, the current module)."""
        return self.has_equal_output(other_module, self._module, times, rtol, atol)

    # -- internals -------------------------------------------------------------------------------
    def _load(self, hlo_input, fmt=None):
        self._dry = None
        if fmt is not None and not isinstance(hlo_input, (HloModule, native.Module)):
            self._set_module(HloModule(hlo_input, fmt).module)
        else:
            self._set_module(_module_of(hlo_input))

    def _set_module(self, module):
        self._module = module
        self._fusion_done = False  # a changed module may have new fusion alternatives

    def _start(self, dry):
        self._dry = dry if dry.point is not None else None
        if self._dry is None:
            self._module = dry.finish()
        else:
            self._module = dry.point["module"]

    def _finish(self):
        if self._dry is not None:
            dry, self._dry = self._dry, None
            self._module = dry.finish()


def _module_of(value):
    if isinstance(value, HloModule):
        return value.module
    return as_module(value)


def _decision_vector(sites, features, decisions):
    """One choice per site from HloEnv rows [alternative node, choice] or from a plain vector."""
    d = np.asarray(decisions)
    if d.ndim == 1 and d.size == len(sites):
        return [int(c) for c in d]
    if d.ndim != 2 or d.shape[1] != 2:
        raise ValueError("decisions must be rows [alternative node, choice] or one choice per "
                         "alternative (%d), got shape %s" % (len(sites), d.shape))
    first = features["node_features"].shape[0]  # alternative k is node first + k (HloGraph)
    vector = [s["default"] for s in sites]
    for node, choice in d.tolist():
        k = int(node) - first
        if not 0 <= k < len(sites):
            raise ValueError("node %d is not a pending alternative (alternative_indices: %d..%d)"
                             % (node, first, first + len(sites) - 1))
        vector[k] = int(choice)
    return vector
