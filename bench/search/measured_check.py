"""Measured check of a deterministic generalization run (used by generalization_det.py): are the
configurations the searches call best on the model objective (roofline or ops) really faster?

Per test module, for one seed (--check-seed, default 0), it takes the final best configuration of
random search and of guided search from both starts (from a random start: counted from the shared
random start, evaluation 2, which is also measured), and the default itself (a control: the
default against itself should give 1 with an interval holding 1), and measures each with paired
measurement against the default pipeline (`hlox eval --paired-against default`, the same call as
the measured protocol's verdicts). Beside each measured speedup (point value and bootstrap 95%
interval) it prints the objective's own speedup over the default, cost(default) / cost(config).

A configuration is compared when its objective speedup differs from 1 by more than --min-gain
(relative): the signs agree when the measured point value lies on the same side of 1; "confirmed"
when, in addition, the interval excludes 1, "contradicted" when the signs disagree and the
interval excludes 1. The same is counted for the gain over the run's reference (from a random
start: config over the shared start, measured ratio of the two paired speedups). Configurations
with no objective change are counted apart (how many still differ measurably: what the objective
cannot see); a search result equal to the default is marked and left out. Per module, the
verdict is the one of guided search's from-default configuration when it has an objective gain
(the configuration a user of the search would take), else of its from-random one.
Measurements are cached in WORKDIR/<module>/measured_s<seed>.json (reused with --reuse)."""

import json
import os


def _final_best(entries, ref):
    """Decisions and cost of the run's final best from the reference (0-based `ref`) on; the
    earliest one at that cost."""
    best = ref
    for i in range(ref + 1, len(entries)):
        if entries[i][1] < entries[best][1]:
            best = i
    return entries[best]


def _sign(x, tol):
    return 1 if x > 1 + tol else (-1 if x < 1 - tol else 0)


def _measure(paired, path, out, key, configs, seed, reuse):
    """{name: (speedup, ci_low, ci_high)} by paired measurement against the default pipeline;
    cached in `out`/measured_s<seed>.json together with the decisions measured."""
    cache_path = os.path.join(out, f"measured_s{seed}.json")
    cache = {}
    if reuse and os.path.exists(cache_path):
        with open(cache_path) as f:
            cache = json.load(f)
    res, by_vector = {}, {}
    for name, d in configs:
        hit = cache.get(name)
        if hit and hit["d"] == d:
            res[name] = tuple(hit["paired"])
        elif tuple(d) in by_vector:
            res[name] = by_vector[tuple(d)]
        else:
            res[name] = paired(path, out, key, d, f"check_s{seed}_{name}", seed)
        by_vector[tuple(d)] = res[name]
        cache[name] = {"d": d, "paired": list(res[name])}
    with open(cache_path, "w") as f:
        json.dump(cache, f)
    return res


