"""Gym-style environments over the hlox native core (hlox._hlox).

DecisionEnv (HloEnv's setting). An episode walks the decision points of one pipeline run on
one module: each decision point is a pass invocation with decision sites ("simplify#0",
"fusion#0", ...). One step = one full decision vector for the current decision point (one
choice per site; site i may take 0..site_choices[i]-1, 0 is always "keep"). The episode is
done after the last decision point; then the whole candidate (module, pipeline, decisions) is
evaluated and the reward given (rewards of earlier steps are 0):
  "speedup"  default_median / candidate_median (measured, validated; > 1 beats the default)
  "ops"      op_count(original) - op_count(candidate) (op-count reduction, no timing)
  "roofline" default_roofline / candidate_roofline (analytical estimate, validated)
A bad action (wrong length, choice out of range, not integers) or a candidate that fails
(WRONG_OUTPUT, RUN_ERROR, ...) never raises: the episode ends with reward `fail_reward` and
info["status"] naming what happened. Observations are dicts of NumPy arrays ready for a GNN:
node_features f32[N,F], edge_index i64[2,E], edge_features f32[E,Fe], site_nodes i64[S],
site_features f32[S,Fs], site_choices i64[S], site_defaults i64[S].

PassOrderEnv (the XLA pass-ordering gyms). Actions index pass_order_menu() (every pass, the
aggressive fusion variants "<label>:all", then "stop"); the reward of a step is the op-count reduction that pass achieved; done after "stop"
or max_steps. An out-of-range action ends the episode with info["status"] = "INVALID_ACTION".

evaluate_batch() evaluates many decision dicts through a broker (or locally) and gathers the
records in order; broker_evaluator(address) makes DecisionEnv evaluate through the fleet.
"""
import time

import numpy as np

from . import _hlox as native
from .native_client import Client

REWARDS = ("speedup", "ops", "roofline")


def as_module(module):
    """A native Module from a Module, a path to an .hlo file, or HLO text."""
    if isinstance(module, native.Module):
        return module
    text = str(module)
    if "HloModule" in text and "\n" in text:
        return native.parse_module(text)
    return native.load_module(text)


def _observation(features):
    keys = ("node_features", "edge_index", "edge_features", "site_nodes", "site_features",
            "site_choices", "site_defaults")
    return {k: np.asarray(features[k]) for k in keys}


class DecisionEnv:
    """HloEnv-like decision-site environment; see the module docstring for the scheme."""

    def __init__(self, pipeline="default", reward="speedup", seed=0, threads=1, validate=True,
                 max_samples=20, time_cap_seconds=1.0, fail_reward=-1.0, evaluator=None):
        if reward not in REWARDS:
            raise ValueError("reward must be one of %s" % (REWARDS,))
        self.pipeline, self.reward_kind = pipeline, reward
        self.seed, self.threads, self.validate = seed, threads, validate
        self.max_samples, self.time_cap_seconds = max_samples, time_cap_seconds
        self.fail_reward = fail_reward
        # evaluator(module, pipeline, decisions) -> record dict; default: in-process.
        self.evaluator = evaluator or self._evaluate_local
        self.module = None
        self._baseline_cache = {}

    # -- gym API ------------------------------------------------------------------------
    def reset(self, module):
        """Starts an episode on `module`; returns the first decision point's observation."""
        self.module = as_module(module)
        self.decisions = {}
        self.done = False
        self.observation = None
        self._advance()
        return self.observation

    def step(self, action):
        """Applies one decision vector; returns (observation, reward, done, info)."""
        if self.module is None or self.done:
            return self.observation, 0.0, True, {"status": "EPISODE_DONE", "key": None}
        info = {"key": self.key}
        try:
            vec = np.asarray(action)
            if vec.ndim != 1 or (vec.size and not np.issubdtype(vec.dtype, np.integer)):
                raise ValueError("INVALID_DECISIONS: action must be a 1-D integer vector")
            vec = [int(x) for x in vec]
            if self.key is not None:
                self.decisions[self.key] = vec
            self._advance()
        except (ValueError, TypeError, RuntimeError) as e:
            self.done = True
            msg = str(e)
            info.update(status="INVALID_DECISIONS" if "INVALID_DECISIONS" in msg else "RUN_ERROR",
                        message=msg)
            return self.observation, float(self.fail_reward), True, info
        if self.key is not None:
            info["status"] = "PENDING"
            return self.observation, 0.0, False, info
        self.done = True
        return self.observation, *self._final_reward(info)

    @property
    def num_sites(self):
        return len(self.sites)

    def default_action(self):
        """The pass's own heuristic choice at every site of the current decision point."""
        return np.array([s["default"] for s in self.sites], dtype=np.int32)

    def random_action(self, rng):
        """A uniformly random decision vector for the current decision point."""
        return np.array([rng.integers(len(s["choices"])) for s in self.sites], dtype=np.int32)

    # -- internals ----------------------------------------------------------------------
    def _advance(self):
        point = native.next_decision_point(self.module, self.pipeline, self.decisions)
        if point is None:
            self.key, self.sites = None, []
            if self.observation is None:
                self.observation = _observation(native.graph_features(self.module))
            return
        self.key, self.sites = point["key"], point["sites"]
        self.point_module = point["module"]
        self.observation = _observation(point["features"])

    def _evaluate_local(self, module, pipeline, decisions):
        measure = self.reward_kind == "speedup"
        validate = bool(self.validate)
        return native.evaluate(module, pipeline, decisions, seed=self.seed, threads=self.threads,
                               validate=validate, measure=measure, max_samples=self.max_samples,
                               time_cap_seconds=self.time_cap_seconds)

    def _baseline(self):
        key = (self.module.hash, self.pipeline, self.reward_kind)
        if key not in self._baseline_cache:
            self._baseline_cache[key] = self.evaluator(self.module, self.pipeline, {})
        return self._baseline_cache[key]

    def _final_reward(self, info):
        info["decisions"] = dict(self.decisions)
        if self.reward_kind == "ops":
            try:
                candidate = native.apply_decisions(self.module, self.pipeline, self.decisions)
            except ValueError as e:
                info.update(status="INVALID_DECISIONS", message=str(e))
                return float(self.fail_reward), True, info
            if self.validate:
                record = self.evaluator(self.module, self.pipeline, self.decisions)
                info["record"] = record
                if record["status"] != "OK":
                    info.update(status=record["status"], message=record.get("message", ""))
                    return float(self.fail_reward), True, info
            info.update(status="OK", op_count=candidate.op_count, original_op_count=self.module.op_count)
            return float(self.module.op_count - candidate.op_count), True, info
        record = self.evaluator(self.module, self.pipeline, self.decisions)
        info["record"] = record
        info["status"] = record["status"]
        if record["status"] != "OK":
            info["message"] = record.get("message", "")
            return float(self.fail_reward), True, info
        base = self._baseline()
        info["baseline"] = base
        if base["status"] != "OK":
            info.update(status="BASELINE_" + base["status"], message=base.get("message", ""))
            return float(self.fail_reward), True, info
        if self.reward_kind == "speedup":
            num, den = base["cost"]["median"], record["cost"]["median"]
        else:
            num, den = base["analytical"]["roofline_seconds"], record["analytical"]["roofline_seconds"]
        return (float(num / den) if den > 0 else 1.0), True, info


