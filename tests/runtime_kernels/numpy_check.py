#!/usr/bin/python3
"""Cross-checks hlox kernels against NumPy through the hlox binary.

Writes small HLO modules (convolution, reduce-window, gather, scatter, sort, cholesky,
triangular-solve, QR and LU custom calls, fft of all four kinds, the inverse trigonometric and
hyperbolic functions and atan on real and complex types, ragged-dot, scan against cumsum, shuffle
against roll and fancy indexing), random inputs as .npy, runs
`$HLOX_BIN run FILE --inputs DIR --save-outputs DIR --threads N` and compares every output
with NumPy's answer. Exits non-zero on any mismatch or run failure.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HLOX = os.environ.get("HLOX_BIN", "build/bin/hlox")
RNG = np.random.default_rng(1234)
FAILURES = []

ADD_F32 = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
"""
MAX_F32 = """
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}
"""


def run(name, hlo, inputs, threads=1):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, name + ".hlo")
        with open(path, "w") as f:
            f.write(hlo)
        ind, outd = os.path.join(tmp, "in"), os.path.join(tmp, "out")
        os.makedirs(ind)
        os.makedirs(outd)
        for i, x in enumerate(inputs):
            np.save(os.path.join(ind, "%d.npy" % i), x)
        cmd = [HLOX, "run", path, "--inputs", ind, "--save-outputs", outd, "--threads", str(threads)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            FAILURES.append("%s: hlox run failed (%d): %s" % (name, p.returncode, (p.stderr or p.stdout)[-500:]))
            return None
        outs, i = [], 0
        while os.path.exists(os.path.join(outd, "%d.npy" % i)):
            outs.append(np.load(os.path.join(outd, "%d.npy" % i)))
            i += 1
        return outs


def check(name, got, want, atol=1e-4, rtol=1e-4, exact=False):
    if got is None:
        return
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        FAILURES.append("%s: shape %s != %s" % (name, got.shape, want.shape))
    elif exact and not np.array_equal(got, want):
        FAILURES.append("%s: values differ exactly" % name)
    elif not exact and not np.allclose(got, want, atol=atol, rtol=rtol, equal_nan=True):
        FAILURES.append("%s: max abs err %g" % (name, np.max(np.abs(got - want))))
    else:
        print("ok  %s" % name)


def conv():
    x = RNG.standard_normal((2, 9, 9, 4)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 2, 6)).astype(np.float32)
    hlo = """HloModule conv
ENTRY main {
  p0 = f32[2,9,9,4]{3,2,1,0} parameter(0)
  p1 = f32[3,3,2,6]{3,2,1,0} parameter(1)
  ROOT c = f32[2,5,5,6]{3,2,1,0} convolution(p0, p1), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2
}
"""
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want = np.zeros((2, 5, 5, 6))
    for o in range(6):
        g = o // 3
        for y in range(5):
            for xx in range(5):
                patch = xp[:, 2 * y:2 * y + 3, 2 * xx:2 * xx + 3, 2 * g:2 * g + 2]
                want[:, y, xx, o] = np.einsum("bhwc,hwc->b", patch, w[:, :, :, o])
    for t in (1, 2):
        out = run("conv", hlo, [x, w], t)
        check("convolution grouped strided padded (threads=%d)" % t, out and out[0], want)


def reduce_window():
    x = RNG.standard_normal((2, 7, 7, 3)).astype(np.float32)
    hlo = MAX_F32 + """
ENTRY main {
  p0 = f32[2,7,7,3]{3,2,1,0} parameter(0)
  init = f32[] constant(-inf)
  ROOT r = f32[2,4,4,3]{3,2,1,0} reduce-window(p0, init), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, to_apply=max
}
"""
    hlo = "HloModule rw\n" + hlo
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)), constant_values=-np.inf)
    want = np.zeros((2, 4, 4, 3), np.float32)
    for y in range(4):
        for xx in range(4):
            want[:, y, xx, :] = xp[:, 2 * y:2 * y + 3, 2 * xx:2 * xx + 3, :].max(axis=(1, 2))
    out = run("reduce_window", hlo, [x], 2)
    check("reduce-window max pool", out and out[0], want, exact=True)


