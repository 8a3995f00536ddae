"""Comparing two modules' outputs on the same seeded inputs, from Python.

hlox's evaluator compares a candidate with the module it was derived from; here any two modules
with the same entry parameter shapes are compared (a hand rewrite, XLA's optimized dump, a module
from another exporter). Both run on hlox's CPU runtime, on hlox.seeded_inputs(a, seed) and with the
same runtime seed (elided constants and RNG ops). Tolerances follow cost/validate.h: integers and
pred exactly; floats pass when |b - a| <= atol + rtol * |a| + rtol / 10 * max|a's leaf| (the last
term admits summation-order noise), with NaN and Inf positions matching exactly; per-type
defaults f64 1e-9/1e-12, f32 1e-4/1e-5, f16 1e-2/1e-3, bf16 2e-2/1e-2 (bf16 leaves are
recognised from the entry's root shape, since they reach Python as float32).
"""
import re

import numpy as np

from . import _hlox as native
from .env import as_module

# (rtol, atol) per HLO element type, as cost/validate.h's ToleranceFor.
_TOLERANCES = {"f64": (1e-9, 1e-12), "c128": (1e-9, 1e-12), "f32": (1e-4, 1e-5),
               "c64": (1e-4, 1e-5), "f16": (1e-2, 1e-3), "bf16": (2e-2, 1e-2)}
_LEAF_TYPE = re.compile(r"\b(pred|[su](?:2|4|8|16|32|64)|bf16|f16|f32|f64|c64|c128|f8\w*)\[")


def outputs_mismatch(a, b, seed=0, rtol=None, atol=None, threads=1):
    """'' when modules `a` and `b` (Modules, paths or text) give equal outputs on seeded inputs,
    else a one-line description of the first difference. ValueError when their entry parameters
    differ in number, shape or dtype (the same inputs cannot feed both)."""
    a, b = as_module(a), as_module(b)
    inputs = native.seeded_inputs(a, seed)
    _check_same_parameters(inputs, native.seeded_inputs(b, seed))
    want = native.run(a, inputs, threads=threads, seed=seed)
    got = native.run(b, inputs, threads=threads, seed=seed)
    if len(want) != len(got):
        return "output count differs: %d vs %d" % (len(want), len(got))
    types = _leaf_types(a)
    if len(types) != len(want):
        types = [None] * len(want)
    for i, (x, y, t) in enumerate(zip(want, got, types)):
        problem = _leaf_mismatch(x, y, t, rtol, atol)
        if problem:
            return "output %d: %s" % (i, problem)
    return ""


def equal_outputs(a, b, seed=0, rtol=None, atol=None, threads=1):
    """True when `a` and `b` compute equal outputs on the same seeded inputs (see outputs_mismatch)."""
    return not outputs_mismatch(a, b, seed=seed, rtol=rtol, atol=atol, threads=threads)


def _check_same_parameters(xs, ys):
    if len(xs) != len(ys):
        raise ValueError("the modules take different parameters: %d vs %d" % (len(xs), len(ys)))
    for i, (x, y) in enumerate(zip(xs, ys)):
        sx, sy = _signature(x), _signature(y)
        if sx != sy:
            raise ValueError("parameter %d differs: %s vs %s" % (i, sx, sy))


def _signature(value):
    if isinstance(value, tuple):
        return tuple(_signature(v) for v in value)
    if value is None:
        return None
    return (str(value.dtype), value.shape)


def _leaf_types(module):
    """HLO element types of the entry root's array leaves, in order ([] when not readable)."""
    text = module.text
    entry = text.find("\nENTRY ")
    root = re.search(r"^\s*ROOT \S+ = (.*?) [\w-]+\(", text[entry:], re.M) if entry >= 0 else None
    return _LEAF_TYPE.findall(root.group(1)) if root else []


def _leaf_mismatch(x, y, hlo_type, rtol, atol):
    if x.shape != y.shape or x.dtype != y.dtype:
        return "shape/dtype %s %s vs %s %s" % (x.dtype, x.shape, y.dtype, y.shape)
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.complexfloating)):
        x, y = x.reshape(-1), y.reshape(-1)
        bad = np.flatnonzero(x != y)
        return "index %d: %s != expected %s" % (bad[0], y[bad[0]], x[bad[0]]) if bad.size else ""
    default_rtol, default_atol = _TOLERANCES.get(hlo_type or "", _TOLERANCES.get(_numpy_type(x), (0.0, 0.0)))
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    parts = [(x.real, y.real), (x.imag, y.imag)] if np.iscomplexobj(x) else [(x, y)]
    for e, g in parts:
        e = e.astype(np.float64).reshape(-1)
        g = g.astype(np.float64).reshape(-1)
        nan_e, nan_g = np.isnan(e), np.isnan(g)
        inf_e, inf_g = np.isinf(e), np.isinf(g)
        special = nan_e | nan_g | inf_e | inf_g
        bad = (nan_e != nan_g) | (inf_e != inf_g) | (inf_e & inf_g & (e != g))
        finite = np.abs(e[~(nan_e | inf_e)])
        floor = 0.1 * rtol * (finite.max() if finite.size else 0.0)
        with np.errstate(invalid="ignore"):
            bad |= ~special & (np.abs(g - e) > atol + rtol * np.abs(e) + floor)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            return "index %d: %.9g != expected %.9g (rtol %g atol %g)" % (i, g[i], e[i], rtol, atol)
    return ""


def _numpy_type(x):
    return {"float64": "f64", "float32": "f32", "float16": "f16",
            "complex64": "c64", "complex128": "c128"}.get(str(x.dtype), "")
