"""Tests of hlox.env: DecisionEnv episodes on corpus modules with each reward, bad actions
ending the episode with a status, PassOrderEnv rewards against independently computed op
counts, and batched evaluation through an embedded fleet."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import corpus_files, hlox_bin, run, test  # noqa: E402

import hlox  # noqa: E402
from hlox.env import DecisionEnv, PassOrderEnv, broker_evaluator, evaluate_batch  # noqa: E402

FAST = dict(max_samples=3, time_cap_seconds=0.1)
CHAIN = """HloModule chain

ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] multiply(a, b)
  d = f32[8] add(c, a)
  e = f32[8] exponential(d)
  ROOT f = f32[8] subtract(e, b)
}
"""


def episode(env, module, policy):
    obs = env.reset(module)
    steps, total = 0, 0.0
    while True:
        assert obs["site_nodes"].shape[0] == env.num_sites or env.key is None
        obs, reward, done, info = env.step(policy(env))
        steps += 1
        total += reward
        if done:
            return steps, total, info
        assert info["status"] == "PENDING" and reward == 0.0
        assert steps < 200, "episode does not end"


@test
def decision_episode_on_corpus_speedup():
    rng = np.random.default_rng(0)
    ran = 0
    for path in corpus_files(smallest=3):
        env = DecisionEnv(reward="speedup", **FAST)
        steps, reward, info = episode(env, path, lambda e: e.random_action(rng))
        assert info["status"] in ("OK", "WRONG_OUTPUT", "RUN_ERROR"), info
        if info["status"] == "OK":
            med = info["record"]["cost"]["median"]
            base = info["baseline"]["cost"]["median"]
            assert abs(reward - base / med) < 1e-9 * max(1.0, reward)
            ran += 1
        assert len(info["decisions"]) == steps or env.key is None
    assert ran >= 1


@test
def decision_episode_ops_reward_matches_apply():
    env = DecisionEnv(reward="ops")
    for path in corpus_files(smallest=3):
        rng = np.random.default_rng(7)
        steps, reward, info = episode(env, path, lambda e: e.random_action(rng))
        if info["status"] != "OK":
            continue
        m = hlox.load_module(path)
        cand = hlox.apply_decisions(m, "default", info["decisions"])
        assert reward == m.op_count - cand.op_count, (reward, m.op_count, cand.op_count)


@test
def default_actions_reproduce_default_pipeline():
    env = DecisionEnv(reward="roofline")
    steps, reward, info = episode(env, CHAIN, lambda e: e.default_action())
    assert info["status"] == "OK", info
    assert abs(reward - 1.0) < 1e-9, reward  # the default's own decisions: roofline ratio 1


@test
def invalid_actions_end_episode_with_status():
    bad_actions = [lambda e: [0] * (e.num_sites + 3), lambda e: [1000] * e.num_sites,
                   lambda e: ["x"] * e.num_sites, lambda e: np.zeros((2, 2), np.int32)]
    for bad in bad_actions:
        env = DecisionEnv(reward="ops", fail_reward=-5.0)
        env.reset(CHAIN)
        assert env.num_sites > 0
        obs, reward, done, info = env.step(bad(env))
        assert done and reward == -5.0, (reward, info)
        assert info["status"] == "INVALID_DECISIONS", info
        obs, reward, done, info = env.step([0])  # stepping after the end is harmless
        assert done and info["status"] == "EPISODE_DONE"


@test
def pass_order_episode_rewards_are_op_count_drops():
    path = corpus_files(smallest=1)[0]
    env = PassOrderEnv(max_steps=6)
    obs = env.reset(path)
    before = int(obs["op_count"][0])
    rng = np.random.default_rng(3)
    labels = list(hlox.pass_order_menu())
    while True:
        a = int(rng.integers(env.num_actions - 1))  # any pass but "stop"
        prev = env.module
        obs, reward, done, info = env.step(a)
        assert info["status"] == "OK", info
        expect, _, _, _ = hlox.pass_order_apply(prev, a)
        assert reward == prev.op_count - expect.op_count == before - int(obs["op_count"][0])
        assert info["pass"] == labels[a]
        before = int(obs["op_count"][0])
        if done:
            break
    assert len(env.history) == 6
    env.reset(path)
    obs, reward, done, info = env.step(env.num_actions - 1)  # "stop"
    assert done and reward == 0.0
    env.reset(path)
    obs, reward, done, info = env.step(env.num_actions + 5)
    assert done and info["status"] == "INVALID_ACTION"


@test
def evaluate_batch_through_embedded_fleet():
    binary = hlox_bin()
    m = hlox.parse_module(CHAIN)
    p = hlox.next_decision_point(m, "default", {})
    n = len(p["sites"])
    batch = [{}, {p["key"]: [0] * n}, {p["key"]: [1] * n}, {p["key"]: [5] * (n + 1)}]
    fleet = hlox.EmbeddedFleet(2, binary)
    try:
        remote = evaluate_batch(m, batch, fleet=fleet, timeout=90)
        env = DecisionEnv(reward="roofline", evaluator=broker_evaluator(fleet.address, timeout=60))
        _, reward, info = episode(env, CHAIN, lambda e: e.default_action())
        assert info["status"] == "OK" and abs(reward - 1.0) < 1e-9, info
        assert info["record"]["provenance"]["worker_id"].startswith("local"), info["record"]
    finally:
        fleet.close()
    local = evaluate_batch(m, batch, measure=False)
    assert [r["status"] for r in remote] == [r["status"] for r in local], (remote, local)
    assert remote[3]["status"] == "INVALID_DECISIONS"
    for r, l in zip(remote[:3], local[:3]):
        assert r["status"] == "OK" and r["instruction_count"] == l["instruction_count"]
        assert r["analytical"]["op_count"] == l["analytical"]["op_count"]


if __name__ == "__main__":
    run()
