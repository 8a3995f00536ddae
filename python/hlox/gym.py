"""Gymnasium-shaped environments over hlox: DecisionGym (HloEnv's setting) and PassOrderGym.

They wrap hlox.env.DecisionEnv and hlox.env.PassOrderEnv (the legacy API, unchanged) with the
Gymnasium contract:

    obs, info = env.reset(seed=None, options={"module": ..., "pipeline": ...})
    obs, reward, terminated, truncated, info = env.step(action)

With gymnasium installed they subclass `gymnasium.Env`, their spaces are `gymnasium.spaces`
objects, and importing this module registers "hlox/Decision-v0" and "hlox/PassOrder-v0"
(`gymnasium.make("hlox.gym:hlox/PassOrder-v0")` imports and makes in one call). Without it
(gymnasium is not a Debian package) the same classes run on hlox._minigym's small stand-ins.

Module: the `module` argument or options["module"] (a Module, an .hlo path, HLO text, or a
hlox.datasets name such as "examples/mlp_train_small", the default). A module given in options
stays the env's module for later resets.

Observation: a dict of NumPy arrays, one graph per step (hlox.env's layout): node_features
f32[N,F], edge_index i64[2,E], edge_features f32[E,Fe], site_nodes i64[S], site_features
f32[S,Fs], site_choices i64[S], site_defaults i64[S] (PassOrderGym adds op_count i64[1]).
N, E and S change from step to step (passes add and remove instructions), so
`observation_space` is a Dict of Box with the current step's shapes, rebuilt on every reset and
step; an agent with fixed-size inputs pads or pools (a GNN does not need to).

DecisionGym: one step decides one decision point (a pass invocation such as "fusion#0") with one
choice per site, so `action_space` is `MultiDiscrete(site_choices)` of the current decision point
and changes on every reset and step (read it after each call). The reward is 0 until the last
decision point, then hlox.env's reward ("speedup" measured over the default pipeline,
"roofline", or "ops"); terminated=True after the last decision point. Episodes have a fixed
number of decision points, so truncated is always False. info: "status" (PENDING while points
remain, then OK or the failure), "decided" (the key this action decided), "key" (the next one,
None at the end), "num_sites", "pipeline", and at the end "decisions" (the whole dict, ready for
hlox.apply_decisions or a decisions file).
PassOrderGym: `action_space` is `Discrete(len(menu))` over hlox.pass_order_menu() (passes, the
"<label>:all" variants, "stop" last); reward = op-count reduction of that step. "stop" is
terminated=True; reaching max_steps without "stop" is truncated=True, terminated=False.

Invalid actions never raise: a vector of the wrong length, a choice out of range or a non-integer
action (DecisionGym), an index outside the menu (PassOrderGym), or a candidate that fails ends
the episode with terminated=True, the env's fail reward (DecisionGym's fail_reward, -1.0 by
default; PassOrderGym 0.0), and info["status"] naming what happened (INVALID_DECISIONS,
INVALID_ACTION, WRONG_OUTPUT, RUN_ERROR, ...). step() after the episode ended returns
terminated=True with info["status"] = "EPISODE_DONE"; step() before the first reset() raises
RuntimeError. Dynamics are deterministic (the same module and actions give the same
observations); reset(seed=...) seeds `np_random` as Gymnasium does. DecisionGym keeps the last
evaluation records in `last_record` / `last_baseline` rather than in info, so that info of equal
steps is equal (a measured record carries timings).
"""
import numpy as np

from . import datasets
from . import env as legacy

try:
    import gymnasium
    from gymnasium import spaces
    _EnvBase = gymnasium.Env
    HAVE_GYMNASIUM = True
except ImportError:
    from . import _minigym as spaces
    _EnvBase = spaces.Env
    HAVE_GYMNASIUM = False

DEFAULT_MODULE = "examples/mlp_train_small"
_INT_MAX = np.iinfo(np.int32).max


def observation_space_for(obs):
    """A Dict of Box holding exactly arrays of `obs`'s shapes (see the module docstring)."""
    nodes = int(obs["node_features"].shape[0])
    most_choices = int(obs["site_choices"].max()) if obs["site_choices"].size else 1

    def box(key, low, high):
        return spaces.Box(low, high, shape=obs[key].shape, dtype=obs[key].dtype)

    parts = {
        "node_features": box("node_features", -np.inf, np.inf),
        "edge_index": box("edge_index", 0, max(nodes - 1, 0)),
        "edge_features": box("edge_features", -np.inf, np.inf),
        "site_nodes": box("site_nodes", 0, max(nodes - 1, 0)),
        "site_features": box("site_features", -np.inf, np.inf),
        "site_choices": box("site_choices", 1, _INT_MAX),
        "site_defaults": box("site_defaults", 0, max(most_choices - 1, 0)),
    }
    if "op_count" in obs:
        parts["op_count"] = box("op_count", 0, _INT_MAX)
    return spaces.Dict(parts)


