#!/usr/bin/python3
"""Two builds of hlox compared on the service bench, paired and interleaved in one script.

    ab_builds.py BASE_BIN_DIR NEW_BIN_DIR [--pairs N] [--noop-only | --latency-only]

Each BIN_DIR holds a `service_bench` and the `hlox` its workers run (a build's build/bin). Every pair
runs the base and the new binary back to back, the order alternating from pair to pair so that
neither always finds the warmer machine. Per metric the pair's ratio is new/base (for latencies
and CPU per job, < 1 is better; for jobs/s, > 1 is better). Reported: the median ratio over the
pairs and a distribution-free 95% interval for it (order statistics of the pair ratios, the
sign-test interval; it assumes only that pairs are independent), and the verdict: "no change"
when the interval contains 1. With the default 10 pairs the interval is the 2nd to the 9th
smallest ratio (coverage 97.9%).

The baseline is a build of another commit, never the code under test: build it in a worktree,
e.g. `git worktree add /tmp/base <commit> && cmake -S /tmp/base -B /tmp/base/build -G Ninja &&
cmake --build /tmp/base/build --target service_bench hlox`.
"""
import argparse
import math
import os
import re
import subprocess
import sys

# metric name -> (regex over a run's output, which service_bench mode prints it, higher is better)
METRICS = {
    "noop jobs/s": (r"no-op jobs, many in flight \(best of \d+ interleaved\): record scan \(default\) (\d+) jobs/s",
                    "noop", True),
    "noop broker-thread us/job": (r"record scan \(default\) \d+ jobs/s \(broker thread ([\d.]+) us/job\)", "noop", False),
    "p50 broker process, raw DEALER": (r"hlox broker process, raw protocol DEALER\s+best p50\s+([\d.]+) us", "latency", False),
    # (builds before the split of 2026-11-27 named the client agent::Client)
    "p50 broker process, client": (r"hlox broker process, (?:agent|client)::Client\s+best p50\s+([\d.]+) us", "latency", False),
    "p50 embedded, inproc": (r"embedded fleet, (?:agent|client)::Client on inproc\s+best p50\s+([\d.]+) us", "latency", False),
}
MODES = {"noop": ["--noop-only"], "latency": ["--latency-only", "--rounds", "3"]}


def run(bin_dir, mode, tries=3):
    cmd = [bin_dir + "/service_bench"] + MODES[mode]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=240,
                             env=dict(os.environ, HLOX_BIN=bin_dir + "/hlox"))
    except subprocess.TimeoutExpired:  # a run that hangs (seen once in 40) is run again
        if tries <= 1:
            sys.exit("%s: no end after 240 s, %d times" % (" ".join(cmd), 3))
        print("  (%s hung; run again)" % " ".join(cmd), flush=True)
        return run(bin_dir, mode, tries - 1)
    if out.returncode != 0:
        sys.exit("%s failed (rc %d):\n%s" % (" ".join(cmd), out.returncode, out.stderr[-2000:]))
    figures = {}
    for name, (pattern, m, _) in METRICS.items():
        if m != mode:
            continue
        found = re.search(pattern, out.stdout)
        if not found:
            sys.exit("%s: no %r in its output:\n%s" % (" ".join(cmd), name, out.stdout[-3000:]))
        figures[name] = float(found.group(1))
    return figures


def sign_interval(ratios):
    """Median and the order-statistics interval of at least 95% coverage for it (k-th smallest to
    k-th largest, k the largest with P(Binomial(n, 1/2) < k) <= 2.5%)."""
    r = sorted(ratios)
    n = len(r)
    k, tail = 0, 0.0
    while True:
        p_next = tail + math.comb(n, k) / 2 ** n
        if p_next > 0.025:
            break
        tail, k = p_next, k + 1
    median = (r[(n - 1) // 2] + r[n // 2]) / 2
    if k == 0:
        return median, float("nan"), float("nan"), 1.0
    return median, r[k - 1], r[n - k], 1 - 2 * tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--pairs", type=int, default=10)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--noop-only", action="store_true")
    group.add_argument("--latency-only", action="store_true")
    a = ap.parse_args()
    modes = ["noop"] if a.noop_only else ["latency"] if a.latency_only else ["noop", "latency"]
    ratios = {name: [] for name, (_, m, _) in METRICS.items() if m in modes}
    raw = {name: ([], []) for name in ratios}
    for i in range(a.pairs):
        order = [("base", a.base), ("new", a.new)]
        if i % 2:
            order.reverse()
        got = {}
        for side, bin_dir in order:
            got[side] = {}
            for mode in modes:
                got[side].update(run(bin_dir, mode))
        line = []
        for name in ratios:
            ratios[name].append(got["new"][name] / got["base"][name])
            raw[name][0].append(got["base"][name])
            raw[name][1].append(got["new"][name])
            line.append("%s %.3f" % (name, ratios[name][-1]))
        print("pair %d (%s first): %s" % (i + 1, order[0][0], "; ".join(line)), flush=True)
    print("\nnew/base over %d pairs (median ratio, distribution-free interval):" % a.pairs)
    for name, rs in ratios.items():
        med, lo, hi, cover = sign_interval(rs)
        better_high = METRICS[name][2]
        if math.isnan(lo):
            verdict = "too few pairs for an interval (6 at least)"
        elif not (lo <= 1 <= hi):
            verdict = ("better" if (lo > 1) == better_high else "worse")
        else:
            verdict = "no change"
        base_med = sorted(raw[name][0])[len(rs) // 2]
        new_med = sorted(raw[name][1])[len(rs) // 2]
        print("  %-32s base %9.1f  new %9.1f  ratio %.3f [%.3f, %.3f] (%.1f%%): %s"
              % (name, base_med, new_med, med, lo, hi, 100 * cover, verdict))


if __name__ == "__main__":
    main()
