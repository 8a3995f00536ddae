#!/usr/bin/env python3
"""Times two hlox builds against each other on the same modules, interleaved in one run.

Use it to show that a change to the runtime (a new build option, a new kernel level) costs nothing:
the baseline is another binary (for instance the parent commit built with -march=native), never a
figure from another run. For each module and thread count it runs R rounds; each round runs
`hlox run --repeat N --json` once with each binary, in an order that alternates between rounds, and
keeps the run's fastest call (time_min_s). It prints each binary's best time over the rounds, the
ratio of those bests (new / base: < 1 means the new build is faster) and the median of the per-round
ratios, and whether the two builds' output checksums agree (they may not where dots or convolutions
use other tile shapes).

With --pipeline P each binary first optimizes the module with its own `hlox opt --pipeline P`, so
each side times what it would run itself.

Usage: /usr/bin/python3 bench/runtime/compare_builds.py --base OLD_HLOX --new NEW_HLOX
           [--base-env K=V,...] [--new-env K=V,...] [--threads 1,2] [--rounds 5] [--repeat 3]
           [--pipeline default] [--json OUT] MODULE.hlo ...
--base-env/--new-env add environment variables to one side only (e.g. --new-env HLOX_ISA=avx2).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def parse_env(text):
    env = {}
    for item in filter(None, (text or "").split(",")):
        key, _, value = item.partition("=")
        env[key] = value
    return env


def run(binary, env, path, threads, repeat):
    p = subprocess.run([binary, "run", path, "--threads", str(threads), "--repeat", str(repeat), "--json"],
                       env=dict(os.environ, **env), capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{binary} run {path}: " + (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])
    out = json.loads(p.stdout)
    return out["time_min_s"], [o["checksum"] for o in out["outputs"]]


def optimize(binary, env, path, pipeline, work, tag):
    out = os.path.join(work, f"{tag}_{os.path.basename(path)}")
    p = subprocess.run([binary, "opt", path, "--pipeline", pipeline, "-o", out],
                       env=dict(os.environ, **env), capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"{binary} opt {path}: " + (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--base-env", default="")
    ap.add_argument("--new-env", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pipeline")
    ap.add_argument("--json")
    ap.add_argument("modules", nargs="+")
    a = ap.parse_args()
    if a.rounds < 1 or a.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")
    sides = [("base", a.base, parse_env(a.base_env)), ("new", a.new, parse_env(a.new_env))]
    threads = [int(t) for t in a.threads.split(",")]
    print(f"# compare_builds: base {a.base} {a.base_env or ''} | new {a.new} {a.new_env or ''}; "
          f"{a.rounds} rounds x `run --repeat {a.repeat}` (fastest call), order alternating; "
          f"pipeline {a.pipeline or 'none'}; cores {os.cpu_count()}; load {os.getloadavg()[0]:.2f}")
    print("| module | threads | base s | new s | new/base (bests) | new/base (median of rounds) | same checksums |")
    print("|---|---:|---:|---:|---:|---:|---|")
    rows, failures = [], 0
    with tempfile.TemporaryDirectory(prefix="hlox_cmp_") as work:
        for module in a.modules:
            name = os.path.basename(module)[:-4] if module.endswith(".hlo") else os.path.basename(module)
            try:
                paths = {tag: optimize(b, env, module, a.pipeline, work, tag) if a.pipeline else module
                         for tag, b, env in sides}
                for t in threads:
                    best = {"base": float("inf"), "new": float("inf")}
                    sums = {}
                    ratios = []
                    for r in range(a.rounds):
                        order = sides if r % 2 == 0 else sides[::-1]
                        this = {}
                        for tag, binary, env in order:
                            this[tag], sums[tag] = run(binary, env, paths[tag], t, a.repeat)
                            best[tag] = min(best[tag], this[tag])
                        ratios.append(this["new"] / this["base"])
                    row = {"module": name, "threads": t, "base_s": best["base"], "new_s": best["new"],
                           "ratio_best": best["new"] / best["base"], "ratio_median": statistics.median(ratios),
                           "ratios": ratios, "same_checksums": sums["base"] == sums["new"]}
                    rows.append(row)
                    print(f"| {name} | {t} | {row['base_s']:.4g} | {row['new_s']:.4g} | {row['ratio_best']:.3f} | "
                          f"{row['ratio_median']:.3f} | {'yes' if row['same_checksums'] else 'no'} |", flush=True)
            except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                failures += 1
                print(f"| {name} | - | failed: {e} | | | | |", flush=True)
    if rows:
        print(f"# geometric mean new/base (bests): "
              f"{statistics.geometric_mean([r['ratio_best'] for r in rows]):.3f} over {len(rows)} rows")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"base": a.base, "new": a.new, "base_env": a.base_env, "new_env": a.new_env,
                       "rows": rows}, fh, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