def gather_scatter():
    table = RNG.standard_normal((10, 5)).astype(np.float32)
    idx = np.array([3, 0, 9, 12, -4, 3], np.int32)
    hlo = """HloModule g
ENTRY main {
  p0 = f32[10,5]{1,0} parameter(0)
  p1 = s32[6]{0} parameter(1)
  ROOT g = f32[6,5]{1,0} gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,5}
}
"""
    out = run("gather", hlo, [table, idx])
    check("gather rows with clamping", out and out[0], table[np.clip(idx, 0, 9)], exact=True)
    sidx = np.array([[1], [4], [1], [11], [-1], [9], [4], [0]], np.int32)
    upd = RNG.standard_normal((8, 5)).astype(np.float32)
    hlo = "HloModule s\n" + ADD_F32 + """
ENTRY main {
  p0 = f32[10,5]{1,0} parameter(0)
  p1 = s32[8,1]{1,0} parameter(1)
  p2 = f32[8,5]{1,0} parameter(2)
  ROOT s = f32[10,5]{1,0} scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"""
    want = table.astype(np.float64).copy()
    valid = (sidx[:, 0] >= 0) & (sidx[:, 0] < 10)
    np.add.at(want, sidx[valid, 0], upd[valid])
    out = run("scatter", hlo, [table, sidx, upd])
    check("scatter add with duplicates and out-of-bounds", out and out[0], want, atol=1e-5)


def sort():
    keys = RNG.integers(0, 8, (4, 50)).astype(np.float32)
    vals = np.tile(np.arange(50, dtype=np.int32), (4, 1))
    hlo = """HloModule sort
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT
}

ENTRY main {
  p0 = f32[4,50]{1,0} parameter(0)
  p1 = s32[4,50]{1,0} parameter(1)
  ROOT s = (f32[4,50]{1,0}, s32[4,50]{1,0}) sort(p0, p1), dimensions={1}, is_stable=true, to_apply=cmp
}
"""
    order = np.argsort(-keys, axis=1, kind="stable")
    out = run("sort", hlo, [keys, vals], 2)
    if out:
        check("sort keys descending", out[0], np.take_along_axis(keys, order, 1), exact=True)
        check("sort values stable", out[1], np.take_along_axis(vals, order, 1), exact=True)


def linalg():
    g = RNG.standard_normal((5, 5))
    a = (g @ g.T + 5 * np.eye(5)).astype(np.float32)
    b = RNG.standard_normal((5, 3)).astype(np.float32)
    hlo = """HloModule la
ENTRY main {
  p0 = f32[5,5]{1,0} parameter(0)
  p1 = f32[5,3]{1,0} parameter(1)
  l = f32[5,5]{1,0} cholesky(p0), lower=true
  x = f32[5,3]{1,0} triangular-solve(l, p1), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  ROOT t = (f32[5,5]{1,0}, f32[5,3]{1,0}) tuple(l, x)
}
"""
    out = run("linalg", hlo, [a, b])
    if out:
        lw = np.linalg.cholesky(a.astype(np.float64))
        check("cholesky lower", np.tril(out[0]), lw, atol=1e-4)
        check("triangular-solve", out[1], np.linalg.solve(lw, b.astype(np.float64)), atol=1e-4)
    m = RNG.standard_normal((6, 4)).astype(np.float32)
    hlo = """HloModule qr
ENTRY main {
  p0 = f32[6,4]{1,0} parameter(0)
  qr = (f32[6,4]{1,0}, f32[4]{0}, s32[], f32[16]{0}) custom-call(p0), custom_call_target="cusolver_geqrf"
  a = f32[6,4]{1,0} get-tuple-element(qr), index=0
  t = f32[4]{0} get-tuple-element(qr), index=1
  q = (f32[6,4]{1,0}, s32[], f32[16]{0}) custom-call(a, t), custom_call_target="cusolver_orgqr"
  qq = f32[6,4]{1,0} get-tuple-element(q), index=0
  ROOT r = (f32[6,4]{1,0}, f32[6,4]{1,0}) tuple(a, qq)
}
"""
    out = run("qr", hlo, [m])
    if out:
        qn, rn = np.linalg.qr(m.astype(np.float64))
        check("geqrf R (LAPACK signs)", np.triu(out[0])[:4], rn, atol=1e-4)
        check("orgqr Q", out[1], qn, atol=1e-4)
    lu_in = RNG.standard_normal((2, 4, 4)).astype(np.float32)
    hlo = """HloModule lu
ENTRY main {
  p0 = f32[2,4,4]{2,1,0} parameter(0)
  lu = (f32[2,4,4]{2,1,0}, s32[2,4]{1,0}, s32[2]{0}, f32[8]{0}) custom-call(p0), custom_call_target="cusolver_getrf"
  f = f32[2,4,4]{2,1,0} get-tuple-element(lu), index=0
  p = s32[2,4]{1,0} get-tuple-element(lu), index=1
  ROOT r = (f32[2,4,4]{2,1,0}, s32[2,4]{1,0}) tuple(f, p)
}
"""
    out = run("lu", hlo, [lu_in])
    if out:
        for bi in range(2):
            lu, piv = out[0][bi].astype(np.float64), out[1][bi]
            pa = lu_in[bi].astype(np.float64).copy()
            for i, pv in enumerate(piv):
                pa[[i, pv - 1]] = pa[[pv - 1, i]]
            lo = np.tril(lu, -1) + np.eye(4)
            check("getrf P A = L U (batch %d)" % bi, lo @ np.triu(lu), pa, atol=1e-4)
            # partial pivoting: |L| <= 1
            check("getrf |L| <= 1 (batch %d)" % bi, np.all(np.abs(lo) <= 1 + 1e-6), True, exact=True)


