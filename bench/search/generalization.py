"""Generalization of the learned local-advantage model, in the shape of the learned-advantage
paper's table: Gibbs-sample some corpus modules, train the GraphSAGE advantage model on those
logs, then search *other* modules with guided search and with random search (same budget, same
seeds, from the default policy and from random decisions) and report, per test module, the
relative improvement each reaches and how many evaluations guided search needs to reach random
search's final result. "Reach" compares improvements over each run's own first evaluation, not
raw costs: the runs are measured at different times on a shared machine, and a raw-cost
comparison would mostly compare the load of one run with the other's. Every search evaluates the
default policy first (its baseline), so improvements are over the default configuration in both
starts; with --start random, guided search then walks from a random configuration while random
search samples as always.

    /usr/bin/python3 bench/search/generalization.py [--objective measured|roofline|ops]
        [--budget 100] [--train-budget 150] [--seeds 2] [--train A,B|wide] [--test C,D] [--heldout-gibbs N]
        [--workdir DIR [--reuse]]

--workdir keeps every log in DIR; with --reuse, searches whose log is already there are not run
again (to resume, or to recompute the table).

Everything runs through `hlox search` / `hlox train-advantage` (in-process evaluation).

Noise reference: random search ignores --start, so its two runs per (module, seed) evaluate the
same vectors; scoring the --start random run against the --start default run with the same rule
("reached", "within half") shows what measurement noise alone gives. The table also prints the
advantage model's rank correlation on the test modules' own Gibbs logs when --heldout-gibbs N
records them (N evaluations each)."""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HLOX = os.environ.get("HLOX_BIN", os.path.join(ROOT, "build", "bin", "hlox"))
CORPUS = os.environ.get("HLOX_CORPUS", os.path.join(ROOT, "..", "shared", "hlo"))
TRAIN = "hloenv_mlp_regression_train_step,hloenv_maml_flax_train_step,gh_simple_linear_train,hloenv_toy_nn_loss"
# A wider train set (11 modules, all disjoint from TEST): --train wide.
TRAIN_WIDE = (TRAIN + ",hloenv_jraph_gnn_accuracy,hloenv_nux_randint,hloenv_jaxrl_qr,hloenv_toy_shuffle,hloenv_jaxlie_round,"
              "alpa_embed_sgd_spmd_pre,hloenv_neural_tangents_kernel")
TEST = ("gh_linear_adam,hloenv_gans_normal,hloenv_nngp_serial_kernel,hloenv_muzero_var,hloenv_brax_uniform,"
        "hloenv_jax_md_safe_mask,gh_linear_tp4_pp8,hloenv_siren_uniform")


def search(module, algo, budget, seed, out, objective, start="default", model=None, reuse=False):
    if reuse and os.path.exists(os.path.join(out, "log.jsonl")):
        return read_curve(out)
    cmd = [HLOX, "search", module, "--algo", algo, "--budget", str(budget), "--seed", str(seed),
           "--in-process", "--objective", objective, "--start", start, "--json", "--out", out, "--no-verdict"]
    if model:
        cmd += ["--model", model]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()[-500:]}")
    return read_curve(out)


