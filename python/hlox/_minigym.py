"""A stand-in for the part of Gymnasium that hlox.gym uses, for machines without gymnasium.

gymnasium is not a Debian 12 package, so hlox cannot depend on it. When it is importable hlox.gym
uses the real `gymnasium.Env` and `gymnasium.spaces`; otherwise these small classes with the same
essential methods and attributes (`sample`, `contains`/`in`, `seed`, `n`, `nvec`, `shape`,
`dtype`, `np_random`; an Env base with `reset(seed=...)` seeding `np_random`) keep the
environments usable and the same code running. They are not a Gymnasium reimplementation: only
what an agent loop over hlox's environments touches.
"""
import numpy as np


def _rng(seed):
    # Gymnasium builds its generators this way (PCG64 from a SeedSequence), so a seed gives
    # the same stream with or without gymnasium.
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


class Space:
    """Base of the local spaces: a shape, a dtype and a lazily seeded generator."""

    def __init__(self, shape=None, dtype=None, seed=None):
        self._shape = None if shape is None else tuple(int(d) for d in shape)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._np_random = None
        if seed is not None:
            self.seed(seed)

    @property
    def shape(self):
        return self._shape

    @property
    def np_random(self):
        if self._np_random is None:
            self.seed()
        return self._np_random

    def seed(self, seed=None):
        """Seeds the sampler; returns [seed] as Gymnasium does."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self._np_random = _rng(seed)
        return [seed]

    def __contains__(self, x):
        return self.contains(x)


def _as_array(x):
    try:
        return np.asarray(x)
    except (TypeError, ValueError):
        return None


class Discrete(Space):
    """{start, ..., start + n - 1}."""

    def __init__(self, n, seed=None, start=0):
        assert int(n) > 0, "Discrete needs n > 0"
        self.n, self.start = np.int64(n), np.int64(start)
        super().__init__((), np.int64, seed)

    def sample(self):
        return np.int64(self.start + self.np_random.integers(self.n))

    def contains(self, x):
        a = _as_array(x)
        if a is None or a.shape != () or not np.issubdtype(a.dtype, np.integer):
            return False
        return bool(self.start <= a < self.start + self.n)

    def __repr__(self):
        return "Discrete(%d)" % self.n

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n and self.start == other.start


class MultiDiscrete(Space):
    """Integer vectors with 0 <= x[i] < nvec[i]; nvec may be empty (a decision point without sites)."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=dtype).reshape(-1)
        assert (self.nvec > 0).all(), "MultiDiscrete needs every nvec[i] > 0"
        super().__init__(self.nvec.shape, dtype, seed)

    def sample(self):
        return (self.np_random.random(self.nvec.shape) * self.nvec).astype(self.dtype)

    def contains(self, x):
        a = _as_array(x)
        if a is None or a.shape != self.shape:
            return False
        if a.size and not np.issubdtype(a.dtype, np.integer):
            return False
        return bool(((0 <= a) & (a < self.nvec)).all())

    def __repr__(self):
        return "MultiDiscrete(%s)" % self.nvec

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)


class Box(Space):
    """Arrays of one shape and dtype with low <= x <= high elementwise (bounds may be infinite)."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        dtype = np.dtype(dtype)
        if shape is None:
            shape = np.broadcast(np.asarray(low), np.asarray(high)).shape
        self.low = np.broadcast_to(np.asarray(low, dtype=np.float64), shape).astype(dtype)
        self.high = np.broadcast_to(np.asarray(high, dtype=np.float64), shape).astype(dtype)
        super().__init__(shape, dtype, seed)

    def sample(self):
        low = np.where(np.isfinite(self.low.astype(np.float64)), self.low, -1e6).astype(np.float64)
        high = np.where(np.isfinite(self.high.astype(np.float64)), self.high, 1e6).astype(np.float64)
        if np.issubdtype(self.dtype, np.integer):
            return np.floor(self.np_random.uniform(low, high + 1)).clip(low, high).astype(self.dtype)
        return self.np_random.uniform(low, high).astype(self.dtype)

    def contains(self, x):
        a = _as_array(x)
        if a is None or a.shape != self.shape or not np.can_cast(a.dtype, self.dtype):
            return False
        return bool(np.all(a >= self.low) and np.all(a <= self.high))

    def __repr__(self):
        return "Box(%s, %s)" % (self.shape, self.dtype)


class Dict(Space):
    """A dict of named subspaces; an element is a dict with exactly those keys."""

    def __init__(self, spaces, seed=None):
        self.spaces = dict(spaces)
        super().__init__(None, None, None)
        if seed is not None:
            self.seed(seed)

    def seed(self, seed=None):
        seeds = super().seed(seed)
        for i, space in enumerate(self.spaces.values()):
            space.seed(int(self._np_random.integers(2 ** 63)) + i)
        return seeds

    def sample(self):
        return {k: s.sample() for k, s in self.spaces.items()}

    def contains(self, x):
        return (isinstance(x, dict) and x.keys() == self.spaces.keys()
                and all(self.spaces[k].contains(v) for k, v in x.items()))

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def __repr__(self):
        return "Dict(%s)" % ", ".join("%r: %r" % kv for kv in self.spaces.items())


class Env:
    """The Env base: `np_random` seeded by reset(seed=...), `unwrapped`, close(), render()."""

    metadata = {"render_modes": []}
    render_mode = None
    spec = None
    _np_random = None

    @property
    def np_random(self):
        if self._np_random is None:
            self._np_random = _rng(None)
        return self._np_random

    def reset(self, *, seed=None, options=None):
        if seed is not None:
            self._np_random = _rng(seed)

    @property
    def unwrapped(self):
        return self

    def render(self):
        return None

    def close(self):
        pass
