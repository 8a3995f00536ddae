"""Exporter tests: every small zoo model is exported with its PyTorch outputs, then hlox parses,
verifies and runs it on PyTorch's exact weights and inputs, unoptimized and after the default
pipeline, and the outputs must match PyTorch's within float tolerances. Also: an unmappable op is
a clear error naming it, and the deep-model generator reaches 10k instructions."""

import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
HLOX = os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

from hlox import export, zoo  # noqa: E402
from hlox.lowering import ExportError  # noqa: E402

results = {"passed": 0, "failed": 0}


def check(name, cond, detail=""):
    if cond:
        results["passed"] += 1
        print(f"[ OK ] {name}")
    else:
        results["failed"] += 1
        print(f"[FAIL] {name} {detail}")


def run(*args):
    return subprocess.run([HLOX, *args], capture_output=True, text=True)


def compare(expected_dir, got_dir, n_out):
    worst = ""
    for i in range(n_out):
        want = np.load(os.path.join(expected_dir, f"out{i}.npy"))
        got = np.load(os.path.join(got_dir, f"{i}.npy"))
        if want.shape != got.shape:
            return f"output {i}: shape {got.shape} != {want.shape}"
        tol = 1e-3 * (1 + np.abs(want))
        if not np.all(np.abs(got.astype(np.float64) - want) <= tol):
            j = int(np.argmax(np.abs(got.astype(np.float64) - want) - tol))
            worst = f"output {i}: index {j}: {got.flat[j]} vs {want.flat[j]}"
            return worst
    return ""


def test_zoo_model(name, tmp):
    ctor, shapes, train = zoo.ZOO[name]
    exp = export.export(ctor(), shapes, train, name)
    path = os.path.join(tmp, f"{name}.hlo")
    with open(path, "w") as f:
        f.write(exp.text)
    ex_dir = os.path.join(tmp, f"{name}_example")
    export.write_example(exp, ex_dir)
    r = run("check", path)
    check(f"{name}: hlox check", r.returncode == 0, r.stdout + r.stderr)
    for pipeline in ("none", "default"):
        target = path
        if pipeline != "none":
            target = os.path.join(tmp, f"{name}.{pipeline}.hlo")
            r = run("opt", path, "--pipeline", pipeline, "-o", target)
            if r.returncode != 0:
                check(f"{name}: opt {pipeline}", False, r.stderr)
                continue
        out_dir = os.path.join(tmp, f"{name}_{pipeline}_out")
        r = run("run", target, "--inputs", ex_dir, "--save-outputs", out_dir)
        if r.returncode != 0:
            check(f"{name}: run {pipeline}", False, r.stderr[-2000:])
            continue
        diff = compare(ex_dir, out_dir, len(exp.outputs))
        check(f"{name}: outputs match PyTorch ({pipeline})", diff == "", diff)


class Unmappable(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=0)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name in zoo.ZOO:
            if name.endswith("_small"):
                test_zoo_model(name, tmp)
    try:
        export.export(Unmappable(), [(4,)], False, "bad")
        check("unmappable op is an error", False, "no error raised")
    except ExportError as e:
        check("unmappable op is an error naming it", "cumsum" in str(e), str(e))
    deep, shapes = zoo.stack("mlp", 450)
    exp = export.export(deep, shapes, False, "deep")
    n = sum(1 for line in exp.text.splitlines() if " = " in line)
    check(f"deep generator reaches 10k instructions ({n})", n >= 10000)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
