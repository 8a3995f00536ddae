"""hlox.plot: the log reader and the chart's data always (a hand-written log and summary: valid
and invalid evaluations, a paired verdict); the matplotlib drawing only where python3-matplotlib
is installed (skipped otherwise; HLOX_REQUIRE_MATPLOTLIB=1 makes its absence a failure)."""

import json
import math
import os
import sys
import tempfile

ROOT = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from hlox import plot  # noqa: E402

failed = 0


def check(cond, what):
    global failed
    failed += not cond
    print(("[ OK ] " if cond else "[FAIL] ") + what)


def main():
    tmp = tempfile.mkdtemp(prefix="hlox_plot_")
    with open(os.path.join(tmp, "log.jsonl"), "w") as f:
        f.write(json.dumps({"module": "/x/m.hlo", "pipeline": "default", "key": "fusion#0", "sites": 3,
                            "objective": "measured"}) + "\n")
        for cost, status in ((2.0, "OK"), (4.0, "OK"), (None, "WRONG_OUTPUT"), (1.0, "OK"), (3.0, "OK")):
            f.write(json.dumps({"d": [0, 1, 0], "cost": cost, "status": status}) + "\n")
    with open(os.path.join(tmp, "summary.json"), "w") as f:
        json.dump({"module": "/x/m.hlo", "algo": "random", "pipeline": "default", "default_cost": 2.0,
                   "verdict": "paired", "best_speedup": 1.5, "best_speedup_ci": [1.4, 1.6]}, f)
    head, entries = plot.read_log(os.path.join(tmp, "log.jsonl"))
    check(head["key"] == "fusion#0" and len(entries) == 5, "read_log: header and five evaluations")
    s = plot.search_series(tmp)
    check(s["x"] == [1, 2, 4, 5] and s["speedup"] == [1.0, 0.5, 2.0, 2 / 3], "valid evaluations' speedups")
    check(s["invalid"] == [3], "the invalid evaluation is listed apart")
    check(s["best"] == [1.0, 1.0, 1.0, 2.0, 2.0], "best so far is the running best")
    check(not any(math.isnan(v) for v in s["best"]), "no gaps in the best-so-far")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("matplotlib not installed (Debian: python3-matplotlib): drawing skipped")
        return 1 if failed or os.environ.get("HLOX_REQUIRE_MATPLOTLIB") == "1" else 0
    out = plot.plot_search(tmp)
    check(os.path.getsize(out) > 5000, f"matplotlib drew {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