class PassOrderEnv:
    """Pass-ordering environment: actions index `menu` (passes, "<label>:all" variants, then "stop")."""

    def __init__(self, max_steps=32):
        self.menu = list(native.pass_order_menu())
        self.max_steps = max_steps
        self.module = None

    @property
    def num_actions(self):
        return len(self.menu)

    def reset(self, module):
        """Starts from `module`; the observation is its graph features plus op_count."""
        self.original = self.module = as_module(module)
        self.steps, self.history, self.done = 0, [], False
        return self._observe()

    def step(self, action):
        """Runs one pass (or stops); returns (observation, reward, done, info)."""
        if self.module is None or self.done:
            return self._observe(), 0.0, True, {"status": "EPISODE_DONE"}
        try:
            a = int(action)
            if not 0 <= a < len(self.menu):
                raise IndexError(a)
        except (TypeError, ValueError, IndexError):
            self.done = True
            return self._observe(), 0.0, True, {"status": "INVALID_ACTION", "action": repr(action)}
        try:
            module, reward, op_count, done = native.pass_order_apply(self.module, a)
        except ValueError as e:
            self.done = True
            return self._observe(), 0.0, True, {"status": "RUN_ERROR", "message": str(e)}
        self.module = module
        self.steps += 1
        self.history.append(self.menu[a])
        self.done = bool(done) or self.steps >= self.max_steps
        info = {"status": "OK", "pass": self.menu[a], "op_count": op_count, "history": list(self.history)}
        return self._observe(), float(reward), self.done, info

    def _observe(self):
        obs = _observation(native.graph_features(self.module)) if self.module is not None else {}
        obs["op_count"] = np.array([self.module.op_count if self.module is not None else 0], np.int64)
        return obs


def broker_evaluator(address, campaign="python-env", timeout=120.0, curve_key=None, broker_key=None):
    """An evaluator for DecisionEnv(evaluator=...) that sends each candidate to the broker at
    `address` (CURVE key files for a secured one) and waits for its record (TIMEOUT record after
    `timeout` seconds)."""
    client = Client(address, curve_key=curve_key, broker_key=broker_key)

    def evaluate(module, pipeline, decisions):
        job = client.submit(module, pipeline, decisions, campaign=campaign)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = client.next(0.5)
            if r is not None and r["job_id"] == job:
                return r["record"]
        return {"status": "TIMEOUT", "message": "no result within %.0f s" % timeout}

    return evaluate


def evaluate_batch(module, decisions_list, pipeline="default", address=None, fleet=None,
                   campaign="python-batch", timeout=300.0, curve_key=None, broker_key=None, **local_options):
    """Evaluates every decisions dict in `decisions_list`; returns their records in order.
    Through the broker at `address` (or an EmbeddedFleet `fleet`) when given, else in this
    process. Jobs that do not finish within `timeout` seconds get a TIMEOUT record."""
    module = as_module(module)
    if address is None and fleet is not None:
        address = fleet.address
    if address is None:
        return [native.evaluate(module, pipeline, d, **local_options) for d in decisions_list]
    client = Client(address, curve_key=curve_key, broker_key=broker_key)
    ids = [client.submit(module, pipeline, d, campaign=campaign) for d in decisions_list]
    results = {i: r["record"] for i, r in client.gather(ids, timeout).items()}
    timeout_record = {"status": "TIMEOUT", "message": "no result within %.0f s" % timeout}
    return [results.get(i, timeout_record) for i in ids]
