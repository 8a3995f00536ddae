"""Pipelines composed in Python from hlox's pass labels, with decisions per invocation.

The native core names its pipelines ("default", "no-fuse", ...) and runs any single pass as
"only:<label>". A ComposedPipeline strings such single-pass runs together in Python, so a user
can try an order the native table lacks ("inline, simplify, cse, dce") and still decide every
site. Invocation keys follow docs/DECISIONS.md: "<label>#<k>", k counting that label's runs
within the composed pipeline from 0, so a decisions dict reads the same as for a native pipeline.

    p = hlox.compose_pipeline(["inline", (["simplify", "cse", "dce"], 8), "fusion"])
    point = p.next_decision_point(m, {})     # like hlox.next_decision_point, or None
    out = p.apply(m, {"cse#0": [1, 0, 1]})   # undecided invocations take the pass's default

A step is a pass label, (label, n): the pass run up to n times until it leaves the module
unchanged (same hash), or (list of steps, n): a fixpoint stage, the whole list repeated up to n
times until one round changes nothing, as the native pipelines' fixpoint stages do (docs/
DECISIONS.md). A decision vector is checked by the native pass (ValueError "INVALID_DECISIONS:
..."); a key for an invocation that never ran is an error too, so a typo is not silently ignored.
"""
from . import _hlox as native


class ComposedPipeline:
    """A sequence of passes run one at a time through the native "only:<label>" pipelines."""

    def __init__(self, steps):
        self.steps = _normalize(list(steps), list(native.pass_labels()))

    def __repr__(self):
        return "ComposedPipeline(%r)" % (_describe(self.steps),)

    def next_decision_point(self, module, decisions=None):
        """{key, sites, features, module} of the first invocation with sites and no entry in
        `decisions` (module = its input), or None when every invocation is decided."""
        for key, label, before, _ in self._walk(module, decisions or {}, stop_at_undecided=True):
            point = native.next_decision_point(before, "only:" + label, {})
            if point is not None:
                point["key"] = key
                return point
        return None

    def apply(self, module, decisions=None):
        """The module after every step, decided invocations with their vectors."""
        trace = self.trace(module, decisions)
        return trace[-1][2] if trace else module

    def trace(self, module, decisions=None):
        """[(key, label, module after)] for every invocation that ran, in order."""
        decisions = dict(decisions or {})
        out = [(key, label, after) for key, label, _, after in self._walk(module, decisions, False)]
        unused = sorted(set(decisions) - {key for key, _, _ in out})
        if unused:
            raise ValueError("INVALID_DECISIONS: unknown invocation key(s) %s (ran %s)"
                             % (unused, ", ".join(key for key, _, _ in out)))
        return out

    def _walk(self, module, decisions, stop_at_undecided):
        """Yields (key, label, module before, module after) per invocation. With
        stop_at_undecided, an undecided invocation is yielded before it runs (after = None) and
        runs with its default only if the caller continues (it had no sites)."""
        state = {"module": module, "counts": {}}
        yield from _walk_steps(self.steps, state, decisions, stop_at_undecided)


def compose_pipeline(steps):
    """A ComposedPipeline of `steps` (see the module docstring)."""
    return ComposedPipeline(steps)


def _normalize(steps, labels):
    """[("pass", label, runs) | ("stage", [steps], runs)], checking labels and run counts."""
    out = []
    for step in steps:
        body, runs = (step, 1) if isinstance(step, (str, list)) else (step[0], int(step[1]))
        if runs < 1:
            raise ValueError("step %r: run count must be at least 1, got %d" % (body, runs))
        if isinstance(body, list):
            out.append(("stage", _normalize(body, labels), runs))
        elif body in labels:
            out.append(("pass", body, runs))
        else:
            raise ValueError("unknown pass %r; hlox's passes are: %s" % (body, ", ".join(labels)))
    return out


def _describe(steps):
    out = []
    for kind, body, runs in steps:
        body = _describe(body) if kind == "stage" else body
        out.append(body if runs == 1 and kind == "pass" else (body, runs))
    return out


def _walk_steps(steps, state, decisions, stop_at_undecided):
    for kind, body, runs in steps:
        for _ in range(runs):
            before = state["module"].hash
            if kind == "stage":
                yield from _walk_steps(body, state, decisions, stop_at_undecided)
            else:
                yield from _run_pass(body, state, decisions, stop_at_undecided)
            if state["module"].hash == before:
                break  # a fixpoint: another round would change nothing


def _run_pass(label, state, decisions, stop_at_undecided):
    counts, module = state["counts"], state["module"]
    key = "%s#%d" % (label, counts.get(label, 0))
    counts[label] = counts.get(label, 0) + 1
    if stop_at_undecided and key not in decisions:
        yield key, label, module, None
    chosen = {label + "#0": list(decisions[key])} if key in decisions else {}
    try:
        after = native.apply_decisions(module, "only:" + label, chosen)
    except ValueError as e:  # name the composed invocation, not "only:"'s <label>#0
        raise ValueError(str(e).replace(label + "#0", key)) from None
    if not stop_at_undecided:
        yield key, label, module, after
    state["module"] = after
