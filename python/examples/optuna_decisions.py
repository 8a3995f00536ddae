#!/usr/bin/python3
"""Optuna over the decision sites of the fusion pass: every trial picks one choice per site of the
pipeline's first fusion decision point ("fusion#0"; earlier decision points take their pass's
default), hlox evaluates the candidate with validation (outputs compared with the unoptimized
module on seeded inputs), and the objective is its cost: the measured median time ("measured")
or the roofline estimate ("roofline", analytical, no timing noise). A candidate that fails
validation or does not run is pruned, never scored. At the end the best trial's decisions are
printed as a decisions file (docs/DECISIONS.md) with their cost against the default's.

usage: PYTHONPATH=build/python python/examples/optuna_decisions.py [MODULE] [--trials 30]
       [--objective measured|roofline] [--pipeline default] [--seed 0]
MODULE is an .hlo path or a hlox.datasets name (default: examples/mlp_train_small).
Needs python3-optuna (Debian); without it, says so and exits 0.
"""
import argparse
import json
import sys

try:
    import optuna
except ImportError:
    optuna = None

import hlox
from hlox.datasets import module_from


def fusion_point(module, pipeline):
    """(decisions before it, the first fusion decision point); the earlier points keep their
    pass's default choices, so trials vary the fusion decisions only."""
    decisions = {}
    while True:
        point = hlox.next_decision_point(module, pipeline, decisions)
        if point is None:
            raise SystemExit("pipeline %r has no fusion decision point on %s" % (pipeline, module.name))
        if point["key"].startswith("fusion#"):
            return decisions, point
        decisions[point["key"]] = [s["default"] for s in point["sites"]]


def cost_of(module, pipeline, decisions, objective, seed):
    """(status, cost in seconds) of one validated candidate."""
    record = hlox.evaluate(module, pipeline, decisions, seed=seed, validate=True,
                           measure=objective == "measured", max_samples=10, time_cap_seconds=0.5)
    if record["status"] != "OK":
        return record["status"], None
    if objective == "measured":
        return "OK", record["cost"]["median"]
    return "OK", record["analytical"]["roofline_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module", nargs="?", default="examples/mlp_train_small")
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--objective", default="roofline", choices=["measured", "roofline"])
    ap.add_argument("--pipeline", default="default")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if optuna is None:
        print("optuna_decisions: optuna is not installed (Debian: apt-get install python3-optuna); "
              "nothing to do")
        return 0
    module = module_from(args.module)
    before, point = fusion_point(module, args.pipeline)
    key, sites = point["key"], point["sites"]
    print("%s: %s has %d sites" % (module.name, key, len(sites)))
    status, default_cost = cost_of(module, args.pipeline, before, args.objective, args.seed)
    if status != "OK":
        raise SystemExit("the default pipeline fails on this module: %s" % status)

    def objective(trial):
        vector = [int(trial.suggest_categorical("site%d" % i, list(range(len(s["choices"])))))
                  for i, s in enumerate(sites)]
        decisions = dict(before, **{key: vector})
        status, cost = cost_of(module, args.pipeline, decisions, args.objective, args.seed)
        trial.set_user_attr("status", status)
        if cost is None:
            raise optuna.TrialPruned(status)  # a wrong or failing candidate is never scored
        return cost

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(seed=args.seed))
    # The default's own choices as the first trial, so the study starts from the heuristic.
    study.enqueue_trial({"site%d" % i: s["default"] for i, s in enumerate(sites)})
    study.optimize(objective, n_trials=args.trials)
    statuses = {}
    for t in study.trials:
        status = t.user_attrs.get("status", "?")
        statuses[status] = statuses.get(status, 0) + 1
    best = study.best_trial
    vector = [best.params["site%d" % i] for i in range(len(sites))]
    print("trials by status:", statuses)
    print("%s cost: default %.6g s, best %.6g s (x%.3f)"
          % (args.objective, default_cost, best.value, default_cost / best.value if best.value > 0 else 1.0))
    best_decisions = dict(before, **{key: vector})
    print("best decisions:", json.dumps({"pipeline": args.pipeline, "decisions": best_decisions}))
    if args.objective == "measured":
        # Few samples per trial and the best of many: an optimistic estimate until re-measured.
        print("(measured costs are single noisy estimates: check the decisions with "
              "`hlox eval MODULE --decisions FILE --paired-against default`)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
