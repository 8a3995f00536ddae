"""Pass ordering on the corpus's transformer modules (issues 7, 27): for each module, one
pass-ordering search starting from the default pipeline's pass sequence, and a table of op
counts: unoptimized, after the default pipeline, after the best sequence found, the reduction
over the default, the evaluations to reach it and the best sequence's essential items.

    /usr/bin/python3 bench/search/pass_order.py [--agent reinforce] [--objective ops]
        [--budget 100] [--seed 0] [--verdict] [--modules a,b] [--files x.hlo,y.hlo]
        [--workers 2] [--hlox build/bin/hlox]

--agent reinforce is `hlox search --algo pass-order` (REINFORCE, op-count reward, in-process);
any other agent (evolution, anneal, guided, random, ...) searches the "order" pipeline's slots
(`--pipeline order --algo AGENT`) with --objective ops or measured, on an embedded fleet of
--workers. --verdict also measures the chosen sequence's module against the default
pipeline's (paired, 95% interval; for the slot searches the race over the top candidates):
fewer ops is the gym's reward, not necessarily faster."""

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
    ap.add_argument("--modules", default="", help="corpus module names, comma-separated")
    ap.add_argument("--files", default="", help="more module files, comma-separated")
    ap.add_argument("--agent", default="reinforce")
    ap.add_argument("--objective", default="ops", choices=["ops", "measured"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--hlox", default=os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox")))
    a = ap.parse_args()
    if a.agent == "reinforce" and a.objective != "ops":
        ap.error("the REINFORCE agent optimizes the op count only")
    if a.modules:
        names = a.modules.split(",")
    elif a.files:
        names = []
    else:
        names = sorted(f[:-4] for f in os.listdir(CORPUS)
                       if f.endswith(".hlo") and any(m in f for m in MARKERS))
    paths = [os.path.join(CORPUS, n + ".hlo") for n in names] + [f for f in a.files.split(",") if f]
    print(f"agent {a.agent}, objective {a.objective}, budget {a.budget} evaluations, seed {a.seed}\n")
    head = "| module | ops unoptimized | default pipeline | best sequence | reduction | evaluations to best |"
    print(head + (" paired speedup (95% CI), verdict |" if a.verdict else ""))
    print("|---" * (7 if a.verdict else 6) + "|")
    total_def = total_best = 0
    sequences = []
    for path in paths:
        name = os.path.basename(path)[:-4]
        out = tempfile.mkdtemp(prefix="hlox-po-")
        cmd = [a.hlox, "search", path, "--budget", str(a.budget), "--seed", str(a.seed), "--json", "--out", out]
        if a.agent == "reinforce":
            cmd += ["--algo", "pass-order", "--in-process"]
        else:
            cmd += ["--pipeline", "order", "--algo", a.agent, "--objective", a.objective,
                    "--workers", str(a.workers)]
        if not a.verdict:
            cmd.append("--no-verdict")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"| {name} | ERROR: {r.stderr.strip()[-200:]} |")
            continue
        j = json.loads(r.stdout)
        d, b = int(j["default_ops"]), int(j["best_ops"])
        total_def += d
        total_best += b
        row = f"| {name} | {j['initial_ops']} | {d} | {b} | {d - b} ({100 * (d - b) / max(d, 1):.1f}%) | {j['evaluations_to_best']} |"
        if a.verdict:
            lo, hi = j.get("best_speedup_ci", [0, 0])
            row += f" {j['best_speedup']:.3f} ({lo:.3f}..{hi:.3f}) {j.get('verdict_outcome', '')} |"
        print(row, flush=True)
        sequences.append(f"{name}: {' '.join(j.get('pass_sequence', []))}")
    if total_def:
        print(f"\ntotal ops: default {total_def}, best {total_best} ({100 * (total_def - total_best) / total_def:.1f}% fewer)")
    print("\nbest sequences (essential items):")
    for line in sequences:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