# (kind, input dtype, input shape, fft_length); the innermost len(fft_length) dims transform.
FFT_CASES = [
    ("FFT", np.complex64, (16,), (16,)),
    ("FFT", np.complex64, (3, 7), (7,)),
    ("FFT", np.complex128, (2, 2, 12), (12,)),
    ("IFFT", np.complex64, (4, 9), (9,)),
    ("IFFT", np.complex128, (32,), (32,)),
    ("FFT", np.complex64, (2, 6, 5), (6, 5)),
    ("IFFT", np.complex128, (8, 4), (8, 4)),
    ("FFT", np.complex128, (2, 3, 4, 5), (3, 4, 5)),
    ("IFFT", np.complex64, (4, 8, 2), (4, 8, 2)),
    ("RFFT", np.float32, (3, 10), (10,)),
    ("RFFT", np.float64, (9,), (9,)),
    ("RFFT", np.float32, (2, 6, 7), (6, 7)),
    ("RFFT", np.float64, (3, 4, 8), (3, 4, 8)),
    ("IRFFT", np.complex64, (3, 6), (10,)),
    ("IRFFT", np.complex128, (5,), (9,)),
    ("IRFFT", np.complex64, (2, 6, 4), (6, 7)),
    ("IRFFT", np.complex128, (3, 4, 5), (3, 4, 8)),
]
HLO_TYPE = {np.complex64: "c64", np.complex128: "c128", np.float32: "f32", np.float64: "f64"}
FFT_WORST = {}


def fft_reference(kind, x, length):
    axes = tuple(range(-len(length), 0))
    wide = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if kind == "FFT":
        return np.fft.fftn(wide, axes=axes)
    if kind == "IFFT":
        return np.fft.ifftn(wide, axes=axes)
    if kind == "RFFT":
        return np.fft.rfftn(wide, axes=axes)
    return np.fft.irfftn(wide, s=length, axes=axes)


def shape_text(dtype, shape):
    layout = ",".join(str(d) for d in reversed(range(len(shape))))
    return "%s[%s]{%s}" % (HLO_TYPE[dtype], ",".join(str(d) for d in shape), layout)


