"""Tests of the hlox._hlox extension: modules, running on NumPy inputs against NumPy itself,
decision points and features, applying decisions, local evaluation."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import corpus_files, run, test  # noqa: E402

import hlox  # noqa: E402

TINY = """HloModule tiny

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY main {
  a = f32[3,4] parameter(0)
  b = f32[4,2] parameter(1)
  i = s32[3] parameter(2)
  d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[3,2] tanh(d)
  zero = f32[] constant(0)
  r = f32[3] reduce(a, zero), dimensions={1}, to_apply=sum
  i2 = s32[3] multiply(i, i)
  one = s32[] constant(1)
  ones = s32[3] broadcast(one), dimensions={}
  i3 = s32[3] add(i2, ones)
  ROOT t = (f32[3,2], f32[3], s32[3]) tuple(e, r, i3)
}
"""

# Fusible elementwise chain: the fusion pass has sites here.
CHAIN = """HloModule chain

ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] multiply(a, b)
  d = f32[8] add(c, a)
  e = f32[8] exponential(d)
  ROOT f = f32[8] subtract(e, b)
}
"""


@test
def native_present():
    assert hlox.HAVE_NATIVE, "hlox._hlox did not import"
    assert "default" in hlox.pipelines()


@test
def module_properties_and_roundtrip():
    m = hlox.parse_module(TINY)
    assert m.name == "tiny"
    assert m.entry == "main"
    assert m.computations == ["sum", "main"], m.computations
    assert m.instruction_count == 15, m.instruction_count
    again = hlox.parse_module(m.text)
    assert again.text == m.text
    assert again.hash == m.hash and len(m.hash) == 32
    assert hlox.verify(m) == ""
    m.verify()


@test
def parse_error_is_value_error_with_position():
    try:
        hlox.parse_module("HloModule bad\n\nENTRY main {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] frobnicate(a)\n}\n", "bad.hlo")
    except ValueError as e:
        assert "bad.hlo:5:" in str(e), str(e)
    else:
        raise AssertionError("no error for an unknown opcode")


@test
def run_matches_numpy():
    m = hlox.parse_module(TINY)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4, 2)).astype(np.float32)
    i = np.array([-2, 0, 7], dtype=np.int32)
    e, r, i3 = hlox.run(m, [a, b, i], threads=2)
    assert e.dtype == np.float32 and e.shape == (3, 2)
    np.testing.assert_allclose(e, np.tanh(a.astype(np.float64) @ b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r, a.sum(axis=1), rtol=1e-5, atol=1e-6)
    assert i3.dtype == np.int32
    np.testing.assert_array_equal(i3, i * i + 1)


@test
def run_rejects_bad_inputs():
    m = hlox.parse_module(TINY)
    for bad in ([], [np.zeros((3, 4), np.float32)] * 2 + [np.zeros(4, np.int32)]):
        try:
            hlox.run(m, bad)
        except ValueError:
            continue
        raise AssertionError("accepted bad inputs %r" % (bad,))


@test
def seeded_inputs_are_deterministic():
    m = hlox.parse_module(TINY)
    x, y = hlox.seeded_inputs(m, 3), hlox.seeded_inputs(m, 3)
    assert [v.shape for v in x] == [(3, 4), (4, 2), (3,)]
    assert x[2].dtype == np.int32
    for u, v in zip(x, y):
        np.testing.assert_array_equal(u, v)
    assert not np.array_equal(x[0], hlox.seeded_inputs(m, 4)[0])
    np.testing.assert_allclose(hlox.run(m, x)[1], x[0].sum(axis=1), rtol=1e-5)


@test
def decision_point_features_shapes():
    m = hlox.parse_module(CHAIN)
    p = hlox.next_decision_point(m, "default", {})
    assert p is not None and p["key"].endswith("#0"), p
    f, sites = p["features"], p["sites"]
    n = len(f["node_names"])
    assert f["node_features"].dtype == np.float32 and f["node_features"].shape == (n, len(f["node_columns"]))
    e = f["edge_index"]
    assert e.dtype == np.int64 and e.shape[0] == 2 and e.shape[1] >= 5
    assert e.min() >= 0 and e.max() < n
    assert f["edge_features"].shape == (e.shape[1], len(f["edge_columns"]))
    assert f["site_nodes"].shape == (len(sites),) and f["site_nodes"].dtype == np.int64
    assert (f["site_nodes"] >= 0).all() and (f["site_nodes"] < n).all()
    assert list(f["site_choices"]) == [len(s["choices"]) for s in sites]
    for k, s in enumerate(sites):
        assert s["choices"][0] == "keep"
        anchor = f["node_names"][f["site_nodes"][k]]
        assert anchor.endswith("/" + s["instructions"][0]), (anchor, s)


@test
def apply_decisions_default_equals_no_decisions():
    m = hlox.parse_module(CHAIN)
    decisions = {}
    while True:
        p = hlox.next_decision_point(m, "default", decisions)
        if p is None:
            break
        decisions[p["key"]] = [s["default"] for s in p["sites"]]
    assert decisions, "no decision points on CHAIN"
    explicit = hlox.apply_decisions(m, "default", decisions)
    implicit = hlox.apply_decisions(m, "default", {})
    assert explicit.text == implicit.text
    first = hlox.next_decision_point(m, "default", {})
    keep = {first["key"]: [0] * len(first["sites"])}  # later invocations: default policy
    kept = hlox.apply_decisions(m, "default", keep)
    assert kept.text != implicit.text  # declining every rewrite must differ from the default
    # Same outputs on the same inputs whichever decisions were taken.
    x = hlox.seeded_inputs(m, 0)
    ref = np.exp(x[0] * x[1] + x[0]) - x[1]
    for mod in (explicit, kept):
        np.testing.assert_allclose(hlox.run(mod, x)[0], ref, rtol=1e-5)


@test
def bad_decisions_raise_invalid_decisions():
    m = hlox.parse_module(CHAIN)
    p = hlox.next_decision_point(m, "default", {})
    for bad in ([0] * (len(p["sites"]) + 1), [99] * len(p["sites"])):
        try:
            hlox.apply_decisions(m, "default", {p["key"]: bad})
        except ValueError as e:
            assert "INVALID_DECISIONS" in str(e), str(e)
        else:
            raise AssertionError("accepted %r" % bad)


@test
def evaluate_local_record():
    m = hlox.parse_module(CHAIN)
    rec = hlox.evaluate(m, "default", {}, max_samples=3, time_cap_seconds=0.2)
    assert rec["status"] == "OK", rec
    assert rec["cost"]["median"] > 0 and rec["analytical"]["op_count"] >= 1
    p = hlox.next_decision_point(m, "default", {})
    bad = hlox.evaluate(m, "default", {p["key"]: [7] * 9}, measure=False)
    assert bad["status"] == "INVALID_DECISIONS", bad


@test
def corpus_modules_parse_and_run_seeded():
    for path in corpus_files(smallest=4):
        m = hlox.load_module(path)
        outs = hlox.run(m, hlox.seeded_inputs(m, 0))
        assert outs and all(isinstance(o, np.ndarray) for o in outs), path
        again = hlox.run(hlox.parse_module(m.text), hlox.seeded_inputs(m, 0))
        for u, v in zip(outs, again):
            np.testing.assert_array_equal(u, v)


if __name__ == "__main__":
    run()
