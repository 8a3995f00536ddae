#!/usr/bin/env python3
"""Scratchpad traffic: the analytical model against the trace-driven simulator, and the
scratchpad objective's search against the default decisions (issue 34).

  /usr/bin/python3 bench/scratchpad/agreement.py agree [--target F] [--random N] [--jobs J] MODULE...
      For each module: `hlox scratchpad --simulate` with the default decisions of the
      `scratchpad` pipeline and with N random decision vectors (fusion, layout assignment and
      scratchpad tiling decided at random); prints model, simulated and their difference.
  /usr/bin/python3 bench/scratchpad/agreement.py search [--target F] [--budget B] [--algo A]
          [--surrogate-children N] [--jobs J] MODULE...
      For each module: `hlox search --objective scratchpad` (surrogate-assisted evolution,
      in-process) over the joint point layout-assignment+fusion+scratchpad-tiling (tiling and
      staging sites); simulates the default and the best decisions, gives the floor (the
      traffic with an unbounded scratchpad: each parameter read once, each result written once,
      which no decision can beat), what each decision kind contributed, and measures the CPU time
      of both, paired (`hlox eval --paired-against`).

Everything is deterministic except the CPU times. Deterministic parts run `--jobs` at a time.
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HLOX = os.path.join(ROOT, "build", "bin", "hlox")
# The joint point, in pipeline order; modules without layout sites search the other two.
POINTS = ["layout-assignment+fusion+scratchpad-tiling", "fusion+scratchpad-tiling", "scratchpad-tiling"]


def scratchpad(module, target, extra, max_touches):
    cmd = [HLOX, "scratchpad", module, "--target", target, "--json"] + extra
    if max_touches > 1:
        cmd += ["--simulate", "--max-touches", str(max_touches)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout) else str(p.returncode)}
    return json.loads(p.stdout)


def agree_one(module, target, seeds, max_touches):
    rows = []
    for seed in [None] + list(range(seeds)):
        extra = [] if seed is None else ["--random", str(seed)]
        r = scratchpad(module, target, extra, max_touches)
        rows.append((module, "default" if seed is None else f"random {seed}", r))
    return rows


def cmd_agree(a):
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for got in ex.map(lambda m: agree_one(m, a.target, a.random, a.max_touches), a.modules):
            rows.extend(got)
    print(f"target {a.target}")
    print(f"{'module':40s} {'decisions':10s} {'model bytes':>14s} {'simulated':>14s} {'diff':>8s}")
    within, total, worst = 0, 0, 0.0
    for module, what, r in rows:
        name = os.path.basename(module).replace(".hlo", "")
        if "error" in r:
            print(f"{name:40s} {what:10s} {'-':>14s} {'-':>14s} {'':>8s} ({r['error'][:60]})")
            continue
        m, s = r["model"]["traffic_bytes"], r["simulated"]["traffic_bytes"]
        d = r["model_vs_simulated"]
        total += 1
        within += abs(d) <= 0.10
        worst = max(worst, abs(d))
        print(f"{name:40s} {what:10s} {m:14.0f} {s:14.0f} {100 * d:+7.2f}%")
    print(f"within 10%: {within} of {total}; largest |diff| {100 * worst:.2f}%")


def search_one(module, a, out):
    name = os.path.basename(module).replace(".hlo", "")
    d = os.path.join(out, name)
    summary_path = os.path.join(d, "summary.json")
    if a.reuse and os.path.exists(summary_path):
        point = json.load(open(summary_path))["decision_point"]
    else:
        env = dict(os.environ, HLOX_SCRATCHPAD_TARGET=os.path.abspath(a.target))
        for point in POINTS:
            cmd = [HLOX, "search", module, "--pipeline", "scratchpad", "--point", point, "--objective", "scratchpad",
                   "--algo", a.algo, "--budget", str(a.budget), "--in-process", "--out", d, "--seed", "0",
                   "--no-verdict"]
            if a.algo == "evolution":
                cmd += ["--surrogate-children", str(a.surrogate_children)]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if p.returncode == 0 or "no decision point" not in p.stderr:
                break
        if p.returncode != 0:
            return name, {"error": (p.stderr or p.stdout).strip()[-200:]}
    best = os.path.join(d, "best_decisions.json")
    base = scratchpad(module, a.target, [], a.max_touches)
    got = scratchpad(module, a.target, ["--decisions", best], a.max_touches)
    summary = json.load(open(os.path.join(d, "summary.json")))
    # What each decision kind contributed: the best decisions of the earlier parts only (later
    # invocations take their defaults; their sites depend on the earlier decisions), modelled.
    parts, changed = {}, {}
    decisions = json.load(open(best))
    keys = [k for k in point.split("+") if k in decisions["decisions"]]  # the point's parts, in order
    for n in range(1, len(keys)):
        sub = dict(decisions, decisions={k: decisions["decisions"][k] for k in keys[:n]})
        f = os.path.join(d, f"best_first{n}.json")
        json.dump(sub, open(f, "w"))
        r = scratchpad(module, a.target, ["--decisions", f], 1)  # the model only: no simulation budget
        parts["+".join(keys[:n])] = r.get("model", {}).get("traffic_bytes")
    default_file = os.path.join(d, "default_decisions.json")
    scratchpad(module, a.target, ["--save-decisions", default_file], 1)
    defaults = json.load(open(default_file))["decisions"]
    rules = site_rules(module, decisions, keys[-1], d) if keys else []
    for k in keys:
        mine, dflt = decisions["decisions"][k], defaults.get(k)
        if dflt is not None and len(dflt) == len(mine):
            diff = [i for i, (x, y) in enumerate(zip(mine, dflt)) if x != y]
            if k == keys[-1] and rules:
                for rule in sorted(set(rules)):
                    n = sum(1 for i in diff if rules[i] == rule)
                    if n:
                        changed[f"{k} {rule}"] = f"{n} of {rules.count(rule)}"
            elif diff:
                changed[k] = f"{len(diff)} of {len(mine)}"
        else:
            changed[k] = "other sites"
    if rules and "sp_stage" in rules:
        # Staging's share: the best decisions with every staging site back at split.
        k = keys[-1]
        sub = json.loads(json.dumps(decisions))
        sub["decisions"][k] = [0 if r == "sp_stage" else v for r, v in zip(rules, decisions["decisions"][k])]
        f = os.path.join(d, "best_without_staging.json")
        json.dump(sub, open(f, "w"))
        parts["all but staging"] = scratchpad(module, a.target, ["--decisions", f], 1).get("model", {}).get("traffic_bytes")
    floor = scratchpad(module, a.target, ["--scratchpad", str(1 << 40)], 1).get("model", {}).get("traffic_bytes")
    return name, {"default": base, "best": got, "summary": summary, "best_file": best, "point": point,
                  "parts": parts, "changed": changed, "floor": floor}


def site_rules(module, decisions, key, d):
    """The rule of each site of invocation `key` (its sites depend on the earlier decisions)."""
    earlier = dict(decisions, decisions={k: v for k, v in decisions["decisions"].items() if k != key})
    f = os.path.join(d, "before_" + key.replace("#", "_") + ".json")
    json.dump(earlier, open(f, "w"))
    p = subprocess.run([HLOX, "sites", module, "--pipeline", decisions.get("pipeline", "scratchpad"), "--decisions", f,
                        "--json"], capture_output=True, text=True)
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        return []
    return [site["rule"] for site in j.get("sites", [])] if j.get("key") == key else []


def cmd_search(a):
    out = a.out or tempfile.mkdtemp(prefix="hlox-sp-search-")
    results = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        for name, r in ex.map(lambda m: search_one(m, a, out), a.modules):
            results[name] = r
    # CPU time of the best against the default, paired, one module at a time (quiet machine).
    for name, r in results.items():
        if "error" in r or a.no_cpu:
            continue
        if all(k.startswith("scratchpad-tiling") for k in r.get("changed", {})):
            # Only scratchpad decisions changed: the CPU runtime reads none of them, so both sides
            # run the same program.
            r["cpu"] = {"same_program": True}
            continue
        module = [m for m in a.modules if os.path.basename(m).replace(".hlo", "") == name][0]
        p = subprocess.run([HLOX, "eval", module, "--decisions", r["best_file"], "--paired-against", "default",
                            "--in-process", "--json"], capture_output=True, text=True)
        try:
            j = json.loads(p.stdout)
            r["cpu"] = j.get("paired", j)
        except json.JSONDecodeError:
            r["cpu"] = {"error": (p.stderr or p.stdout)[-200:]}
    algo = a.algo + (f" (surrogate children {a.surrogate_children})" if a.algo == "evolution" else "")
    print(f"target {a.target}; search: {algo}, budget {a.budget}, joint point (first that exists of "
          f"{', '.join(POINTS)}); out {out}")
    print(f"{'module':36s} {'default sim':>12s} {'best sim':>12s} {'change':>8s} {'model chg':>9s} "
          f"{'floor/dflt':>10s} {'CPU speedup of the best, paired [95%], verdict':>34s}")
    reduced = 0
    for name, r in results.items():
        if "error" in r:
            print(f"{name:36s} error: {r['error'][:80]}")
            continue
        b, g = r["default"], r["best"]
        if "error" in b or "error" in g:
            print(f"{name:36s} simulation: {(b.get('error') or g.get('error'))[:80]}")
            continue
        sb, sg = b["simulated"]["traffic_bytes"], g["simulated"]["traffic_bytes"]
        mb, mg = b["model"]["traffic_bytes"], g["model"]["traffic_bytes"]
        cpu = r.get("cpu", {})
        ctext = "-"
        if "speedup" in cpu:
            ctext = f"{cpu['speedup']:.3f} [{cpu['ci_low']:.3f}, {cpu['ci_high']:.3f}] {cpu.get('outcome', '')}"
        elif cpu.get("same_program"):
            ctext = "same CPU program"
        reduced += sg <= 0.8 * sb
        floor = r.get("floor")
        ftext = f"{floor / mb:.3f}" if floor else "-"
        print(f"{name:36s} {sb:12.4g} {sg:12.4g} {100 * (sg / sb - 1):+7.1f}% {100 * (mg / mb - 1):+8.1f}% "
              f"{ftext:>10s} {ctext:>24s}")
        steps = ", ".join(f"{k}: {100 * (v / mb - 1):+.1f}%" for k, v in r.get("parts", {}).items() if v)
        print(f"{'':36s} sites changed from the default: {r.get('changed')}; modelled change with the first "
              f"parts only: {steps or '-'}")
    print(f"simulated traffic reduced by 20% or more: {reduced} of {len(results)}")
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("agree", "search"):
        p = sub.add_parser(name)
        p.add_argument("modules", nargs="+")
        p.add_argument("--target", default=os.path.join(ROOT, "targets", "scratchpad", "edge-2mib.json"))
        p.add_argument("--jobs", type=int, default=2)
        p.add_argument("--max-touches", type=int, default=400_000_000)
    sub.choices["agree"].add_argument("--random", type=int, default=3)
    sub.choices["search"].add_argument("--budget", type=int, default=500)
    sub.choices["search"].add_argument("--algo", default="evolution")
    sub.choices["search"].add_argument("--surrogate-children", type=int, default=6)
    sub.choices["search"].add_argument("--out", default="")
    sub.choices["search"].add_argument("--no-cpu", action="store_true")
    sub.choices["search"].add_argument("--reuse", action="store_true",
                                       help="take the searches already in --out (summary.json) instead of searching")
    a = ap.parse_args()
    if not os.path.exists(HLOX):
        sys.exit(f"build {HLOX} first")
    cmd_agree(a) if a.cmd == "agree" else cmd_search(a)


if __name__ == "__main__":
    main()
