"""Whole-graph benchmark (issue 3 "Speed", issue 9 item 5): hlox's CPU runtime against PyTorch eager
on the model zoo, same inputs, same weights, same thread count, measured in one run.

For each model the project's exporter (python/hlox/export.py) writes the HLO and the example inputs
(weights, buffers, inputs in parameter order); `hlox opt --pipeline default` gives the optimized
module; `hlox run --inputs --repeat --json` times the unoptimized and the optimized module with each
thread count (median over the repeats). PyTorch eager runs the same computation (export.make_step:
forward, (out*out).mean() loss, autograd, SGD update; or forward only for inference models) in a
subprocess with a cleaned environment (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset,
OMP_WAIT_POLICY=PASSIVE, OMP/OpenBLAS/MKL_NUM_THREADS = the thread count before torch is imported)
that also pins every pool by call (torch.set_num_threads, torch.set_num_interop_threads,
openblas_set_num_threads on OpenBLAS's pthread pool) and reports its OS thread count, the
threads that used CPU while timed and its CPU / wall ratio over the timed calls (1.00 or less at 1
thread: no work on the other core), warm-up then median of repeats.
It times both the functional step (export's exact semantics) and the usual in-place
loss.backward() + optimizer.step() and takes the faster as the baseline. Every hlox output is
compared with PyTorch's (max abs diff), so a fast but wrong runtime cannot look good.

    /usr/bin/python3 bench/models/whole_graph.py [--small] [--models a,b] [--threads 1,2]
        [--repeat 5] [--rounds 1] [--variants none,default] [--cpu-time] [--hlox build/bin/hlox] [--json out.json] [--workdir DIR]

Prints a Markdown table: model, threads, PyTorch ms, hlox none ms, hlox default ms, and the
ratios PyTorch/hlox (> 1 means hlox is faster). --rounds N alternates PyTorch and hlox N times per
row and keeps each side's fastest round (a loaded machine slows both alike).

--cpu-time adds the same comparison in process CPU time per step, which a loaded machine inflates
far less than wall time at 1 thread: PyTorch's median time.process_time() per step, read around
the same calls as its wall time, and hlox's (CPU of `hlox run --repeat R+1` - CPU of `--repeat 1`)
/ R from the children's rusage (each the less of two tries), so loading and parsing cancel out."""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

DEFAULT_MODELS = ["mlp_train", "encoder_layer_train", "basic_block_train", "gpt2_block", "resnet18"]
ENV_KEYS = ["OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_WAIT_POLICY", "OMP_NUM_THREADS",
            "OPENBLAS_NUM_THREADS"]


# ----------------------------------------------------------------------------------------------
# PyTorch side (runs in a child process with a cleaned environment).

def _openblas_core():
    """The kernel family OpenBLAS picked in this process ('?' if it cannot be asked)."""
    import ctypes
    try:
        lib = ctypes.CDLL("libopenblas.so.0")
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "?"


def _median_ms(fn, warmup, repeat):
    """(median wall ms, median process CPU ms, total CPU / total wall) of fn() over `repeat` calls
    after `warmup` untimed ones; both clocks read around the same calls, so CPU / wall > 1 shows
    work on another core."""
    for _ in range(warmup):
        fn()
    walls, cpus = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return 1e3 * statistics.median(walls), 1e3 * statistics.median(cpus), sum(cpus) / sum(walls)


