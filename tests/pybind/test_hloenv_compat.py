"""Tests of hlox.compat.hloenv (HloEnv's API over hlox), hlox.equal_outputs and
hlox.compose_pipeline.

hloenv_style_script is written the way HloEnv's documented examples drive HloEnv (load, pre-fusion
optimizations, the dry-run loop choosing an operand of every alternative node, post-fusion
optimizations, evaluate, has_equal_output, export); only its import line differs from an HloEnv
script. The other tests check each mapped method against hlox's own functions and the error paths."""
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, test  # noqa: E402

import hlox  # noqa: E402
import hlox.compat.hloenv as hloenv  # noqa: E402  (an HloEnv script has: import hloenv)

SOURCE = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(SOURCE, "examples", "mlp_train_small.hlo")


def hloenv_style_script(hlo_path, seed):
    """HloEnv's example loop, unchanged but for the import; returns what it observed."""
    rng = np.random.default_rng(seed)
    hlo_env = hloenv.HloEnv(hlo_path, "cpu")
    init_hlo_module = hlo_env.clone_hlo()
    hlo_env.pre_fusion_optimizations()
    num_alts, rounds = 1, 0
    while num_alts > 0:
        hlo_env.pre_fusion_dry_passes()
        hlo_env.fusion_dry_run()
        hlo_graph = hlo_env.get_hlo_graph(do_hash_verification=False)
        num_alts = len(hlo_graph.alternative_indices)
        if num_alts > 0:
            decisions = []
            for alt_idx in hlo_graph.alternative_indices:
                node_uid = hlo_graph.node_features.uids[alt_idx]
                num_operands = hlo_graph.in_edge_offsets[node_uid + 1] - hlo_graph.in_edge_offsets[node_uid]
                decisions.append([alt_idx, rng.integers(num_operands)])
            hlo_env.apply_alternatives(np.asarray(decisions))
            hlo_env.post_fusion_dry_passes()
            rounds += 1
    hlo_env.post_fusion_optimizations()
    eval_result = hlo_env.evaluate(5)
    equal = hlo_env.has_equal_output(init_hlo_module, hlo_env.get_hlo_module())
    return rounds, eval_result, equal, hlo_env.export_hlo_to_str()


def pipeline_style_script(hlo_path, seed):
    """HloEnv's pipeline-object example (pre passes, an AltPipeline dry pass, post passes), with
    its TensorFlow ragged tensors written in NumPy; returns (rounds, best duration, equal)."""
    rng = np.random.default_rng(seed)
    hlo_env = hloenv.HloEnv(hlo_path, "gpu")
    original = hlo_env.clone_hlo()
    pre = hloenv.Pipeline("pre-fusion-optimizations")
    pre.add_pass(hloenv.HloPass.CallInliner())
    simplification = hloenv.Pipeline("simplification", loop_count=-1)
    simplification.add_pass(hloenv.HloPass.AlgebraicSimplifier(options={"minmax_propagate_nan": True}))
    simplification.add_pass(hloenv.HloPass.TupleSimplifier())
    simplification.add_pass(hloenv.HloPass.HloConstantFolding())
    simplification.add_pass(hloenv.HloPass.HloCSE(is_layout_sensitive=False))
    simplification.add_pass(hloenv.HloPass.HloDCE())
    pre.add_pass(simplification)
    fusion_dry_pass = hloenv.AltPipeline(hloenv.Pass(hloenv.HloPass.GpuInstructionFusion(True)))
    post_dry = hloenv.Pipeline("fusion-post")
    post_dry.add_pass(hloenv.HloPass.FusionMerger())
    post_dry.add_pass(hloenv.HloPass.GpuMultiOutputFusion())
    post_dry.add_pass(hloenv.HloPass.HloCSE(True, True))
    post_dry.add_pass(hloenv.HloPass.HloDCE())

    hlo_env.run(pre)
    num_alts, rounds = 1, 0
    while num_alts > 0:
        hlo_env.run(hloenv.Pipeline("fusion-pre"))
        hlo_env.run(fusion_dry_pass)
        hlo_graph = hlo_env.get_hlo_graph(do_hash_verification=False)
        num_alts = len(hlo_graph.alternative_indices)
        if num_alts > 0:
            offsets, srcs = hlo_graph.in_edge_offsets, hlo_graph.in_edge_features.srcs
            decisions = []
            for alt in hlo_graph.alternative_indices:
                operands = srcs[offsets[alt]:offsets[alt + 1]]
                decisions.append([alt, int(np.argmax(rng.uniform(size=len(operands))))])
            hlo_env.apply_alternatives(np.asarray(decisions))
            hlo_env.run(post_dry)
            rounds += 1
        assert rounds < 100, "the dry-run loop does not end"
    results = hlo_env.evaluate(100)
    return rounds, min(results.durations), hlo_env.has_equal_output_as(original)


