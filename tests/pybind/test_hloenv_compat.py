"""Tests of hlox.compat.hloenv (HloEnv's API over hlox), hlox.equal_outputs and
hlox.compose_pipeline.

hloenv_style_script is written the way HloEnv's documented examples drive HloEnv (load, pre-fusion
optimizations, the dry-run loop choosing an operand of every alternative node, post-fusion
optimizations, evaluate, has_equal_output, export); only its import line differs from an HloEnv
script. The other tests check each mapped method against hlox's own functions and the error paths."""
import os
import sys

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
    assert env2.get_hlo_module_hash() == hlox.apply_decisions(m, "default", {}).hash


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
    assert env.get_hlo_module_hash() == hlox.apply_decisions(m, "only:dce", {}).hash
    for bad in ("GpuLayoutAssignment", "ReshapeMover"):
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


if __name__ == "__main__":
    run()
