#!/usr/bin/env python3
"""Runs every corpus module with one hlox binary at each instruction-set level this CPU supports
(HLOX_ISA=generic, avx2, avx512) and at 1 and 2 threads, and compares output checksums.

Within a level the outputs must be the same bits on 1 and 2 threads (the runtime never splits a
sum by thread count). Across levels, elementwise math is the same bits (runtime/isa/simd/math.h) but
dots and convolutions use other tile shapes, so checksums may differ; the script then reports the
largest difference of the outputs' finite sums, relative to their magnitude, between each level
and the best one.

Usage: /usr/bin/python3 bench/runtime/corpus_levels.py [--hlox build/bin/hlox] [--corpus DIR]
           [--filter SUBSTRING] [--levels avx2,avx512] [--jobs N] [--json OUT]
--levels picks some of the supported levels (default: all of them); --jobs N runs N modules at once
(each run uses at most 2 threads, so N up to half the cores keeps the runs apart; the times in the
table are then only indicative).
Exit status 1 when some level gives different bits on 1 and 2 threads, or a run fails.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(hlox, path, level, threads, timeout):
    env = dict(os.environ, HLOX_ISA=level)
    t0 = time.time()
    p = subprocess.run([hlox, "run", path, "--threads", str(threads), "--json"], env=env,
                       capture_output=True, text=True, timeout=timeout)
    wall = time.time() - t0
    if p.returncode != 0:
        return None, wall, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    return json.loads(p.stdout), wall, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hlox", default=os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox")))
    ap.add_argument("--corpus", default=os.environ.get("HLOX_CORPUS", os.path.join(ROOT, "..", "shared", "hlo")))
    ap.add_argument("--filter", default="")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--levels", help="comma-separated subset of the supported levels")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    levels = subprocess.run([args.hlox, "cpu", "--levels"], capture_output=True, text=True, check=True).stdout.split()
    if args.levels:
        wanted = args.levels.split(",")
        missing = [l for l in wanted if l not in levels]
        if missing:
            print(f"corpus_levels: this CPU does not support level(s) {missing} (it has {levels})", file=sys.stderr)
            return 2
        levels = [l for l in levels if l in wanted]
    cpu = json.loads(subprocess.run([args.hlox, "cpu", "--json"], capture_output=True, text=True, check=True).stdout)
    files = sorted(f for f in os.listdir(args.corpus) if f.endswith(".hlo") and args.filter in f)
    print(f"# corpus_levels: {len(files)} modules, levels {levels}, cpu {cpu['cpu']} (best {cpu['best']})")
    print("| module | " + " | ".join(f"{l} 1t s | {l} 1t=2t" for l in levels) + " | max rel. sum diff vs " + levels[-1] + " |")
    print("|---|" + "---:|---|" * len(levels) + "---:|")
    def one(f):
        path = os.path.join(args.corpus, f)
        row = {"module": f, "levels": {}}
        cells = []
        problems = 0
        for level in levels:
            out1, wall1, err1 = run(args.hlox, path, level, 1, args.timeout)
            out2, _, err2 = run(args.hlox, path, level, 2, args.timeout)
            if err1 or err2:
                problems += 1
                cells += ["error", str(err1 or err2)]
                row["levels"][level] = {"error": str(err1 or err2)}
                continue
            c1 = [o["checksum"] for o in out1["outputs"]]
            c2 = [o["checksum"] for o in out2["outputs"]]
            same = c1 == c2
            problems += not same
            cells += [f"{out1['time_per_run_s']:.3g}", "same" if same else "**differ**"]
            row["levels"][level] = {"checksums": c1, "same_threads": same, "seconds": out1["time_per_run_s"],
                                    "sums": [o.get("finite_sum", 0.0) for o in out1["outputs"]]}
        best = row["levels"].get(levels[-1], {})
        worst = 0.0
        for level in levels[:-1]:
            sums = row["levels"].get(level, {}).get("sums")
            if sums is None or "sums" not in best:
                continue
            for a, b in zip(sums, best["sums"]):
                worst = max(worst, abs(a - b) / max(1.0, abs(b)))
        row["max_rel_sum_diff"] = worst
        return row, f"| {f[:-4]} | " + " | ".join(cells) + f" | {worst:.2g} |", problems

    bad = 0
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for row, line, problems in pool.map(one, files):
            results.append(row)
            bad += problems
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"cpu": cpu, "levels": levels, "modules": results}, fh, indent=1)
    print(f"# {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