@test
def pipeline_style_script_runs_unchanged():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rounds, best, equal = pipeline_style_script(EXAMPLE, 0)
    assert rounds >= 1 and best > 0 and equal, (rounds, best, equal)
    assert any("CPU runtime" in str(w.message) for w in caught), "platform 'gpu' gave no warning"


@test
def hloenv_style_script_runs_unchanged():
    texts = []
    for seed in (0, 1):
        rounds, result, equal, text = hloenv_style_script(EXAMPLE, seed)
        assert rounds >= 2, rounds  # fusion#0, then the later fusion-stage passes with sites
        assert equal, "optimized module differs from the original"
        assert 1 <= len(result.durations) <= 5 and all(d > 0 for d in result.durations), result.durations
        assert isinstance(result.durations[0], int) and result.median_ns > 0
        assert len(result.output) == 9  # the train step's loss and eight updated parameters
        assert hlox.parse_module(text).text == text
        texts.append(text)
    assert texts[0] != texts[1], "different random decisions gave the same module"


@test
def default_choices_equal_native_pipelines():
    env = hloenv.HloEnv(EXAMPLE)
    env.pre_fusion_optimizations()
    while env.fusion_dry_run():
        g = env.get_hlo_graph()
        env.apply_alternatives([s["default"] for s in g.alternative_sites])
    assert not env.fusion_dry_run(), "a finished fusion stage offered alternatives again"
    m = hlox.load_module(EXAMPLE)
    want = hlox.apply_decisions(hlox.apply_decisions(m, "no-fuse", {}), "fusion-only", {})
    assert env.export_hlo_to_str() == want.text
    env2 = hloenv.HloEnv(open(EXAMPLE).read())
    env2.optimize_hlo_module()
    assert env2.get_hlo_module_hash() == int(hlox.apply_decisions(m, "default", {}).hash[:16], 16)


@test
def graph_is_csr_with_alternative_nodes():
    env = hloenv.HloEnv(EXAMPLE)
    m = hlox.load_module(EXAMPLE)
    g = env.get_hlo_graph()
    feats = hlox.graph_features(m)
    n, e = feats["node_features"].shape[0], feats["edge_index"].shape[1]
    assert len(g.alternative_indices) == 0 and g.in_edge_offsets[-1] == g.out_edge_offsets[-1] == e
    for node in range(n):  # operands in operand order, as edge_index says
        ops = g.in_edge_indices[g.in_edge_offsets[node]:g.in_edge_offsets[node + 1]]
        want = feats["edge_index"][0][feats["edge_index"][1] == node]
        assert sorted(ops) == sorted(want) and len(ops) == g.node_features.num_operands[node]
    assert env.fusion_dry_run()
    g = env.get_hlo_graph()
    point = hlox.next_decision_point(m, "fusion-only", {})
    assert len(g.alternative_indices) == len(point["sites"]) > 0
    for k, alt in enumerate(g.alternative_indices):
        ops = g.in_edge_indices[g.in_edge_offsets[alt]:g.in_edge_offsets[alt + 1]]
        assert len(ops) == len(point["sites"][k]["choices"]) and g.node_features.is_alternative[alt]
        assert (ops == g.alternative_anchors[k]).all()
    try:
        g.opcode_attrs
    except AttributeError as err:
        assert "not provided" in str(err)
    else:
        raise AssertionError("opcode_attrs should say it is not provided")


