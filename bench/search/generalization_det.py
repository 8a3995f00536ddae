"""The generalization table under a deterministic objective (`--objective roofline` or `ops`),
used by generalization.py. The cost of a configuration is then a pure function of the module
and its decisions (the roofline objective: FLOPs and bytes per kernel under the module's fusion,
with calibrated peaks; no run), so a search's own costs are its result: no paired verdict and
no noise reference are needed. The script checks that claim (same seed, same log) first.

Per (test module, start, seed): random search runs once (it ignores --start, so the same run
serves both starts), guided search from the default and from a random configuration. The
reference is the default (evaluation 1) from the default and the shared random start
(evaluation 2, the same vector for both algorithms) from a random start. A run's curve is its
best-so-far cost from the reference on; its result is the final best, reached at the first
evaluation where the curve attains it. A case is a (module, start, seed) where random search
improves on the reference by more than --min-gain (relative); guided search reaches random's
result at the first evaluation where its curve is at or below random's final cost (strictly:
the objective is exact). The ratio is guided's evaluations over random's; "within half" means
ratio <= 0.5; not reached counts as an infinite ratio. From the default, runs where neither
search beats the default by --min-gain are counted apart (the default is the best either finds:
roofline-optimal as far as the searches can tell). Last, with --check-seed S (default 0), the
measured check (measured_check.py): whether the objective's gains are real speedups, by paired
measurement of each search's final configuration of seed S against the default pipeline."""

import math
import os

import measured_check


def best_curve(entries, ref):
    """Best-so-far cost after each evaluation (1-based index t -> curve[t-1]), counted from the
    reference (0-based `ref`) on; evaluations before it carry the reference's cost."""
    out, best = [], entries[ref][1]
    for i, (_, c) in enumerate(entries):
        if i > ref and c < best:
            best = c
        out.append(best)
    return out


def result(curve):
    """(final best cost, first evaluation where the curve reaches it)."""
    final = curve[-1]
    return final, next(t + 1 for t, c in enumerate(curve) if c <= final)


def median(v):
    v = sorted(v)
    if not v:
        return math.nan
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def summary(name, cs):
    """Prints one summary line over cases (guided evaluations or inf, random evaluations)."""
    if not cs:
        print(f"- {name}: no cases")
        return
    reached = sum(1 for g, _ in cs if math.isfinite(g))
    half = sum(1 for g, r in cs if g <= r / 2)
    print(f"- {name}: {len(cs)} cases; guided reached random's result in {reached}, within half of random's "
          f"evaluations in {half}; median evaluations ratio {median([g / r for g, r in cs]):.2f}")


def check_determinism(search, path, out, objective, model, budget):
    """Runs guided search twice with the same seed (both starts); True when the logs agree."""
    same = True
    for start in ("default", "random"):
        logs = [search(path, "guided", budget, 0, os.path.join(out, f"{start}{k}"), objective, start, model, False)
                for k in (0, 1)]
        same &= logs[0] == logs[1]
    return same


def run_table(a, search, model, tmp, paired=None):
    """Runs the searches of the deterministic protocol and prints the table and summary; with
    `paired` and a.check_seed >= 0, also the measured check (measured_check.py)."""
    tests = a.test.split(",")
    first = os.path.join(a.corpus, tests[0] + ".hlo")
    det = check_determinism(search, first, os.path.join(tmp, "determinism"), a.objective, model, min(a.budget, 60))
    print(f"determinism (guided, seed 0, both starts, {tests[0]}, run twice): "
          f"{'identical logs' if det else 'LOGS DIFFER'}\n")
    print(f"objective {a.objective}, budget {a.budget}, seeds {a.seeds}, min gain {a.min_gain}\n")
    print("| test module | sites | start | random: improvement | guided: improvement | evals guided needs to reach "
          "random's result (random needed), per seed |")
    print("|---|---|---|---|---|---|")
    cases = {"default": [], "random": []}
    optimal, better, worse, start_mismatch = [], {"default": 0, "random": 0}, {"default": 0, "random": 0}, 0
    guided_only = {"default": 0, "random": 0}  # runs where only guided beats the reference
    check = measured_check.MeasuredCheck(paired, a.check_seed, a.min_gain, a.reuse) \
        if paired and 0 <= a.check_seed < a.seeds else None
    for m in tests:
        path = os.path.join(a.corpus, m + ".hlo")
        runs = {}
        for s in range(a.seeds):
            runs[("rsearch", s)] = search(path, "random", a.budget, s, os.path.join(tmp, m, f"r{s}"), a.objective,
                                         "default", None, a.reuse)
            for start in ("default", "random"):
                runs[(start, s)] = search(path, "guided", a.budget, s, os.path.join(tmp, m, start, f"g{s}"),
                                          a.objective, start, model, a.reuse)
        sites = len(runs[("rsearch", 0)][1][0][0])
        if check:
            cs = a.check_seed
            check.add(m, path, os.path.join(tmp, m), runs[("rsearch", cs)][0], runs[("rsearch", cs)][1],
                      {start: runs[(start, cs)][1] for start in ("default", "random")})
        for start in ("default", "random"):
            ref = 0 if start == "default" else 1
            imp_r, imp_g, cells = [], [], []
            for s in range(a.seeds):
                er, eg = runs[("rsearch", s)][1], runs[(start, s)][1]
                if ref == 1 and er[1][0] != eg[1][0]:
                    start_mismatch += 1
                base = er[ref][1]
                (fr, tr), (fg, _) = result(best_curve(er, ref)), result(best_curve(eg, ref))
                cg = best_curve(eg, ref)
                imp_r.append(base / fr - 1)
                imp_g.append(base / fg - 1)
                better[start] += fg < fr * (1 - 1e-12)
                worse[start] += fr < fg * (1 - 1e-12)
                if base / fr - 1 <= a.min_gain:
                    if base / fg - 1 <= a.min_gain:
                        cells.append("neither beats the reference")
                        if start == "default":
                            optimal.append((m, s))
                    else:
                        cells.append(f"random: no gain (guided +{100 * (base / fg - 1):.1f}%)")
                        guided_only[start] += 1
                    continue
                need = next((t + 1 for t, c in enumerate(cg) if c <= fr), math.inf)
                cases[start].append((need, tr))
                cells.append(f"{need} ({tr})" if math.isfinite(need) else f"not reached ({tr})")
            mean = lambda v: 100 * sum(v) / len(v)
            print(f"| {m} | {sites} | {start} | {mean(imp_r):.1f}% | {mean(imp_g):.1f}% | {', '.join(cells)} |")
    print("\nImprovement: the reference's cost over the run's best, minus 1, averaged over the seeds.")
    if start_mismatch:
        print(f"WARNING: {start_mismatch} runs from a random start did not share random search's start vector")
    for start in ("default", "random"):
        n = a.seeds * len(tests)
        print(f"from the {start if start == 'default' else 'random start'}: guided's final cost lower than random's "
              f"in {better[start]} of {n} runs, higher in {worse[start]}; only guided beat the reference by "
              f"more than {a.min_gain:.1%} in {guided_only[start]}")
    mods = sorted({m for m, _ in optimal})
    print(f"from the default, neither search beat the default by more than {a.min_gain:.1%} in {len(optimal)} runs "
          f"({', '.join(mods) if mods else 'none'})\n")
    summary("guided, all", cases["default"] + cases["random"])
    summary("guided, from the default", cases["default"])
    summary("guided, from a random configuration", cases["random"])
    if check:
        check.report()
    return 0
