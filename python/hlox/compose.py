"""Pipelines composed in Python from hlox's pass labels, with decisions per invocation.

The native core names its pipelines ("default", "no-fuse", ...) and runs any single pass as
"only:<label>". A ComposedPipeline strings such single-pass runs together in Python, so a user
can try an order the native table lacks ("inline, simplify, cse, dce") and still decide every
site. Invocation keys follow docs/DECISIONS.md: "<label>#<k>", k counting that label's runs
within the composed pipeline from 0, so a decisions dict reads the same as for a native pipeline.

    p = hlox.compose_pipeline(["inline", "simplify", "cse", ("dce", 4)])
    point = p.next_decision_point(m, {})     # like hlox.next_decision_point, or None
    out = p.apply(m, {"cse#0": [1, 0, 1]})   # undecided invocations take the pass's default

A step ("label", n) runs the pass up to n times, until it leaves the module unchanged (same
hash), as a fixpoint stage does. A decision vector is checked by the native pass (ValueError
"INVALID_DECISIONS: ..."); a key for an invocation that never ran is an error too, so a typo is
not silently ignored.
"""
from . import _hlox as native


class ComposedPipeline:
    """A sequence of passes run one at a time through the native "only:<label>" pipelines."""

    def __init__(self, steps):
        labels = list(native.pass_labels())
        self.steps = []
        for step in steps:
            label, runs = (step, 1) if isinstance(step, str) else (step[0], int(step[1]))
            if label not in labels:
                raise ValueError("unknown pass %r; hlox's passes are: %s" % (label, ", ".join(labels)))
            if runs < 1:
                raise ValueError("pass %r: run count must be at least 1, got %d" % (label, runs))
            self.steps.append((label, runs))

    def __repr__(self):
        return "ComposedPipeline(%r)" % [s if n == 1 else (s, n) for s, n in self.steps]

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
        return self.trace(module, decisions)[-1][2] if self.steps else module

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
        run with its default only if the caller continues (it had no sites)."""
        counts = {}
        for label, runs in self.steps:
            for _ in range(runs):
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
                changed = after.hash != module.hash
                module = after
                if not changed:
                    break


def compose_pipeline(steps):
    """A ComposedPipeline of `steps`: pass labels (hlox.pass_labels()) or (label, max runs)."""
    return ComposedPipeline(steps)