@test
def run_maps_names_and_rejects_unknown_passes():
    m = hlox.load_module(EXAMPLE)
    for name, label in (("HloCSE", "cse"), ("cse", "cse"), ("AlgebraicSimplifier", "simplify")):
        env = hloenv.HloEnv(EXAMPLE)
        assert env.run(name) is False
        assert env.export_hlo_to_str() == hlox.apply_decisions(m, "only:" + label, {}).text
    env = hloenv.HloEnv(EXAMPLE)
    env.run(hloenv.HloPass.HloDCE())
    assert env.get_hlo_module().to_string() == hlox.apply_decisions(m, "only:dce", {}).text
    # Every XLA name maps to a pass hlox has, and runs as that pass.
    labels = set(hlox.pass_labels())
    for name, label in hloenv.XLA_PASS_NAMES.items():
        assert label in labels, (name, label)
    env = hloenv.HloEnv(EXAMPLE)
    env.run(hloenv.HloPass.ReshapeMover())
    assert env.export_hlo_to_str() == hlox.apply_decisions(m, "only:reshape-mover", {}).text
    for bad in ("GpuLayoutAssignment", "HloRematerialization"):
        try:
            env.run(bad)
        except hloenv.UnsupportedPassError as err:
            assert bad in str(err) and "HloCSE" in str(err) and "fusion" in str(err), str(err)
            assert isinstance(err, NotImplementedError)
        else:
            raise AssertionError("unsupported pass %s ran" % bad)
    try:
        hloenv.HloPass.GpuConvRewriter()
    except hloenv.UnsupportedPassError as err:
        assert "GpuConvRewriter" in str(err)
    else:
        raise AssertionError("HloPass.GpuConvRewriter should be unsupported")


@test
def alt_pipeline_dry_run_over_composed_passes():
    pipeline = hloenv.Pipeline("cleanup")
    pipeline.add_pass(hloenv.HloPass.CallInliner())
    pipeline.add_pass(hloenv.HloPass.AlgebraicSimplifier(), loop_count=1)
    pipeline.add_pass(hloenv.HloPass.HloCSE())
    env = hloenv.HloEnv(EXAMPLE)
    assert env.run(hloenv.AltPipeline(pipeline))
    keys = []
    while len(env.get_hlo_graph().alternative_indices):
        g = env.get_hlo_graph()
        keys.append(len(g.alternative_indices))
        env.apply_alternatives(np.zeros(len(g.alternative_indices), np.int64))  # keep everything
    assert keys and env.export_hlo_to_str() == hlox.load_module(EXAMPLE).text  # keep = unchanged


@test
def constructors_modules_and_hashes():
    text = open(EXAMPLE).read()
    by_path = hloenv.HloEnv(EXAMPLE, "cpu")
    by_text = hloenv.HloEnv(text, "txt", "cpu")
    module = hloenv.HloModule(EXAMPLE)
    by_module = hloenv.HloEnv(module, "cpu")
    hashes = {e.get_hlo_module_hash() for e in (by_path, by_text, by_module)}
    assert len(hashes) == 1 and module.hash() in hashes and isinstance(module.hash(), int)
    assert 0 <= module.hash() < 2 ** 64 and module.hash() == by_path.get_hlo_graph().hash()
    assert hloenv.HloModule(text, "txt").to_string() == module.to_string()
    assert module.instruction_count == 163 and module.computation_count == 2
    costs = module.cost_analysis()
    assert costs["flops"] > 0 and costs["bytes accessed"] > 0 and costs["optimal_seconds"] > 0
    by_path.verify_module()
    by_path.run("all-fuse")
    assert by_path.get_hlo_module_hash() != module.hash() and by_path.has_equal_output_as(module)
    by_path.load_hlo(text, "txt")
    assert by_path.get_hlo_module_hash() == module.hash()
    pass_loop = hloenv.Pipeline("p").add_pass(hloenv.Pass(hloenv.HloPass.AlgebraicSimplifier(), -1))
    assert pass_loop.steps() == [([("simplify", 25)], 1)]


