#!/usr/bin/python3
"""Lists the output leaves of corpus modules that contain NaN or Inf.

Runs `hlox run FILE --save-outputs DIR --json` on each module (default seed unless --seed),
reads the saved .npy leaves with NumPy (bf16 leaves, saved as raw 'V2', are widened to f32)
and prints one line per module: OK, or the leaves with their NaN/Inf counts. Exit status 1
when any module has a non-finite leaf or fails to run.

  /usr/bin/python3 scripts/finite_scan.py --hlox build/bin/hlox ../shared/hlo/*.hlo
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def load_leaf(path):
    """Reads one saved leaf as a float or complex array (ints/pred are always finite)."""
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError:
        return None
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:  # bf16: the high half of an f32
        a = (a.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a


def scan(hlox, path, seed, threads, timeout):
    """Returns (status, [(leaf, shape, dtype, nan, inf)], seconds) for one module."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [hlox, "run", path, "--json", "--save-outputs", out, "--threads", str(threads)]
        if seed is not None:
            cmd += ["--seed", str(seed)]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "TIMEOUT", [], time.time() - t0
        secs = time.time() - t0
        if p.returncode != 0:
            return "ERROR " + p.stderr.strip()[-300:], [], secs
        outs = json.loads(p.stdout.strip().splitlines()[-1])["outputs"]
        bad = []
        for i, o in enumerate(outs):
            a = load_leaf(os.path.join(out, "%d.npy" % i))
            if a is None or a.dtype.kind not in "fc":
                continue
            nan = int(np.isnan(a).sum())
            inf = int(np.isinf(a).sum())
            if nan or inf:
                bad.append((i, o["shape"], o["dtype"], nan, inf))
        return ("NONFINITE" if bad else "OK"), bad, secs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--hlox", default="build/bin/hlox")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    failed = 0
    for f in a.files:
        status, bad, secs = scan(a.hlox, f, a.seed, a.threads, a.timeout)
        name = os.path.basename(f)
        print("%-45s %-9s %6.1fs" % (name, status.split(" ")[0], secs), flush=True)
        if status.startswith(("ERROR", "TIMEOUT")):
            print("    " + status)
        for i, shape, dtype, nan, inf in bad:
            print("    leaf %d %s: %d NaN, %d Inf" % (i, shape, nan, inf))
        failed += status != "OK"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