def read_curve(out):
    """(first cost, best-so-far curve) of a search's log.jsonl."""
    costs = []
    with open(os.path.join(out, "log.jsonl")) as f:
        next(f)
        for line in f:
            c = json.loads(line)["cost"]
            costs.append(math.inf if c is None else c)
    best, curve = math.inf, []
    for c in costs:
        best = min(best, c)
        curve.append(best)
    return costs[0], curve


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objective", default="measured")
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--train-budget", type=int, default=150)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--train", default=TRAIN)
    ap.add_argument("--test", default=TEST)
    ap.add_argument("--workdir", default="")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--heldout-gibbs", type=int, default=0)
    a = ap.parse_args()
    if a.train == "wide":
        a.train = TRAIN_WIDE
    if set(a.train.split(",")) & set(a.test.split(",")):
        print("train and test modules must be disjoint", file=sys.stderr)
        return 1
    tmp = a.workdir or tempfile.mkdtemp(prefix="hlox-gen-")
    os.makedirs(tmp, exist_ok=True)
    print(f"logs in {tmp}")
    for m in a.train.split(","):
        search(os.path.join(CORPUS, m + ".hlo"), "gibbs", a.train_budget, 0, os.path.join(tmp, "logs", m), a.objective,
               reuse=a.reuse)
    model = os.path.join(tmp, "advantage.model")
    if not (a.reuse and os.path.exists(model)):
        r = subprocess.run([HLOX, "train-advantage", "--logs", os.path.join(tmp, "logs"), "-o", model, "--epochs",
                            "60"], capture_output=True, text=True)
        print(r.stdout.strip() or r.stderr.strip())
        if r.returncode != 0:
            return 1
    if a.heldout_gibbs > 0:
        for m in a.test.split(","):
            search(os.path.join(CORPUS, m + ".hlo"), "gibbs", a.heldout_gibbs, 0, os.path.join(tmp, "heldout", m),
                   a.objective, reuse=a.reuse)
        r = subprocess.run([HLOX, "train-advantage", "--evaluate", "--logs", os.path.join(tmp, "heldout"), "-o", model],
                           capture_output=True, text=True)
        print("advantage model on held-out Gibbs logs:\n" + (r.stdout.strip() or r.stderr.strip()))
    print(f"\nobjective {a.objective}, budget {a.budget}, seeds {a.seeds}; trained on {a.train}\n")
    print("| test module | start | random: improvement | guided: improvement | "
          "evals guided needs to reach random's result (random needed), per seed |")
    print("|---|---|---|---|---|")
    cases = []  # (guided needs, random needed) where random improved on its start
    noise = []  # the same for random search's --start random run against its --start default run
    runs = {}
    for m in a.test.split(","):
        path = os.path.join(CORPUS, m + ".hlo")
        for start in ("default", "random"):
            imp_r, imp_g, pairs = [], [], []
            for s in range(a.seeds):
                base_r, rc = search(path, "random", a.budget, s, os.path.join(tmp, m, start, f"r{s}"), a.objective,
                                    start, reuse=a.reuse)
                base_g, gc = search(path, "guided", a.budget, s, os.path.join(tmp, m, start, f"g{s}"), a.objective,
                                    start, model, reuse=a.reuse)
                runs[(m, start, s)] = (base_r, rc)
                gain_r = [base_r / c if c > 0 else 0 for c in rc]  # improvement over the run's start
                gain_g = [base_g / c if c > 0 else 0 for c in gc]
                imp_r.append(gain_r[-1] - 1)
                imp_g.append(gain_g[-1] - 1)
                if gain_r[-1] <= 1:
                    pairs.append("random found no gain")
                    continue
                target = gain_r[-1]
                used = next(i + 1 for i, g in enumerate(gain_r) if g >= target)
                need = next((i + 1 for i, g in enumerate(gain_g) if g >= target), math.inf)
                cases.append((need, used))
                pairs.append(f"{need} ({used})" if math.isfinite(need) else f"not reached ({used})")
            mean = lambda v: sum(v) / len(v)
            print(f"| {m} | {start} | {100 * mean(imp_r):.1f}% | {100 * mean(imp_g):.1f}% | {', '.join(pairs)} |")
    for (m, start, s), (base_d, cd) in runs.items():
        if start != "default" or (m, "random", s) not in runs:
            continue
        base_o, co = runs[(m, "random", s)]
        gain_d = [base_d / c if c > 0 else 0 for c in cd]
        gain_o = [base_o / c if c > 0 else 0 for c in co]
        if gain_d[-1] > 1:
            used = next(i + 1 for i, g in enumerate(gain_d) if g >= gain_d[-1])
            noise.append((next((i + 1 for i, g in enumerate(gain_o) if g >= gain_d[-1]), math.inf), used))
    for name, cs in (("guided", cases), ("noise reference (random search rerun on the same vectors)", noise)):
        if not cs:
            continue
        reached = [n / u for n, u in cs if math.isfinite(n)]
        half = sum(1 for n, u in cs if n <= u / 2)
        ratios = sorted(n / u for n, u in cs)
        print(f"\n{name}: {len(cs)} cases where random search improved on its start: reached random's result in "
              f"{len(reached)}, within half of random's evaluations in {half}; median evaluations ratio "
              f"{ratios[len(ratios) // 2]:.2f} (not reached counts as infinite)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
