#!/usr/bin/python3
"""A small REINFORCE agent in NumPy over hlox.env.DecisionEnv. The policy is a per-site softmax
over choices whose logits are linear in the site's features (one weight matrix per decision
point key, choices padded to the widest site); the return is the episode's final reward with
a moving-average baseline. Invalid candidates get the env's fail_reward, so the agent learns to
avoid them.

usage: PYTHONPATH=build/python python/examples/reinforce_agent.py MODULE.hlo [--episodes 50]
       [--reward speedup|ops|roofline] [--lr 0.05] [--seed 0]
"""
import argparse
import json

import numpy as np

from hlox.env import DecisionEnv


def squash(x):
    """Signed log scaling so features of very different magnitudes share one learning rate."""
    return np.sign(x) * np.log1p(np.abs(x))


class LinearSitePolicy:
    def __init__(self, rng, lr):
        self.rng, self.lr, self.weights = rng, lr, {}

    def act(self, key, obs):
        feats = squash(obs["site_features"].astype(np.float64))
        feats = np.concatenate([feats, np.ones((feats.shape[0], 1))], axis=1)  # bias column
        n_choices = obs["site_choices"]
        width = int(n_choices.max()) if len(n_choices) else 1
        w = self.weights.setdefault((key, feats.shape[1], width), np.zeros((feats.shape[1], width)))
        logits = feats @ w
        logits[np.arange(width)[None, :] >= n_choices[:, None]] = -np.inf  # choices a site lacks
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        action = np.array([self.rng.choice(width, p=p) for p in probs], dtype=np.int32)
        return action, (w, feats, probs, action)

    def update(self, trajectory, advantage):
        for w, feats, probs, action in trajectory:
            grad_logits = -probs
            grad_logits[np.arange(len(action)), action] += 1.0  # d log pi / d logits
            w += self.lr * advantage * feats.T @ grad_logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--episodes", type=int, default=50)
    ap.add_argument("--reward", default="speedup", choices=["speedup", "ops", "roofline"])
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    env = DecisionEnv(reward=args.reward, max_samples=10, time_cap_seconds=0.5, fail_reward=0.0)
    policy = LinearSitePolicy(rng, args.lr)
    baseline, best = None, (-np.inf, None)
    for ep in range(args.episodes):
        obs = env.reset(args.module)
        trajectory, done = [], False
        while not done:
            key = env.key
            if key is None:
                action = np.zeros(0, np.int32)
            else:
                action, step = policy.act(key, obs)
                trajectory.append(step)
            obs, reward, done, info = env.step(action)
        baseline = reward if baseline is None else 0.9 * baseline + 0.1 * reward
        policy.update(trajectory, reward - baseline)
        if info["status"] == "OK" and reward > best[0]:
            best = (reward, info["decisions"])
        print("episode %3d  status %-17s reward %8.4f  baseline %8.4f" % (ep, info["status"], reward,
                                                                          baseline), flush=True)
    print("best reward %.4f" % best[0])
    print("best decisions:", json.dumps({"pipeline": "default", "decisions": best[1]}))


if __name__ == "__main__":
    main()
