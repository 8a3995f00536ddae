#!/usr/bin/env python3
"""Two pipelines over many modules: op counts, pipeline time and a paired speed verdict.

For each module, `hlox eval M --pipeline A --paired-against B --in-process` validates A's output
against the unoptimized module and measures A's module interleaved with B's (the verdict
protocol: 3 s cap, up to 2000 rounds, calibrated rule); an unmeasured `hlox eval` gives each
pipeline's op count and how long parsing and the pipeline took. A speedup > 1 means A's module runs faster.
Modules for which both pipelines build the same text (up to the counters in generated names) are
reported as identical, not measured.

    /usr/bin/python3 bench/passes/pipeline_ab.py --a xla --b default [--threads T] [--json OUT] M.hlo...

Prints one row per module and a summary (gains, losses, median speedup); a module whose
evaluation fails is reported with its status and the run goes on.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def opt_stats(hlox, module, pipeline):
    """(op count, seconds) of parsing, running the pipeline and the analytical costs, unmeasured
    and unvalidated; (None, None) on failure."""
    t0 = time.monotonic()
    r = subprocess.run([hlox, "eval", module, "--pipeline", pipeline, "--in-process", "--json", "--no-measure",
                        "--no-validate"], capture_output=True, text=True)
    seconds = time.monotonic() - t0
    try:
        return json.loads(r.stdout)["analytical"]["op_count"], seconds
    except (json.JSONDecodeError, KeyError):
        return None, None


def optimized_text(hlox, module, pipeline):
    """The module `pipeline` builds, as printed text with the counters of generated names
    ("fusion.hx2023") blanked, so two pipelines that build the same graph compare equal; None on
    failure."""
    r = subprocess.run([hlox, "opt", module, "--pipeline", pipeline], capture_output=True, text=True)
    return re.sub(r"\.hx\d+", ".hx", r.stdout) if r.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--a", required=True, help="candidate pipeline")
    ap.add_argument("--b", default="default", help="baseline pipeline")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hlox", default=os.path.join(ROOT, "build", "bin", "hlox"))
    ap.add_argument("--json", help="write the rows here as JSON")
    a = ap.parse_args()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    isa = subprocess.run([a.hlox, "cpu"], capture_output=True, text=True).stdout.split()
    level = isa[isa.index("active:") + 1] if "active:" in isa else "?"
    print(f"host: {cpu}, isa {level}, threads {a.threads}; A = {a.a}, B = {a.b}")
    print(f"{'module':36} {'ops B':>6} {'ops A':>6} {'pass B s':>8} {'pass A s':>8}  A vs B (speedup [95%], verdict)")
    rows = []
    for m in a.modules:
        name = os.path.basename(m).rsplit(".", 1)[0]
        ops_b, sec_b = opt_stats(a.hlox, m, a.b)
        ops_a, sec_a = opt_stats(a.hlox, m, a.a)
        if optimized_text(a.hlox, m, a.a) == optimized_text(a.hlox, m, a.b) is not None:
            rows.append({"module": name, "ops_b": ops_b, "ops_a": ops_a, "opt_seconds_b": sec_b,
                         "opt_seconds_a": sec_a, "status": "IDENTICAL"})
            print(f"{name:36} {ops_b:6d} {ops_a:6d} {sec_b:8.2f} {sec_a:8.2f}  identical modules: not measured",
                  flush=True)
            continue
        cmd = [a.hlox, "eval", m, "--pipeline", a.a, "--paired-against", a.b, "--in-process", "--json",
               "--no-samples", "--threads", str(a.threads), "--seed", str(a.seed), "--time-cap", "3",
               "--max-samples", "2000"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        row = {"module": name, "ops_b": ops_b, "ops_a": ops_a, "opt_seconds_b": sec_b, "opt_seconds_a": sec_a}
        try:
            rec = json.loads(r.stdout)
            row["status"] = rec.get("status")
            row["message"] = rec.get("message", "")
            p = rec.get("paired") or {}
            row.update({k: p.get(k) for k in ("speedup", "ci_low", "ci_high", "outcome", "delta", "rounds")})
        except json.JSONDecodeError:
            row["status"] = f"exit {r.returncode}"
            row["message"] = (r.stderr or r.stdout).strip().splitlines()[-1:] or [""]
            row["message"] = row["message"][0]
        rows.append(row)
        fmt = lambda v, f: (f % v) if v is not None else "-"
        if row.get("speedup") is not None:
            verdict = f"{row['speedup']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}] {row['outcome']}"
        else:
            verdict = f"{row['status']}: {row['message'][:80]}"
        print(f"{name:36} {fmt(ops_b, '%6d')} {fmt(ops_a, '%6d')} {fmt(sec_b, '%8.2f')} {fmt(sec_a, '%8.2f')}  {verdict}",
              flush=True)
    done = [r for r in rows if r.get("speedup") is not None]
    same = sum(r["status"] == "IDENTICAL" for r in rows)
    gains = sum(r["outcome"] == "gain" for r in done)
    losses = sum(r["outcome"] == "slower" for r in done)
    median = f", median speedup {statistics.median(r['speedup'] for r in done):.3f}" if done else ""
    print(f"{len(rows)} modules: {same} identical, {len(done)} measured ({gains} gains, {losses} slower{median}), "
          f"{len(rows) - len(done) - same} failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
