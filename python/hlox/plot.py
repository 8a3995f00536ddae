"""Plots of a search's outputs (`hlox search --out DIR`) with matplotlib, when it is installed
(Debian: python3-matplotlib); reading the log needs nothing beyond the standard library.

    python3 -m hlox.plot DIR [-o progress_mpl.png]

draws what DIR/progress.png shows: every evaluation's speedup over the default as a dot, invalid
evaluations as crosses on the x axis, the search's best-so-far (its own, unverified estimate),
the default at 1.0 and, when summary.json holds a paired verdict, the verified speedup with its
95% interval.
"""

import argparse
import json
import math
import os
import sys


def read_log(path):
    """(header, entries) of a log.jsonl: the header dict, then one dict per evaluation with
    "d" (decisions), "cost" (None when invalid) and "status"."""
    with open(path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty log")
    return lines[0], lines[1:]


def search_series(out_dir):
    """The chart's data for a search's output folder, as a dict: "x"/"speedup" (valid
    evaluations), "invalid" (their evaluation numbers), "best" (best-so-far speedup after each
    evaluation, the running minimum of the costs), "summary" (summary.json or {})."""
    _, entries = read_log(os.path.join(out_dir, "log.jsonl"))
    summary = {}
    if os.path.exists(os.path.join(out_dir, "summary.json")):
        with open(os.path.join(out_dir, "summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
    valid = [e["cost"] for e in entries if e.get("status") == "OK" and e.get("cost")]
    base = summary.get("default_cost") or (valid[0] if valid else 1.0)
    out = {"x": [], "speedup": [], "invalid": [], "best": [], "summary": summary}
    best = math.inf
    for i, e in enumerate(entries, 1):
        cost = e.get("cost")
        if e.get("status") == "OK" and cost:
            out["x"].append(i)
            out["speedup"].append(base / cost)
            best = min(best, cost)
        else:
            out["invalid"].append(i)
        out["best"].append(base / best if math.isfinite(best) else math.nan)
    return out


def plot_search(out_dir, path=None):
    """Draws the search in `out_dir` to `path` (default DIR/progress_mpl.png) and returns the
    path. Raises ImportError when matplotlib is missing."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = search_series(out_dir)
    summary = s["summary"]
    fig, ax = plt.subplots(figsize=(10, 5.4))
    ax.scatter(s["x"], s["speedup"], s=12, color="#8fbbd9", label="every evaluation: default cost / its cost")
    ax.plot(range(1, len(s["best"]) + 1), s["best"], "--", color="#1f77b4",
            label="best so far: the search's own estimate (unverified)")
    if s["invalid"]:
        ax.scatter(s["invalid"], [0] * len(s["invalid"]), marker="x", color="#d62728",
                   transform=ax.get_xaxis_transform(), clip_on=False,
                   label=f"{len(s['invalid'])} invalid (wrong output or error)")
    ax.axhline(1.0, linestyle="--", color="#d62728", linewidth=1, label="default policy (1.0)")
    if summary.get("verdict") == "paired":
        y = summary["best_speedup"]
        lo, hi = summary.get("best_speedup_ci") or [y, y]
        x = len(s["best"]) * 1.04 + 1
        ax.errorbar([x], [y], yerr=[[y - lo], [hi - y]], fmt="s", color="#2ca02c", capsize=5,
                    label=f"verified (fresh paired measurement): {y:.3f}x, 95% CI {lo:.3f} .. {hi:.3f}")
    module = os.path.basename(summary.get("module", "")) or "search"
    ax.set_title(f"{module}: {summary.get('algo', '?')} search, {summary.get('pipeline', 'default')} pipeline")
    ax.set_xlabel("evaluation")
    ax.set_ylabel("speedup over default (higher is better)")
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    path = path or os.path.join(out_dir, "progress_mpl.png")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m hlox.plot", description=__doc__.split("\n\n")[0])
    p.add_argument("out_dir", help="a `hlox search --out` folder (log.jsonl, summary.json)")
    p.add_argument("-o", "--output", help="PNG to write (default OUT_DIR/progress_mpl.png)")
    a = p.parse_args(argv)
    try:
        print(plot_search(a.out_dir, a.output))
    except ImportError:
        print("matplotlib is not installed (Debian: apt-get install python3-matplotlib); "
              "OUT_DIR/progress.png and report.html hold the same chart", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
