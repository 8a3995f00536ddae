"""Pass ordering on the corpus's transformer modules (issue 7): for each module, `hlox search
--algo pass-order` (REINFORCE over pass sequences, op-count reward, starting from the default
pipeline's pass sequence) and a table of op counts: unoptimized, after the default pipeline,
after the best sequence found, the reduction over the default, and the episodes to reach it.

    /usr/bin/python3 bench/search/pass_order.py [--budget 100] [--seed 0] [--verdict]
        [--modules a,b] [--hlox build/bin/hlox]

--verdict also measures the best sequence's module against the default pipeline's (paired
ratio with its 95% interval): fewer ops is the gym's reward, not necessarily faster."""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.environ.get("HLOX_CORPUS", os.path.join(ROOT, "..", "shared", "hlo"))
MARKERS = ("gpt", "llama", "bert", "neox", "transformer")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verdict", action="store_true")
    ap.add_argument("--modules", default="")
    ap.add_argument("--hlox", default=os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox")))
    a = ap.parse_args()
    if a.modules:
        names = a.modules.split(",")
    else:
        names = sorted(f[:-4] for f in os.listdir(CORPUS)
                       if f.endswith(".hlo") and any(m in f for m in MARKERS))
    print(f"budget {a.budget} episodes, seed {a.seed}\n")
    head = "| module | ops unoptimized | default pipeline | best sequence | reduction | episodes to best |"
    print(head + (" paired speedup (95% CI) |" if a.verdict else ""))
    print("|---" * (7 if a.verdict else 6) + "|")
    total_def = total_best = 0
    for name in names:
        out = tempfile.mkdtemp(prefix="hlox-po-")
        cmd = [a.hlox, "search", os.path.join(CORPUS, name + ".hlo"), "--algo", "pass-order", "--budget",
               str(a.budget), "--seed", str(a.seed), "--in-process", "--json", "--out", out]
        if not a.verdict:
            cmd.append("--no-verdict")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"| {name} | ERROR: {r.stderr.strip()[-200:]} |")
            continue
        j = json.loads(r.stdout)
        d, b = int(j["default_cost"]), int(j["best_cost"])
        total_def += d
        total_best += b
        row = f"| {name} | {j['initial_ops']} | {d} | {b} | {d - b} ({100 * (d - b) / max(d, 1):.1f}%) | {j['evaluations_to_best']} |"
        if a.verdict:
            lo, hi = j.get("best_speedup_ci", [0, 0])
            row += f" {j['best_speedup']:.3f} ({lo:.3f}..{hi:.3f}) |"
        print(row, flush=True)
    if total_def:
        print(f"\ntotal ops: default {total_def}, best {total_best} ({100 * (total_def - total_best) / total_def:.1f}% fewer)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