def _task_ticks():
    """{tid: (thread name, user+system clock ticks)} of this process's threads."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        out[tid] = (s[s.index("(") + 1:s.rindex(")")], int(fields[11]) + int(fields[12]))
    return out


def _busy_threads(before, after, min_ticks=2):
    """Threads that used at least min_ticks clock ticks between two _task_ticks() snapshots."""
    busy = []
    for tid, (name, ticks) in after.items():
        used = ticks - before.get(tid, (name, 0))[1]
        if used >= min_ticks:
            busy.append(f"{name}:{tid}:{used}")
    return busy


def _pin_blas_threads(threads):
    """Sets OpenBLAS's own pthread pool to `threads` through both names it is loaded under
    (Debian's libblas.so.3, which torch links, forwards to libopenblas.so.0, one instance);
    returns what each reports."""
    import ctypes
    got = {}
    for soname in ("libblas.so.3", "libopenblas.so.0"):
        try:
            lib = ctypes.CDLL(soname, mode=os.RTLD_NOLOAD | os.RTLD_GLOBAL)
        except OSError:
            continue
        try:
            lib.openblas_set_num_threads(ctypes.c_int(threads))
            got[soname] = lib.openblas_get_num_threads()
        except AttributeError:
            got[soname] = "?"
    return got


def sgd_train_step(model, xs, opt):
    """The direct training step both baselines time: forward, loss (out*out).mean() (or the
    scalar output itself), backward, in-place SGD update."""
    def step():
        opt.zero_grad(set_to_none=True)
        out = model(*xs)
        out = out[0] if isinstance(out, (tuple, list)) else out
        loss = out if out.dim() == 0 else (out * out).mean()
        loss.backward()
        opt.step()
    return step


def torch_worker(args):
    """Loads the example parameters into the zoo model and times PyTorch eager; prints JSON."""
    import numpy as np
    import torch
    from hlox import export, zoo

    # Every pool that could run work on another core, pinned to the thread count: ATen's
    # intra-op (OpenMP) and inter-op pools, and OpenBLAS's own pthread pool.
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(args.threads)
    blas_threads = _pin_blas_threads(args.threads)
    ctor, _, train = zoo.ZOO[args.model]
    model = ctor()
    model.train(train)
    names = [n for n, _ in model.named_parameters()]
    bnames = [n for n, _ in model.named_buffers()]
    n_in = len([f for f in os.listdir(args.example) if f[0].isdigit()])
    arrays = [np.load(os.path.join(args.example, f"{i}.npy")) for i in range(n_in)]
    tensors = [torch.from_numpy(a) for a in arrays]
    params = {n: t.clone().requires_grad_(train) for n, t in zip(names, tensors)}
    buffers = {n: t.clone() for n, t in zip(bnames, tensors[len(names):])}
    xs = tensors[len(names) + len(bnames):]
    step = export.make_step(model, train, args.lr)

    # Functional step: export's exact computation (new parameters out of place).
    outs = step(params, buffers, *xs)
    os.makedirs(args.save, exist_ok=True)
    for i, o in enumerate(outs):
        np.save(os.path.join(args.save, f"{i}.npy"), o.detach().contiguous().numpy())
    ticks0 = _task_ticks()
    functional_ms, functional_cpu_ms, functional_cpu_wall = _median_ms(
        lambda: step(params, buffers, *xs), args.warmup, args.repeat)

    # Direct step: the module's own parameters, backward() and an in-place SGD update.
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(params[n].detach())
        for n, b in model.named_buffers():
            b.copy_(buffers[n])
    if train:
        direct = sgd_train_step(model, xs, torch.optim.SGD(model.parameters(), lr=args.lr))
    else:
        def direct():
            with torch.no_grad():
                model(*xs)
    direct_ms, direct_cpu_ms, direct_cpu_wall = _median_ms(direct, args.warmup, args.repeat)
    ticks1 = _task_ticks()
    print(json.dumps({"functional_ms": functional_ms, "direct_ms": direct_ms,
                      "functional_cpu_ms": functional_cpu_ms, "direct_cpu_ms": direct_cpu_ms,
                      "cpu_over_wall": max(functional_cpu_wall, direct_cpu_wall),
                      "torch_threads": torch.get_num_threads(),
                      "torch_interop_threads": torch.get_num_interop_threads(),
                      "blas_threads": blas_threads, "os_threads": len(ticks1),
                      "busy_threads": _busy_threads(ticks0, ticks1),
                      "openblas_core": _openblas_core()}))
    return 0


BASELINE_THREAD_VARS = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"]


def clean_env(threads):
    """The PyTorch baseline's environment: OpenBLAS forcing variables unset, passive OpenMP, every
    thread-count variable = threads (the child also pins ATen's and OpenBLAS's pools by call)."""
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    for k in BASELINE_THREAD_VARS:
        env[k] = str(threads)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    return env


def time_torch(model, example, threads, repeat, save, timeout, lr):
    """Runs torch_worker in a child with clean_env(threads); its JSON or {'error': ...}."""
    cmd = [sys.executable, os.path.abspath(__file__), "--torch-worker", "--model", model,
           "--example", example, "--threads", str(threads), "--repeat", str(repeat), "--save", save,
           "--lr", repr(lr)]
    r = subprocess.run(cmd, env=clean_env(threads), capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(r.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------------------------
# hlox side.

def run_hlox(hlox, hlo, example, threads, repeat, save, timeout):
    """hlox run --json; returns {'ms': median, 'peak_mb': ...} or {'error': ...}."""
    cmd = [hlox, "run", hlo, "--inputs", example, "--threads", str(threads), "--repeat",
           str(repeat), "--save-outputs", save, "--json"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if r.returncode != 0:
        tail = (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        return {"error": f"rc={r.returncode}: {tail[:300]}"}
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return {"ms": 1e3 * j["time_per_run_s"], "min_ms": 1e3 * j["time_min_s"],
            "peak_mb": j.get("peak_bytes", 0) / 2**20}


def hlox_cpu_ms(hlox, hlo, example, threads, repeat, timeout):
    """CPU ms per run of `hlox run`: (CPU of --repeat repeat+1 - CPU of --repeat 1) / repeat,
    from the children's rusage (setup cancels out), each the less of two tries; None when a run
    fails."""
    def cpu(rep):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([hlox, "run", hlo, "--inputs", example, "--threads", str(threads),
                            "--repeat", str(rep)], capture_output=True, text=True, timeout=timeout)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            return None
        return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    try:
        tries = [(cpu(1), cpu(repeat + 1)) for _ in range(2)]
    except subprocess.TimeoutExpired:
        return None
    if any(t is None for pair in tries for t in pair):
        return None
    one, many = min(t[0] for t in tries), min(t[1] for t in tries)
    return 1e3 * max(0.0, many - one) / repeat


def max_diffs(want_dir, got_dir, n_out, want_prefix="out"):
    """(max abs diff, max diff / (1 + |want|)) over all outputs; None when files are missing."""
    import numpy as np
    worst_abs = worst_rel = 0.0
    for i in range(n_out):
        try:
            want = np.load(os.path.join(want_dir, f"{want_prefix}{i}.npy")).astype(np.float64)
            got = np.load(os.path.join(got_dir, f"{i}.npy")).astype(np.float64)
        except (OSError, ValueError):
            return None
        if want.shape != got.shape:
            return (float("inf"), float("inf"))
        if want.size == 0:
            continue
        d = np.atleast_1d(np.abs(got - want))
        d[np.isnan(d)] = np.inf
        worst_abs = max(worst_abs, float(d.max()))
        worst_rel = max(worst_rel, float((d / (1.0 + np.abs(np.atleast_1d(want)))).max()))
    return (worst_abs, worst_rel)


def update_error(example, got_dir, n_out):
    """Train steps output [loss, p - lr*g, ...]: max |delta_hlox - delta_torch| / scale per
    parameter (delta = p_new - p), i.e. the gradients' error, which the absolute diff of the tiny
    updates would hide. scale = max |delta_torch| of that parameter, floored at 1e-5 max |p| and
    at 1e-3 of the largest update of the step (below those it is rounding noise, not a
    gradient). None when unavailable."""
    import numpy as np
    deltas = []
    for i in range(1, n_out):
        try:
            p = np.load(os.path.join(example, f"{i - 1}.npy")).astype(np.float64)
            want = np.load(os.path.join(example, f"out{i}.npy")).astype(np.float64) - p
            got = np.load(os.path.join(got_dir, f"{i}.npy")).astype(np.float64) - p
        except (OSError, ValueError):
            return None
        if want.shape != got.shape:
            return float("inf")
        if want.size:
            deltas.append((p, want, got))
    if not deltas:
        return None
    step_max = max(float(np.abs(w).max()) for _, w, _ in deltas)
    worst = 0.0
    for p, want, got in deltas:
        scale = max(float(np.abs(want).max()), 1e-5 * float(np.abs(p).max()), 1e-3 * step_max)
        if scale > 0:
            err = float(np.abs(got - want).max()) / scale
            worst = max(worst, err if err == err else float("inf"))
    return worst


def count_instructions(path):
    """Instructions (lines with ' = ') in an HLO text file, fused computations included."""
    with open(path) as f:
        return sum(1 for line in f if " = " in line and not line.lstrip().startswith("//"))


def load_average():
    """The 1/5/15-minute load averages as text."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# ----------------------------------------------------------------------------------------------

def bench_model(name, o, work):
    """Exports, optimizes and times one zoo model; returns a list of result rows."""
    from hlox import export, zoo
    import torch
    ctor, shapes, train = zoo.ZOO[name]
    torch.manual_seed(o.seed)  # the model's weights and the example inputs
    t0 = time.perf_counter()
    exp = export.export(ctor(), shapes, train, name, lr=o.lr)
    export_s = time.perf_counter() - t0
    hlo = os.path.join(work, f"{name}.hlo")
    with open(hlo, "w") as f:
        f.write(exp.text)
    example = os.path.join(work, f"{name}_example")
    export.write_example(exp, example)
    variants = {"none": hlo} if "none" in o.variants else {}
    opt = os.path.join(work, f"{name}.default.hlo")
    t0 = time.perf_counter()
    r = subprocess.run([o.hlox, "opt", hlo, "--pipeline", "default", "-o", opt],
                       capture_output=True, text=True, timeout=o.timeout)
    opt_s = time.perf_counter() - t0
    opt_error = None
    if r.returncode == 0:
        if "default" in o.variants:
            variants["default"] = opt
    else:
        opt_error = (r.stderr.strip().splitlines() or [f"rc={r.returncode}"])[-1]
    print(f"## {name}: exported in {export_s:.1f} s ({count_instructions(hlo)} instructions, "
          f"{len(exp.inputs)} parameters, {len(exp.outputs)} outputs); opt default "
          + (f"{opt_s:.1f} s, {count_instructions(opt)} instructions" if not opt_error
             else f"FAILED: {opt_error}"), flush=True)
    rows = []
    for t in o.threads:
        row = {"model": name, "threads": t, "train": train, "opt_error": opt_error, "rounds": o.rounds}
        tdir = os.path.join(work, f"{name}_torch_t{t}")
        # Rounds alternate PyTorch and hlox so that load changes hit both; each side keeps its
        # fastest round (and its least CPU time).
        for _ in range(o.rounds):
            try:
                tr = time_torch(name, example, t, o.repeat, tdir, o.timeout, o.lr)
            except subprocess.TimeoutExpired:
                tr = {"error": f"timed out after {o.timeout} s"}
            if "error" not in tr:
                tr["ms"] = min(tr["functional_ms"], tr["direct_ms"])
                tr["diff_vs_export"] = max_diffs(example, tdir, len(exp.outputs))
            row["torch"] = _better(row.get("torch"), tr)
            row.setdefault("round_ms", {}).setdefault("torch", []).append(tr.get("ms"))
            for v, path in variants.items():
                out = os.path.join(work, f"{name}_{v}_t{t}_out")
                res = run_hlox(o.hlox, path, example, t, o.repeat, out, o.timeout)
                if "error" not in res and o.cpu_time:
                    res["cpu_ms"] = hlox_cpu_ms(o.hlox, path, example, t, o.repeat, o.timeout)
                if "error" not in res:
                    res["diff"] = max_diffs(example, out, len(exp.outputs))
                    if train:
                        res["update_err"] = update_error(example, out, len(exp.outputs))
                row[v] = _better(row.get(v), res)
                row["round_ms"].setdefault(v, []).append(res.get("ms"))
        rows.append(row)
        print("  " + json.dumps(row), flush=True)
    return rows


def _better(old, new):
    """The faster of two timing results (an error only when both failed); the CPU figures are
    the least of the two, since load only adds to them."""
    if old is None or "error" in old:
        return new
    if "error" in new:
        return old
    best = dict(new if new["ms"] < old["ms"] else old)
    for key in ("cpu_ms", "functional_cpu_ms", "direct_cpu_ms"):
        vals = [r[key] for r in (old, new) if r.get(key) is not None]
        if vals:
            best[key] = min(vals)
    if "cpu_over_wall" in best:  # the worst round: more than 1 means work on another core
        best["cpu_over_wall"] = max(r.get("cpu_over_wall", 0) for r in (old, new))
    return best


def fmt_ms(res):
    """Table cell for a timing result."""
    if res is None:
        return "n/a"
    return "ERROR" if "error" in res else f"{res['ms']:.2f}"


def fmt_ratio(torch_res, res):
    """PyTorch ms / hlox ms as a table cell (> 1: hlox faster)."""
    if not res or "error" in res or "error" in torch_res:
        return "-"
    return f"{torch_res['ms'] / res['ms']:.2f}"


def fmt_diff(row):
    """Table cell with the output and update errors of each hlox variant."""
    parts = []
    for v in ("none", "default"):
        res = row.get(v)
        if res and "error" not in res:
            d = res.get("diff")
            text = "missing" if d is None else f"{d[0]:.1e} (rel {d[1]:.1e}"
            if "update_err" in res:
                u = res["update_err"]
                text += ", update " + ("missing" if u is None else f"{u:.1e}")
            parts.append(f"{v} {text})")
    return "; ".join(parts) or "-"


def row_ok(res, o):
    """True when an hlox variant ran and its outputs (and updates) are within tolerance."""
    if res is None or "error" in res or res.get("diff") is None or res["diff"][1] > o.tol:
        return False
    u = res.get("update_err", 0.0)
    return u is not None and u <= o.update_tol


def report(rows, o):
    """Prints the Markdown table, the errors and the PyTorch details; True when all rows are ok."""
    all_ok = True
    print("\n| model | threads | PyTorch ms | hlox none ms | hlox default ms | PyTorch/hlox none "
          "| PyTorch/hlox default | max abs diff vs PyTorch | ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        tr = row["torch"]
        ok = not row.get("opt_error") and all(row_ok(row.get(v), o) for v in o.variants)
        all_ok = all_ok and ok
        print(f"| {row['model']} | {row['threads']} | {fmt_ms(tr)} | {fmt_ms(row.get('none'))} | "
              f"{fmt_ms(row.get('default'))} | {fmt_ratio(tr, row.get('none'))} | "
              f"{fmt_ratio(tr, row.get('default'))} | {fmt_diff(row)} | {'yes' if ok else 'NO'} |")
    errors = [(r["model"], r["threads"], v, r[v]["error"]) for r in rows
              for v in ("torch", "none", "default") if r.get(v) and "error" in r[v]]
    errors += [(r["model"], "-", "opt", r["opt_error"]) for r in rows if r.get("opt_error")]
    for e in dict.fromkeys(errors):
        print(f"- ERROR {e[0]} threads={e[1]} {e[2]}: {e[3]}")
    for r in rows:
        tr = r["torch"]
        if "error" not in tr:
            d = tr.get("diff_vs_export")
            print(f"- {r['model']} t={r['threads']}: PyTorch functional {tr['functional_ms']:.2f} ms "
                  f"(cpu {tr['functional_cpu_ms']:.2f}), direct {tr['direct_ms']:.2f} ms (cpu "
                  f"{tr['direct_cpu_ms']:.2f}), OpenBLAS core {tr['openblas_core']}, threads: torch "
                  f"{tr['torch_threads']}, inter-op {tr['torch_interop_threads']}, OpenBLAS "
                  f"{tr['blas_threads']}, OS {tr['os_threads']}, busy while timed "
                  f"[{', '.join(tr['busy_threads'])}] (name:tid:ticks); eager vs exported outputs "
                  f"max abs diff {('missing' if d is None else f'{d[0]:.1e}')}")
            if r.get("rounds", 1) > 1:
                print("  ms per round: " + "; ".join(
                    f"{k} " + " ".join("-" if x is None else f"{x:.1f}" for x in xs)
                    for k, xs in r["round_ms"].items()))
    cpu_rows = [r for r in rows if any((r.get(v) or {}).get("cpu_ms") for v in ("none", "default"))]
    if cpu_rows:
        print("\n| model | threads | PyTorch cpu ms (max cpu/wall) | hlox none cpu ms (cpu/wall) | "
              "hlox default cpu ms (cpu/wall) | PyTorch/hlox none (cpu) | PyTorch/hlox default (cpu) |")
        print("|---|---|---|---|---|---|---|")
        for r in cpu_rows:
            tr = r["torch"]
            if "error" in tr:
                continue
            fast = "functional" if tr["functional_ms"] <= tr["direct_ms"] else "direct"
            tc = tr[f"{fast}_cpu_ms"]
            cells = []
            for v in ("none", "default"):
                res = r.get(v) or {}
                c = res.get("cpu_ms")
                cells.append(("n/a", "-") if not c else
                             (f"{c:.2f} ({c / res['ms']:.2f})", f"{tc / c:.2f}"))
            print(f"| {r['model']} | {r['threads']} | {tc:.2f} ({tr['cpu_over_wall']:.2f}) | {cells[0][0]} | "
                  f"{cells[1][0]} | {cells[0][1]} | {cells[1][1]} |")
    print(f"\nok = every hlox output within {o.tol:g} * (1 + |PyTorch|) of PyTorch's and, for train "
          f"steps, every parameter update (p_new - p, i.e. -lr * grad) within {o.update_tol:g} of "
          "PyTorch's relative to its largest entry ('update' in the diff column).")
    return all_ok


def main(argv=None):
    """Command line entry; returns 1 when an hlox run failed or an output did not match."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", help="comma-separated zoo names (default: the five realistic ones)")
    ap.add_argument("--small", action="store_true", help="use the _small zoo sizes")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per measurement (median)")
    ap.add_argument("--hlox", default=os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox")))
    ap.add_argument("--workdir", help="keep the exported modules and outputs here")
    ap.add_argument("--json", help="also write all results as JSON here")
    ap.add_argument("--tol", type=float, default=1e-3, help="relative tolerance for 'ok'")
    ap.add_argument("--update-tol", type=float, default=1e-2,
                    help="tolerance on the parameter updates relative to their largest entry")
    ap.add_argument("--lr", type=float, default=0.5,
                    help="SGD step of the train steps (default 0.5: not 1, which a simplifier may "
                    "fold away, and large enough that p - lr*grad keeps the gradient above the f32 "
                    "rounding of p, so the update check means something)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per subprocess")
    ap.add_argument("--cpu-time", action="store_true",
                    help="also compare CPU time per step (robust to machine load at 1 thread)")
    ap.add_argument("--variants", default="none,default",
                    help="hlox modules to time: none (unoptimized), default (optimized), or both")
    ap.add_argument("--seed", type=int, default=0,
                    help="torch seed for each model's weights and example inputs (default 0)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="alternate PyTorch and hlox this many times per row; best round each")
    # Internal: the PyTorch timing child.
    ap.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--example", help=argparse.SUPPRESS)
    ap.add_argument("--save", help=argparse.SUPPRESS)
    ap.add_argument("--warmup", type=int, default=2, help=argparse.SUPPRESS)

    o = ap.parse_args(argv)
    if o.torch_worker:
        o.threads = int(o.threads)
        return torch_worker(o)

    from hlox import zoo
    o.threads = [int(t) for t in o.threads.split(",") if t.strip()]
    o.variants = [v for v in o.variants.split(",") if v in ("none", "default")]
    models = o.models.split(",") if o.models else DEFAULT_MODELS
    if o.small:
        models = [m if m.endswith("_small") else m + "_small" for m in models]
    unknown = [m for m in models if m not in zoo.ZOO]
    if unknown:
        print(f"unknown model(s) {unknown}; zoo has {sorted(zoo.ZOO)}", file=sys.stderr)
        return 2
    if not os.access(o.hlox, os.X_OK):
        print(f"hlox binary not found at {o.hlox} (build it or pass --hlox / HLOX_BIN)", file=sys.stderr)
        return 2
    print("# hlox whole-graph benchmark")
    print(f"hlox: {o.hlox}; models: {', '.join(models)}; threads: {o.threads}; repeat: {o.repeat}; "
          f"train-step lr: {o.lr:g}")
    print("environment as found: " + ", ".join(f"{k}={os.environ.get(k, '(unset)')}" for k in ENV_KEYS))
    print("PyTorch baseline runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, "
          "OMP_WAIT_POLICY=PASSIVE, " + "=".join(BASELINE_THREAD_VARS) + "=threads (set before "
          "torch is imported), torch.set_num_threads=torch.set_num_interop_threads=threads and "
          "openblas_set_num_threads(threads) (OpenBLAS's pthread pool); "
          "hlox runs with the environment as found (it does not use OpenBLAS or OpenMP).")
    print(f"load average at start: {load_average()} (cores: {os.cpu_count()})\n", flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hlox_wg_") as tmp:
        work = o.workdir or tmp
        os.makedirs(work, exist_ok=True)
        # A private copy, so that a concurrent rebuild of the binary cannot break the run.
        private = os.path.join(tmp, "hlox")
        shutil.copy2(o.hlox, private)
        o.hlox = private
        for name in models:
            try:
                rows += bench_model(name, o, work)
            except Exception as e:  # an export failure costs one model, not the bench
                print(f"## {name}: FAILED: {type(e).__name__}: {e}", flush=True)
    print(f"\nload average at end: {load_average()}")
    all_ok = report(rows, o)
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"rows": rows, "load_average_end": load_average(),
                       "env": {k: os.environ.get(k) for k in ENV_KEYS}}, f, indent=1)
    return 0 if rows and all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
