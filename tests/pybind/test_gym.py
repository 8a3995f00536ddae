"""Tests of hlox.gym against the Gymnasium contract, on a shipped example module.

The core checks of Gymnasium's env checker are written out here (reset returns (obs, info) with
obs in observation_space; step returns a 5-tuple of the right types; reset(seed=s) is
deterministic; sampled actions are accepted; truncation is not termination; invalid actions end
the episode as documented), so they run without gymnasium, which is not a Debian package. When
gymnasium is importable, gymnasium.utils.env_checker.check_env and gymnasium.make run as well."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import run, test  # noqa: E402

import hlox.gym as hg  # noqa: E402

EXAMPLE = os.path.join(os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                       "examples", "mlp_train_small.hlo")
FAST = dict(max_samples=3, time_cap_seconds=0.1)


def make_envs():
    return [hg.DecisionGym(EXAMPLE, reward="roofline", **FAST), hg.PassOrderGym(EXAMPLE, max_steps=5)]


def check_reset(env, **kwargs):
    out = env.reset(**kwargs)
    assert isinstance(out, tuple) and len(out) == 2, out
    obs, info = out
    assert isinstance(info, dict), info
    assert obs in env.observation_space, "reset obs not in observation_space"
    return obs, info


def check_step(env, action):
    out = env.step(action)
    assert isinstance(out, tuple) and len(out) == 5, out
    obs, reward, terminated, truncated, info = out
    assert isinstance(reward, float) and np.isfinite(reward), reward
    assert isinstance(terminated, bool) and isinstance(truncated, bool), (terminated, truncated)
    assert isinstance(info, dict), info
    assert obs in env.observation_space, "step obs not in observation_space"
    return out


def same_obs(a, b):
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and np.array_equal(a[k], b[k]) for k in a)


@test
def reset_and_step_shapes():
    for env in make_envs():
        obs, _ = check_reset(env, seed=0)
        assert set(obs) >= {"node_features", "edge_index", "site_choices"}
        assert obs["edge_index"].shape[0] == 2 and obs["edge_index"].dtype == np.int64
        env.action_space.seed(1)
        check_step(env, env.action_space.sample())
        env.close()


@test
def reset_with_same_seed_is_deterministic():
    for env in make_envs():
        obs1, info1 = check_reset(env, seed=123)
        state = env.np_random.bit_generator.state
        obs2, info2 = check_reset(env, seed=123)
        assert same_obs(obs1, obs2) and info1 == info2
        assert env.np_random.bit_generator.state == state
        check_reset(env, seed=456)
        assert env.np_random.bit_generator.state != state
        check_reset(env, options={})  # options may be empty (Gymnasium's check_reset_options)


@test
def step_is_deterministic():
    for env in make_envs():
        results = []
        for _ in range(2):
            env.reset(seed=7)
            env.action_space.seed(7)
            results.append(check_step(env, env.action_space.sample()))
        (o1, r1, t1, u1, i1), (o2, r2, t2, u2, i2) = results
        assert same_obs(o1, o2) and r1 == r2 and t1 == t2 and u1 == u2 and i1 == i2, (i1, i2)


@test
def decision_episode_with_sampled_actions():
    env = hg.DecisionGym(EXAMPLE, reward="roofline", **FAST)
    assert isinstance(env.action_space, hg.spaces.MultiDiscrete)
    check_reset(env, seed=0)
    env.action_space.seed(3)
    keys = []
    for _ in range(200):
        assert list(env.action_space.nvec) == [len(s["choices"]) for s in env.sites]
        keys.append(env.key)
        obs, reward, terminated, truncated, info = check_step(env, env.action_space.sample())
        assert not truncated
        assert info["decided"] == keys[-1]
        if terminated:
            break
        assert reward == 0.0 and info["status"] == "PENDING" and info["key"] != keys[-1]
    assert terminated and info["status"] == "OK", info
    assert env.last_record["status"] == "OK" and reward > 0
    assert "record" not in info and len(set(keys)) == len(keys) > 1


@test
def decision_default_actions_give_roofline_one():
    env = hg.DecisionGym(EXAMPLE, reward="roofline", **FAST)
    env.reset()
    terminated = False
    while not terminated:
        _, reward, terminated, _, info = check_step(env, env.default_action())
    assert info["status"] == "OK" and abs(reward - 1.0) < 1e-9, (reward, info)


@test
def decision_invalid_actions_terminate():
    n = hg.DecisionGym(EXAMPLE).action_space.shape[0]
    for bad in ([0] * (n + 1), [99] * n, ["x"] * n, np.zeros((2, 2), np.int64), [0.5] * n):
        env = hg.DecisionGym(EXAMPLE, reward="ops", fail_reward=-3.0)
        env.reset()
        assert bad not in env.action_space
        obs, reward, terminated, truncated, info = check_step(env, bad)
        assert terminated and not truncated and reward == -3.0, (reward, info)
        assert info["status"] == "INVALID_DECISIONS", info
        _, _, terminated, _, info = env.step([0] * n)
        assert terminated and info["status"] == "EPISODE_DONE"


@test
def step_before_reset_raises():
    for env in make_envs():
        try:
            env.step(0)
        except RuntimeError:
            pass
        else:
            raise AssertionError("step before reset did not raise")


@test
def pass_order_truncation_is_not_termination():
    env = hg.PassOrderGym(EXAMPLE, max_steps=3)
    assert isinstance(env.action_space, hg.spaces.Discrete) and env.action_space.n == len(env.menu)
    assert env.menu[-1] == "stop"
    obs, _ = check_reset(env)
    start = int(obs["op_count"][0])
    total = 0.0
    for i in range(3):
        obs, reward, terminated, truncated, info = check_step(env, env.menu.index("cse"))
        total += reward
        assert not terminated and truncated == (i == 2), (i, terminated, truncated)
    assert total == start - int(obs["op_count"][0]) and total > 0
    check_reset(env)
    _, reward, terminated, truncated, info = check_step(env, len(env.menu) - 1)
    assert terminated and not truncated and reward == 0.0 and info["pass"] == "stop"


@test
def pass_order_invalid_actions_terminate():
    env = hg.PassOrderGym(EXAMPLE)
    for bad in (len(env.menu), -1, "cse", None):
        env.reset()
        assert bad not in env.action_space
        _, reward, terminated, truncated, info = check_step(env, bad)
        assert terminated and not truncated and reward == 0.0 and info["status"] == "INVALID_ACTION", info


@test
def reset_options_switch_module_and_pipeline():
    env = hg.DecisionGym(EXAMPLE, reward="ops")
    n0 = env.observation_space["node_features"].shape[0]
    obs, info = check_reset(env, options={"module": "examples/gpt2_block_small", "pipeline": "fusion-only"})
    assert info["key"] == "fusion#0" and obs["node_features"].shape[0] != n0, info
    assert env.module.name == "gpt2_block_small"
    obs, info = check_reset(env)  # the module and pipeline stay
    assert info["key"] == "fusion#0"
    try:
        env.reset(options={"modle": EXAMPLE})
    except ValueError as e:
        assert "modle" in str(e)
    else:
        raise AssertionError("unknown option accepted")


@test
def spaces_sample_contains_and_seed():
    s = hg.spaces.MultiDiscrete([2, 7, 3])
    s.seed(5)
    a = [s.sample() for _ in range(20)]
    s.seed(5)
    assert all(np.array_equal(x, s.sample()) for x in a)
    assert all(x in s for x in a) and [2, 0, 0] not in s and s.shape == (3,)
    d = hg.spaces.Discrete(4)
    assert d.n == 4 and 3 in d and 4 not in d and d.sample() in d
    b = hg.spaces.Box(0, 5, shape=(2, 3), dtype=np.int64)
    assert b.sample() in b and b.shape == (2, 3) and b.dtype == np.int64


@test
def gymnasium_check_env_when_installed():
    if not hg.HAVE_GYMNASIUM:
        print("  gymnasium not installed: its check_env is not run (the checks above cover its core)")
        return
    import gymnasium
    from gymnasium.utils.env_checker import check_env
    check_env(hg.DecisionGym(EXAMPLE, reward="roofline", **FAST), skip_render_check=True)
    check_env(hg.PassOrderGym(EXAMPLE), skip_render_check=True)
    env = gymnasium.make("hlox/PassOrder-v0")
    env.reset(seed=0)
    env.close()


if __name__ == "__main__":
    run()