def fft():
    for kind, dt, shape, length in FFT_CASES:
        if np.iscomplexobj(np.zeros(1, dt)):
            x = (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dt)
        else:
            x = RNG.standard_normal(shape).astype(dt)
        want = fft_reference(kind, x, length)
        single = dt in (np.complex64, np.float32)
        out_dt = {"RFFT": np.complex64 if single else np.complex128,
                  "IRFFT": np.float32 if single else np.float64}.get(kind, dt)
        hlo = """HloModule fft
ENTRY main {
  p0 = %s parameter(0)
  ROOT r = %s fft(p0), fft_type=%s, fft_length={%s}
}
""" % (shape_text(dt, shape), shape_text(out_dt, want.shape), kind, ",".join(str(n) for n in length))
        name = "fft %s %s len=%s" % (kind, shape_text(dt, shape), list(length))
        outs = [run(name, hlo, [x], threads=t) for t in (1, 2)]
        if outs[0] is None or outs[1] is None:
            continue
        got = outs[0][0]
        if got.shape != want.shape or got.dtype != out_dt:
            FAILURES.append("%s: got %s %s, want %s %s" % (name, got.dtype, got.shape, np.dtype(out_dt), want.shape))
            continue
        if not np.array_equal(outs[0][0], outs[1][0]):
            FAILURES.append("%s: 1 and 2 threads differ" % name)
        err = np.max(np.abs(got.astype(want.dtype) - want)) / max(np.max(np.abs(want)), 1e-300)
        key = (kind, HLO_TYPE[dt])
        FFT_WORST[key] = max(FFT_WORST.get(key, 0.0), err)
        if err > (2e-6 if single else 1e-13):
            FAILURES.append("%s: max relative error %.3g" % (name, err))
        else:
            print("ok  %s (max rel err %.2e, same bits on 2 threads)" % (name, err))
    for (kind, t), err in sorted(FFT_WORST.items()):
        print("fft accuracy %s %s: max |got - numpy| / max |numpy| = %.2e" % (kind, t, err))


# The inverse trigonometric and hyperbolic functions on real and complex inputs inside each one's
# real domain (and across the branch cuts for complex, where NumPy follows the same C99 cuts).
INVERSE_HYPERBOLIC = {
    "acos": (np.arccos, -0.99, 0.99), "asin": (np.arcsin, -0.99, 0.99), "atanh": (np.arctanh, -0.99, 0.99),
    "acosh": (np.arccosh, 1.0, 9.0), "asinh": (np.arcsinh, -9.0, 9.0), "cosh": (np.cosh, -9.0, 9.0),
    "sinh": (np.sinh, -9.0, 9.0), "atan": (np.arctan, -9.0, 9.0)}


def inverse_hyperbolic():
    for op, (ref, lo, hi) in INVERSE_HYPERBOLIC.items():
        for t, dt, tol in (("f32", np.float32, 2e-6), ("f64", np.float64, 1e-14), ("c64", np.complex64, 2e-5),
                           ("c128", np.complex128, 1e-13)):
            x = RNG.uniform(lo, hi, 257).astype(dt)
            if dt in (np.complex64, np.complex128):
                x = (x + 1j * RNG.uniform(-2, 2, 257)).astype(dt)
            hlo = "HloModule %s\nENTRY e {\n  x = %s[257] parameter(0)\n  ROOT r = %s[257] %s(x)\n}\n" % (op, t, t, op)
            outs = run("%s_%s" % (op, t), hlo, [x])
            want = ref(x.astype(np.complex128 if np.iscomplexobj(x) else np.float64))
            check("%s %s" % (op, t), None if outs is None else outs[0].astype(want.dtype), want,
                  atol=tol * max(1.0, float(np.max(np.abs(want)))), rtol=tol)


