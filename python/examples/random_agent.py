#!/usr/bin/python3
"""Random agent over hlox.env.DecisionEnv: plays N episodes with uniformly random decision
vectors on one HLO module and reports the best reward (speedup over XLA's default heuristics
by default) and its decisions.

usage: PYTHONPATH=build/python python/examples/random_agent.py MODULE.hlo [--episodes 20]
       [--reward speedup|ops|roofline] [--pipeline default] [--seed 0]
"""
import argparse
import json

import numpy as np

from hlox.env import DecisionEnv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--reward", default="speedup", choices=["speedup", "ops", "roofline"])
    ap.add_argument("--pipeline", default="default")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    env = DecisionEnv(pipeline=args.pipeline, reward=args.reward, max_samples=10, time_cap_seconds=0.5)
    best = (-np.inf, None)
    statuses = {}
    for ep in range(args.episodes):
        env.reset(args.module)
        done = False
        while not done:
            _, reward, done, info = env.step(env.random_action(rng))
        statuses[info["status"]] = statuses.get(info["status"], 0) + 1
        print("episode %3d  status %-17s reward %8.4f" % (ep, info["status"], reward), flush=True)
        if info["status"] == "OK" and reward > best[0]:
            best = (reward, info["decisions"])
    print("statuses:", statuses)
    print("best reward %.4f" % best[0])
    print("best decisions:", json.dumps({"pipeline": args.pipeline, "decisions": best[1]}))


if __name__ == "__main__":
    main()
