"""Lowering helpers: PyTorch-semantics building blocks (broadcasting binary ops, reductions,
matmuls, convolutions) expressed as HLO instructions through HloBuilder."""

from typing import List, Optional, Sequence

from .hlo_builder import HloBuilder, Val


class ExportError(Exception):
    """An operation or argument the exporter cannot map; the message names it."""


FLOAT_TYPES = ("f16", "bf16", "f32", "f64")


class Lowering:
    def __init__(self, b: HloBuilder):
        self.b = b

    # ----- shapes and types -----
    def convert(self, v: Val, dtype: str) -> Val:
        return v if v.dtype == dtype else self.b.emit("convert", dtype, v.dims, (v,))

    def reshape(self, v: Val, dims: Sequence[int]) -> Val:
        dims = tuple(int(d) for d in dims)
        return v if v.dims == dims else self.b.emit("reshape", v.dtype, dims, (v,))

    def transpose(self, v: Val, perm: Sequence[int]) -> Val:
        perm = [p % max(v.rank, 1) for p in perm]
        if perm == list(range(v.rank)):
            return v
        dims = [v.dims[p] for p in perm]
        return self.b.emit("transpose", v.dtype, dims, (v,), f"dimensions={{{','.join(map(str, perm))}}}")

    def broadcast_to(self, v: Val, dims: Sequence[int]) -> Val:
        """NumPy/PyTorch broadcasting of v to `dims` (trailing dimensions aligned)."""
        dims = tuple(int(d) for d in dims)
        if v.dims == dims:
            return v
        k = len(dims) - v.rank
        if k < 0:
            raise ExportError(f"cannot broadcast {v.dims} to {dims}")
        kept = [i for i, d in enumerate(v.dims) if d == dims[k + i]]
        for i, d in enumerate(v.dims):
            if d != dims[k + i] and d != 1:
                raise ExportError(f"cannot broadcast {v.dims} to {dims}")
        src = self.reshape(v, [v.dims[i] for i in kept])
        mapping = ",".join(str(k + i) for i in kept)
        return self.b.emit("broadcast", v.dtype, dims, (src,), f"dimensions={{{mapping}}}")

    def scalar(self, value, dtype: str, dims: Sequence[int] = ()) -> Val:
        c = self.b.constant(dtype, value)
        return self.broadcast_to(c, dims) if dims else c

    def as_val(self, x, dtype: str, dims: Sequence[int]) -> Val:
        """A tensor operand converted and broadcast to (dtype, dims); Python numbers become constants."""
        if isinstance(x, Val):
            return self.broadcast_to(self.convert(x, dtype), dims)
        return self.scalar(x, dtype, dims)

    # ----- elementwise -----
    def binary(self, op: str, a, b_, dtype: str, dims: Sequence[int], compute: Optional[str] = None) -> Val:
        ct = compute or dtype
        x, y = self.as_val(a, ct, dims), self.as_val(b_, ct, dims)
        if op == "compare":
            raise ExportError("use compare()")
        return self.convert(self.b.emit(op, ct, dims, (x, y)), dtype)

    def compare(self, direction: str, a, b_, compute: str, dims: Sequence[int]) -> Val:
        x, y = self.as_val(a, compute, dims), self.as_val(b_, compute, dims)
        return self.b.emit("compare", "pred", dims, (x, y), f"direction={direction}")

    def unary(self, op: str, v: Val, dtype: Optional[str] = None) -> Val:
        v = self.convert(v, dtype or v.dtype)
        return self.b.emit(op, v.dtype, v.dims, (v,))

    def select(self, pred: Val, a, b_, dtype: str, dims: Sequence[int]) -> Val:
        p = self.broadcast_to(pred, dims)
        return self.b.emit("select", dtype, dims, (p, self.as_val(a, dtype, dims), self.as_val(b_, dtype, dims)))

    # ----- reductions -----
    def reduce(self, v: Val, axes: Sequence[int], kind: str, keepdim: bool, dtype: Optional[str] = None) -> Val:
        dtype = dtype or v.dtype
        v = self.convert(v, dtype)
        axes = sorted({a % max(v.rank, 1) for a in axes}) if v.rank else []
        if kind == "add":
            init = self.b.constant(dtype, 0)
        elif kind == "maximum":
            init = self.b.constant(dtype, float("-inf") if dtype in FLOAT_TYPES else -(2 ** 31))
        elif kind == "minimum":
            init = self.b.constant(dtype, float("inf") if dtype in FLOAT_TYPES else 2 ** 31 - 1)
        else:
            raise ExportError(f"reduction {kind}")
        out_dims = [d for i, d in enumerate(v.dims) if i not in axes]
        r = self.b.emit("reduce", dtype, out_dims, (v, init),
                        f"dimensions={{{','.join(map(str, axes))}}}, to_apply={self.b.reducer(kind, dtype)}")
        if keepdim:
            r = self.reshape(r, [1 if i in axes else d for i, d in enumerate(v.dims)])
        return r

    def mean(self, v: Val, axes: Sequence[int], keepdim: bool) -> Val:
        axes = sorted({a % max(v.rank, 1) for a in axes})
        count = 1
        for a in axes:
            count *= v.dims[a]
        s = self.reduce(v, axes, "add", keepdim)
        return self.binary("divide", s, float(count), s.dtype, s.dims)

    # ----- contractions -----
    def dot(self, a: Val, b_: Val, batch: int, dtype: str) -> Val:
        """a[..., m, k] x b[..., k, n] with `batch` leading batch dims on both sides."""
        bd = ",".join(str(i) for i in range(batch))
        dims = list(a.dims[:batch]) + [a.dims[batch], b_.dims[batch + 1]]
        attrs = (f"lhs_batch_dims={{{bd}}}, lhs_contracting_dims={{{batch + 1}}}, "
                 f"rhs_batch_dims={{{bd}}}, rhs_contracting_dims={{{batch}}}") if batch else \
                "lhs_contracting_dims={1}, rhs_contracting_dims={0}"
        return self.b.emit("dot", dtype, dims, (a, b_), attrs)

    def conv(self, x: Val, w: Val, out_dims, stride, padding, dilation, groups: int,
             labels: str, lhs_dilation=None, pads=None, reversal=False) -> Val:
        n = len(stride)
        size = "x".join(str(w.dims[2 + i]) for i in range(n)) if pads is None else None
        return self._conv(x, w, out_dims, stride, padding, dilation, groups, labels, lhs_dilation, pads,
                          reversal, size)

    def _conv(self, x, w, out_dims, stride, padding, dilation, groups, labels, lhs_dilation, pads, reversal,
              size):
        n = len(stride)
        if pads is None:
            pads = [(p, p) for p in padding]
        window = [f"size={size}", "stride=" + "x".join(map(str, stride)),
                  "pad=" + "x".join(f"{lo}_{hi}" for lo, hi in pads)]
        if lhs_dilation and any(d != 1 for d in lhs_dilation):
            window.append("lhs_dilate=" + "x".join(map(str, lhs_dilation)))
        if any(d != 1 for d in dilation):
            window.append("rhs_dilate=" + "x".join(map(str, dilation)))
        if reversal:
            window.append("rhs_reversal=" + "x".join(["1"] * n))
        attrs = f"window={{{' '.join(window)}}}, dim_labels={labels}"
        if groups != 1:
            attrs += f", feature_group_count={groups}"
        return self.b.emit("convolution", x.dtype, out_dims, (x, w), attrs)

    def spatial_labels(self, n: int) -> str:
        return "".join(str(i) for i in range(n))

    def slice(self, v: Val, starts: List[int], limits: List[int], strides: List[int]) -> Val:
        dims = [(l - s + st - 1) // st for s, l, st in zip(starts, limits, strides)]
        spec = ", ".join(f"[{s}:{l}:{st}]" for s, l, st in zip(starts, limits, strides))
        return self.b.emit("slice", v.dtype, dims, (v,), f"slice={{{spec}}}")