# ragged-dot in its non-contracting mode (lhs rows split into groups, group i times rhs[i]) and
# its contracting mode (k split, one result per group), against NumPy slices of the same split.
def ragged_dot():
    m, k, n = 40, 24, 9
    for sizes in ([10, 0, 25, 3], [12, 7, 9, 20]):
        g = len(sizes)
        bounds = np.minimum(np.cumsum([0] + sizes), m)
        lhs = RNG.standard_normal((m, k)).astype(np.float32)
        rhs = RNG.standard_normal((g, k, n)).astype(np.float32)
        want = np.zeros((m, n))
        for i in range(g):
            want[bounds[i]:bounds[i + 1]] = lhs[bounds[i]:bounds[i + 1]].astype(np.float64) @ rhs[i]
        hlo = ("HloModule rd\nENTRY e {\n  l = f32[%d,%d] parameter(0)\n  r = f32[%d,%d,%d] parameter(1)\n"
               "  s = s32[%d] parameter(2)\n  ROOT d = f32[%d,%d] ragged-dot(l, r, s), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}\n}\n" % (m, k, g, k, n, g, m, n))
        outs = run("ragged_dot_rows", hlo, [lhs, rhs, np.array(sizes, np.int32)], threads=3)
        check("ragged-dot rows %s" % sizes, None if outs is None else outs[0], want, atol=1e-4)
        ksizes = [5, 0, 11, 2]  # the last 6 columns of k are in no group
        kb = np.cumsum([0] + ksizes)
        rhs2 = RNG.standard_normal((k, n)).astype(np.float32)
        want2 = np.stack([lhs[:, kb[i]:kb[i + 1]].astype(np.float64) @ rhs2[kb[i]:kb[i + 1]] for i in range(len(ksizes))])
        hlo2 = ("HloModule rdk\nENTRY e {\n  l = f32[%d,%d] parameter(0)\n  r = f32[%d,%d] parameter(1)\n"
                "  s = s64[4] parameter(2)\n  ROOT d = f32[4,%d,%d] ragged-dot(l, r, s), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}, lhs_ragged_dims={1}\n}\n" % (m, k, k, n, m, n))
        outs = run("ragged_dot_k", hlo2, [lhs, rhs2, np.array(ksizes, np.int64)])
        check("ragged-dot contracting", None if outs is None else outs[0], want2, atol=1e-4)


def scan_shuffle():
    x = RNG.standard_normal((3, 7, 2)).astype(np.float64)
    step = """
f {
  x = f64[3,2] parameter(0)
  c = f64[3,2] parameter(1)
  s = f64[3,2] add(x, c)
  ROOT t = (f64[3,2], f64[3,2]) tuple(s, s)
}
"""
    for rev in (False, True):
        hlo = ("HloModule scan\n" + step + "ENTRY e {\n  x = f64[3,7,2] parameter(0)\n  z = f64[] constant(0)\n"
               "  c = f64[3,2] broadcast(z), dimensions={}\n  ROOT r = (f64[3,7,2], f64[3,2]) scan(x, c), dimensions={1}, "
               "num_carries=1%s, to_apply=f\n}\n" % (", is_reverse=true" if rev else ""))
        outs = run("scan", hlo, [x], threads=2)
        want = np.flip(np.cumsum(np.flip(x, 1), axis=1), 1) if rev else np.cumsum(x, axis=1)
        check("scan cumsum%s" % (" reverse" if rev else ""), outs and outs[0], want, atol=1e-12)
        check("scan carry%s" % (" reverse" if rev else ""), outs and outs[1], x.sum(axis=1), atol=1e-12)
    y = RNG.standard_normal((4, 5, 6)).astype(np.float32)
    hlo = ("HloModule rot\nENTRY e {\n  y = f32[4,5,6] parameter(0)\n"
           "  ROOT r = f32[4,5,6] shuffle(y), dimensions={2,0}, mode=rotate, shifts={-2,7}\n}\n")
    outs = run("rotate", hlo, [y])
    check("shuffle rotate", outs and outs[0], np.roll(np.roll(y, 2, axis=2), -7, axis=0), exact=True)
    perm = RNG.permutation(5)
    hlo = ("HloModule perm\nENTRY e {\n  y = f32[4,5,6] parameter(0)\n"
           "  ROOT r = f32[4,5,6] shuffle(y), dimensions={1}, mode=permute, indices=s32[1,5,1]{2,1,0} {{%s}}\n}\n"
           % ", ".join("{%d}" % v for v in perm))
    outs = run("permute", hlo, [y], threads=2)
    check("shuffle permute", outs and outs[0], y[:, perm, :], exact=True)


def main():
    if not os.path.exists(HLOX):
        print("hlox binary not found at %s" % HLOX)
        return 1
    for fn in (conv, reduce_window, gather_scatter, sort, linalg, fft, inverse_hyperbolic, ragged_dot, scan_shuffle):
        fn()
    for f in FAILURES:
        print("FAIL " + f)
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