class MeasuredCheck:
    """Collects the rows of the measured check module by module, then prints table and summary."""

    def __init__(self, paired, seed, min_gain, reuse):
        self.paired, self.seed, self.min_gain, self.reuse = paired, seed, min_gain, reuse
        # (module, config, objective speedup, measured, objective ref gain, measured ref gain, is the default)
        self.rows = []

    def add(self, module, path, out, key, rsearch, guided):
        """Measures one module's configurations; `rsearch` is random search's log entries,
        `guided` {start: guided search's log entries}, all of seed self.seed."""
        default = rsearch[0]
        start = rsearch[1]
        configs = [("default", default[0]), ("random_start", start[0]),
                   ("random", _final_best(rsearch, 0)[0]), ("random_from_start", _final_best(rsearch, 1)[0]),
                   ("guided_default", _final_best(guided["default"], 0)[0]),
                   ("guided_random", _final_best(guided["random"], 1)[0])]
        cost = {"default": default[1], "random_start": start[1], "random": _final_best(rsearch, 0)[1],
                "random_from_start": _final_best(rsearch, 1)[1],
                "guided_default": _final_best(guided["default"], 0)[1],
                "guided_random": _final_best(guided["random"], 1)[1]}
        meas = _measure(self.paired, path, out, key, configs, self.seed, self.reuse)
        s0 = meas["random_start"]
        for name, _ in configs:
            obj = default[1] / cost[name] if cost[name] > 0 else 0.0
            ref_obj, ref_meas = obj, meas[name]
            if name in ("random_from_start", "guided_random"):
                ref_obj = start[1] / cost[name] if cost[name] > 0 else 0.0
                ref_meas = ((meas[name][0] / s0[0], meas[name][1] / s0[2], meas[name][2] / s0[1])
                            if s0[0] > 0 and s0[1] > 0 else (0.0, 0.0, 0.0))
            same = name != "default" and dict(configs)[name] == default[0]
            self.rows.append((module, name, obj, meas[name], ref_obj, ref_meas, same))

    def _verdict(self, obj, meas):
        """'agree' / 'confirmed' / 'disagree' / 'contradicted', or '' when the objective shows no
        change or the candidate failed."""
        so = _sign(obj, self.min_gain)
        if so == 0 or not meas[0] > 0:
            return ""
        agree = (meas[0] > 1) == (so > 0)
        firm = meas[1] > 1 or meas[2] < 1
        return ("confirmed" if firm else "agree") if agree else ("contradicted" if firm else "disagree")

    def _counts(self, name, pairs):
        v = [self._verdict(o, m) for o, m in pairs]
        n = sum(1 for x in v if x)
        agree = sum(1 for x in v if x in ("agree", "confirmed"))
        ties = [m for (o, m) in pairs if _sign(o, self.min_gain) == 0 and m[0] > 0]
        blind = sum(1 for m in ties if m[1] > 1 or m[2] < 1)
        print(f"- {name}: {n} with an objective change; measured sign agrees in {agree} "
              f"({v.count('confirmed')} with the interval excluding 1), disagrees in {n - agree} "
              f"({v.count('contradicted')} with the interval excluding 1); {len(ties)} with no objective "
              f"change, of which {blind} measurably differ (interval excluding 1)")

    def report(self):
        """Prints the check's table and summary lines."""
        print(f"\nmeasured check (seed {self.seed}): final best configurations, paired against the default "
              "pipeline\n")
        print("| test module | configuration | objective speedup over default | measured speedup over default "
              "[95% CI] | verdict | gain over the reference: objective / measured |")
        print("|---|---|---|---|---|---|")
        for m, name, obj, (s, lo, hi), ref_obj, ref_meas, same in self.rows:
            ref = ""
            if name in ("random_from_start", "guided_random"):
                ref = f"x{ref_obj:.3f} / x{ref_meas[0]:.3f} [{ref_meas[1]:.3f}, {ref_meas[2]:.3f}]"
            name += " (= default)" if same else ""
            print(f"| {m} | {name} | x{obj:.3f} | x{s:.3f} [{lo:.3f}, {hi:.3f}] | {self._verdict(obj, (s, lo, hi))} "
                  f"| {ref} |")
        ctrl = [r for r in self.rows if r[1] == "default"]
        holds = sum(1 for r in ctrl if r[3][1] <= 1 <= r[3][2])
        print(f"\ncontrol (the default against itself): interval holds 1 in {holds} of {len(ctrl)} modules")
        cfg = [r for r in self.rows if r[1] != "default" and not r[6]]
        self._counts("configurations against the default", [(r[2], r[3]) for r in cfg])
        self._counts("search results over their reference (from the random start: over the shared start)",
                     [(r[4], r[5]) for r in cfg if r[1] != "random_start"])
        mods = {}
        for m, name, obj, meas, _, _, _ in self.rows:
            mods.setdefault(m, {})[name] = (obj, meas)
        per = []
        for m, d in mods.items():
            pick = "guided_default" if _sign(d["guided_default"][0], self.min_gain) else "guided_random"
            per.append(self._verdict(*d[pick]))
        n = sum(1 for x in per if x)
        agree = sum(1 for x in per if x in ("agree", "confirmed"))
        print(f"- per module (guided's from-default result, else its from-random one): {n} of {len(per)} modules "
              f"with an objective change; measured sign agrees in {agree} ({per.count('confirmed')} with the "
              f"interval excluding 1), disagrees in {n - agree} ({per.count('contradicted')} with the interval "
              f"excluding 1)")