@test
def apply_alternatives_errors():
    env = hloenv.HloEnv(EXAMPLE)
    try:
        env.apply_alternatives([[0, 1]])
    except ValueError as err:
        assert "no alternatives pending" in str(err)
    else:
        raise AssertionError("apply without a dry run accepted")
    env.fusion_dry_run()
    g = env.get_hlo_graph()
    for bad, words in (([[0, 1]], "not a pending alternative"), ([1, 2, 3], "rows"),
                       ([[g.alternative_indices[0], 9]], "INVALID_DECISIONS")):
        try:
            env.apply_alternatives(bad)
        except ValueError as err:
            assert words in str(err), (words, str(err))
        else:
            raise AssertionError("bad decisions %r accepted" % (bad,))
    try:
        hloenv.HloEnv(EXAMPLE, "tpu")
    except ValueError as err:
        assert "platform" in str(err)
    else:
        raise AssertionError("unknown platform accepted")


@test
def equal_outputs_compares_any_two_modules():
    m = hlox.load_module(EXAMPLE)
    opt = hlox.apply_decisions(m, "all-fuse", {})
    assert hlox.equal_outputs(m, opt) and hlox.equal_outputs(m, opt, seed=3)
    wrong = hlox.parse_module(m.text.replace("subtract(%Arg.8, %multiply.161)", "add(%Arg.8, %multiply.161)"))
    assert wrong.text != m.text
    assert not hlox.equal_outputs(m, wrong)
    assert hlox.outputs_mismatch(m, wrong).startswith("output 8:"), hlox.outputs_mismatch(m, wrong)
    assert hlox.equal_outputs(m, wrong, rtol=1e9)  # tolerances are honoured
    other = hlox.load_module(os.path.join(SOURCE, "examples", "gpt2_block_small.hlo"))
    try:
        hlox.equal_outputs(m, other)
    except ValueError as err:
        assert "parameter" in str(err)
    else:
        raise AssertionError("modules with different parameters compared")


SCALED = """HloModule scaled

ENTRY main {
  x = f32[64] parameter(0)
  %s
  ROOT y = TYPE[64] convert(m)
}
"""


@test
def equal_outputs_tolerance_follows_the_output_type():
    # A 0.3% change: within bf16's tolerance (bf16 leaves reach Python as float32, so their
    # type comes from the entry's root shape), outside f32's.
    def module(scale, dtype):
        body = "m = f32[64] multiply(x, x)" if scale is None else (
            "c = f32[] constant(%s)\n  b = f32[64] broadcast(c), dimensions={}\n"
            "  m = f32[64] multiply(x, b)" % scale)
        return hlox.parse_module(SCALED.replace("TYPE", dtype) % body)
    assert hlox.equal_outputs(module(1.0, "bf16"), module(1.003, "bf16"))
    assert not hlox.equal_outputs(module(1.0, "bf16"), module(1.003, "bf16"), rtol=1e-4, atol=1e-5)
    assert not hlox.equal_outputs(module(1.0, "f32"), module(1.003, "f32"))
    assert not hlox.equal_outputs(module(1.0, "bf16"), module(None, "bf16"))