def _check_options(options, allowed):
    options = dict(options or {})
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValueError("unknown reset option(s) %s; known: %s" % (unknown, sorted(allowed)))
    return options


class DecisionGym(_EnvBase):
    """Decision-site environment (see the module docstring); `env_options` go to hlox.env.DecisionEnv
    (reward, seed, threads, validate, max_samples, time_cap_seconds, fail_reward, evaluator)."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, module=DEFAULT_MODULE, pipeline="default", reward="speedup", **env_options):
        self._env = legacy.DecisionEnv(pipeline=pipeline, reward=reward, **env_options)
        self._module = datasets.module_from(module)
        self.last_record = self.last_baseline = None
        self._started = False
        # Spaces exist before the first reset (Gymnasium checks them first): the first decision
        # point's, computed now and again by reset().
        self._update_spaces(self._env.reset(self._module))

    @property
    def module(self):
        """The module episodes start from."""
        return self._module

    @property
    def key(self):
        """The current decision point's invocation key ("fusion#0"), None after the last."""
        return self._env.key

    @property
    def sites(self):
        """The current decision point's sites (dicts: id, rule, instructions, choices, default)."""
        return self._env.sites

    def default_action(self):
        """The pass's own heuristic choice at every site of the current decision point."""
        return np.asarray(self._env.default_action(), dtype=np.int64)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        options = _check_options(options, ("module", "pipeline"))
        if "module" in options:
            self._module = datasets.module_from(options["module"])
        if "pipeline" in options:
            self._env.pipeline = options["pipeline"]
        obs = self._env.reset(self._module)
        self._started = True
        self.last_record = self.last_baseline = None
        self._update_spaces(obs)
        return obs, self._info({"status": "PENDING" if self.key is not None else "NO_SITES"})

    def step(self, action):
        if not self._started:
            raise RuntimeError("DecisionGym.step() before reset()")
        obs, reward, done, info = self._env.step(action)
        info["decided"] = info.pop("key", None)  # the point this action decided; "key" is the next
        self.last_record = info.pop("record", self.last_record)
        self.last_baseline = info.pop("baseline", self.last_baseline)
        if not done:
            self._update_spaces(obs)
        return obs, float(reward), bool(done), False, self._info(info)

    def _info(self, info):
        info = dict(info)
        info["key"] = self.key
        info["pipeline"] = self._env.pipeline
        info["num_sites"] = len(self.sites)
        return info

    def _update_spaces(self, obs):
        self.observation_space = observation_space_for(obs)
        self.action_space = spaces.MultiDiscrete(np.asarray(obs["site_choices"], dtype=np.int64))


class PassOrderGym(_EnvBase):
    """Pass-ordering environment (see the module docstring)."""

    metadata = {"render_modes": []}
    render_mode = None

    def __init__(self, module=DEFAULT_MODULE, max_steps=32):
        self._env = legacy.PassOrderEnv(max_steps=max_steps)
        self._module = datasets.module_from(module)
        self.menu = list(self._env.menu)
        self.action_space = spaces.Discrete(len(self.menu))
        self._started = False
        self.observation_space = observation_space_for(self._env.reset(self._module))

    @property
    def module(self):
        """The module episodes start from."""
        return self._module

    @property
    def current_module(self):
        """The module after the passes run so far in this episode."""
        return self._env.module

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        options = _check_options(options, ("module", "max_steps"))
        if "module" in options:
            self._module = datasets.module_from(options["module"])
        if "max_steps" in options:
            self._env.max_steps = int(options["max_steps"])
        obs = self._env.reset(self._module)
        self._started = True
        self.observation_space = observation_space_for(obs)
        return obs, {"status": "OK", "op_count": int(obs["op_count"][0]), "history": []}

    def step(self, action):
        if not self._started:
            raise RuntimeError("PassOrderGym.step() before reset()")
        obs, reward, done, info = self._env.step(action)
        # The legacy env's `done` covers both "stop" and the step cap; Gymnasium separates them.
        terminated = info["status"] != "OK" or info.get("pass") == "stop"
        truncated = bool(done) and not terminated
        self.observation_space = observation_space_for(obs)
        return obs, float(reward), terminated, truncated, info


def _register():
    specs = {"hlox/Decision-v0": "hlox.gym:DecisionGym", "hlox/PassOrder-v0": "hlox.gym:PassOrderGym"}
    for env_id, entry_point in specs.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


if HAVE_GYMNASIUM:
    _register()
