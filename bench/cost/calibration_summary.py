#!/usr/bin/env python3
"""Summarizes `hlox calibrate-verdict --raw` files: one row per module and planted effect.

    /usr/bin/python3 bench/cost/calibration_summary.py RAW.jsonl [RAW.jsonl ...]

Several files of one module (parallel calibrations with different seeds) pool into one row.
Per row: pairs (unstable ones counted apart and left out of the rates), intervals wholly above
and below 1 (speedup = baseline/candidate: "above" is a gain, "below" a loss), the mean speedup
with its standard error, the spread of the log speedup between pairs against the mean interval
half-width, and for planted rows the median measured slowdown. An A/A row is calibrated when at
most 5% of its intervals exclude 1 and at most 3% on each side (issue 33); a planted row counts
as detected the intervals wholly below 1 (the candidate slower).
"""
import json
import math
import os
import sys
from collections import defaultdict


def main(paths):
    rows = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    j = json.loads(line)
                except json.JSONDecodeError:  # a line cut off by a stopped run
                    continue
                rows[(os.path.basename(j["module"]), j["planted"])].append(j)
    print("| module | planted | pairs (unstable) | above 1 | below 1 | excluding 1 | mean speedup +- SE "
          "| sd of log speedup | mean half-width | median measured slowdown |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (module, planted), pairs in sorted(rows.items()):
        stable = [p for p in pairs if not p["unstable"]]
        n = len(stable)
        if n == 0:
            continue
        speed = [1 / p["ratio"] for p in stable]
        logs = [math.log(s) for s in speed]
        above = sum(1 / p["ci_high"] > 1 for p in stable)  # the speedup's lower bound above 1
        below = sum(1 / p["ci_low"] < 1 for p in stable)
        mean = sum(speed) / n
        sd_s = math.sqrt(sum((s - mean) ** 2 for s in speed) / (n - 1)) if n > 1 else 0
        mlog = sum(logs) / n
        sd_log = math.sqrt(sum((x - mlog) ** 2 for x in logs) / (n - 1)) if n > 1 else 0
        half = sum((1 / p["ci_low"] - 1 / p["ci_high"]) / 2 for p in stable) / n
        ratios = sorted(p["ratio"] for p in stable)
        med = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
        print(f"| {module} | {100 * planted:g}% | {n} ({len(pairs) - n}) | {above} ({100 * above / n:.1f}%) "
              f"| {below} ({100 * below / n:.1f}%) | {100 * (above + below) / n:.1f}% "
              f"| {mean:.4f} +- {sd_s / math.sqrt(n):.4f} | {100 * sd_log:.2f}% | {100 * half:.2f}% "
              f"| {100 * (med - 1):+.2f}% |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