@test
def compose_pipeline_step_by_step():
    m = hlox.load_module(EXAMPLE)
    p = hlox.compose_pipeline(["inline", "simplify", "cse", ("dce", 3)])
    trace = p.trace(m)
    assert [k for k, _, _ in trace][:3] == ["inline#0", "simplify#0", "cse#0"]
    step = m
    for key, label, after in trace:  # each step equals the native single-pass pipeline
        step = hlox.apply_decisions(step, "only:" + label, {})
        assert step.text == after.text, key
    assert p.apply(m).text == step.text and hlox.equal_outputs(m, step)
    point = p.next_decision_point(m, {})
    assert point["key"] == "simplify#0"
    keep = {"simplify#0": [0] * len(point["sites"])}
    assert p.next_decision_point(m, keep)["key"] == "cse#0"
    twice = hlox.compose_pipeline(["cse", "simplify", "cse"])
    pt = twice.next_decision_point(m, {"cse#0": [0] * len(hlox.next_decision_point(m, "only:cse")["sites"])})
    assert pt["key"] == "simplify#0"
    for bad, words in (({"cse#7": [1]}, "unknown invocation"), ({"cse#0": [1]}, "cse#0: expected")):
        try:
            p.apply(m, bad)
        except ValueError as err:
            assert "INVALID_DECISIONS" in str(err) and words in str(err), str(err)
        else:
            raise AssertionError("bad decisions %r accepted" % (bad,))
    try:
        hlox.compose_pipeline(["cse", "fold"])
    except ValueError as err:
        assert "'fold'" in str(err) and "constant-fold" in str(err)
    else:
        raise AssertionError("unknown pass accepted")


def decision_keys(module, next_point):
    """Invocation keys with sites, walking every decision point with the default choices."""
    decisions, keys = {}, []
    while True:
        point = next_point(module, decisions)
        if point is None:
            return keys, decisions
        keys.append(point["key"])
        decisions[point["key"]] = [s["default"] for s in point["sites"]]


@test
def composed_stages_rebuild_the_default_pipeline():
    # docs/DECISIONS.md's "default", written as a composition: the same decision points and
    # the same op count. (Text may differ in the names of new instructions: each composed pass
    # runs as its own native pipeline, which numbers fresh names from scratch.)
    expand = ["operand-upcaster", "result-caster", "zero-sized-elim", "dynamic-index-splitter", "map-inliner",
              "inline", "dot-decomposer", "batchnorm-expander", "logistic-expander", "layout-assignment"]
    simplification = ["simplify", "sort-simplifier", "dce", "gather-simplifier", "zero-sized-elim",
                      "while-loop-invariant-code-motion", "tuple-simplify", "while-loop-constant-sinking",
                      "while-loop-simplifier", "dce", "reshape-mover", "constant-fold", "conditional-simplifier",
                      "cse"]
    before_fusion = ["transpose-folding", "cse", "opt-barrier-expander", "tuple-simplify", "flatten-call-graph",
                     "broadcast-canonicalizer"]
    fusion = ["fusion", "sibling-fusion", "fusion-merger", "output-fusion", "codegen", "dce"]
    default = hlox.compose_pipeline(expand + [(simplification, 8)] + before_fusion + fusion)
    for name in ("mlp_train_small", "gpt2_block_small"):
        m = hlox.load_module(os.path.join(SOURCE, "examples", name + ".hlo"))
        want, _ = decision_keys(m, lambda mod, d: hlox.next_decision_point(mod, "default", d))
        got, decisions = decision_keys(m, default.next_decision_point)
        assert got == want, (name, got, want)
        ours, native = default.apply(m, decisions), hlox.apply_decisions(m, "default", {})
        assert ours.op_count == native.op_count and hlox.equal_outputs(ours, native), name


@test
def composed_stage_errors():
    for steps, words in (([(["cse"], 0)], "at least 1"), ([(["cse", ("fold", 2)], 3)], "'fold'")):
        try:
            hlox.compose_pipeline(steps)
        except ValueError as err:
            assert words in str(err), str(err)
        else:
            raise AssertionError("bad steps %r accepted" % (steps,))


if __name__ == "__main__":
    run()
