"""Writes HLO text. A small builder: values carry their name, element type and dims, and every
emit() appends one instruction line to the current computation. Reducer computations (add, max,
...) are created once per (kind, dtype) and shared."""

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

TORCH_TO_HLO = {
    "torch.float32": "f32", "torch.float64": "f64", "torch.float16": "f16", "torch.bfloat16": "bf16",
    "torch.int64": "s64", "torch.int32": "s32", "torch.int16": "s16", "torch.int8": "s8",
    "torch.uint8": "u8", "torch.bool": "pred",
}


@dataclass(frozen=True)
class Val:
    """One HLO value: instruction name, element type and dimensions."""
    name: str
    dtype: str
    dims: Tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.dims)


def shape_text(dtype: str, dims: Sequence[int]) -> str:
    text = f"{dtype}[{','.join(str(d) for d in dims)}]"
    if not dims:
        return text  # scalars carry no layout, as XLA prints them
    return text + "{" + ",".join(str(i) for i in reversed(range(len(dims)))) + "}"


def format_scalar(dtype: str, value) -> str:
    if dtype == "pred":
        return "true" if value else "false"
    if dtype in ("f16", "bf16", "f32", "f64"):
        v = float(value)
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(int(value))


class Computation:
    def __init__(self, name: str):
        self.name = name
        self.lines: List[str] = []
        self.params: List[Val] = []
        self.root: Optional[Val] = None


class HloBuilder:
    """Builds one HLO module; `entry` is the computation new instructions go to."""

    def __init__(self, module_name: str):
        self.module_name = module_name
        self.computations: List[Computation] = []
        self.entry = Computation("main")
        self.cur = self.entry
        self.counter = 0
        self.reducers: Dict[Tuple[str, str], str] = {}

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}.{self.counter}"

    def emit(self, opcode: str, dtype: str, dims: Sequence[int], operands: Sequence[Val] = (),
             attrs: str = "", stem: Optional[str] = None) -> Val:
        name = self.fresh(stem or opcode)
        ops = ", ".join(v.name for v in operands)
        extra = f", {attrs}" if attrs else ""
        self.cur.lines.append(f"  {name} = {shape_text(dtype, dims)} {opcode}({ops}){extra}")
        return Val(name, dtype, tuple(int(d) for d in dims))

    def emit_tuple(self, values: Sequence[Val]) -> str:
        name = self.fresh("tuple")
        shapes = ", ".join(shape_text(v.dtype, v.dims) for v in values)
        ops = ", ".join(v.name for v in values)
        self.cur.lines.append(f"  {name} = ({shapes}) tuple({ops})")
        return name

    def parameter(self, dtype: str, dims: Sequence[int], stem: str = "Arg") -> Val:
        idx = len(self.cur.params)
        v = self.emit("parameter", dtype, dims, (), "", stem=stem)
        self.cur.lines[-1] = self.cur.lines[-1].replace("parameter()", f"parameter({idx})")
        self.cur.params.append(v)
        return v

    def constant(self, dtype: str, value) -> Val:
        v = self.emit("constant", dtype, (), (), "")
        self.cur.lines[-1] = self.cur.lines[-1].replace("constant()", f"constant({format_scalar(dtype, value)})")
        return v

    def constant_array(self, dtype: str, values) -> Val:
        """A small dense constant from a numpy array (row-major)."""
        import numpy as np
        arr = np.asarray(values)
        def nest(a):
            if a.ndim == 0:
                return format_scalar(dtype, a.item())
            return "{" + ", ".join(nest(x) for x in a) + "}"
        v = self.emit("constant", dtype, arr.shape, (), "")
        self.cur.lines[-1] = self.cur.lines[-1].replace("constant()", f"constant({nest(arr)})")
        return v

    def reducer(self, kind: str, dtype: str) -> str:
        """Name of a scalar computation (a, b) -> kind(a, b), created on first use."""
        key = (kind, dtype)
        if key in self.reducers:
            return self.reducers[key]
        comp = Computation(f"{kind}_{dtype}.{len(self.computations) + 1}")
        saved, self.cur = self.cur, comp
        a = self.parameter(dtype, (), stem="lhs")
        b = self.parameter(dtype, (), stem="rhs")
        comp.root = self.emit(kind, dtype, (), (a, b))
        self.cur = saved
        self.computations.append(comp)
        self.reducers[key] = comp.name
        return comp.name

    def text(self, outputs: Sequence[Val]) -> str:
        root = self.emit_tuple(outputs)
        lines = [f"HloModule {self.module_name}", ""]
        for comp in self.computations:
            lines.append(f"{comp.name} {{")
            body = list(comp.lines)
            body[-1] = body[-1].replace(f"  {comp.root.name} =", f"  ROOT {comp.root.name} =", 1)
            lines.extend(body)
            lines.append("}")
            lines.append("")
        lines.append(f"ENTRY {self.entry.name} {{")
        body = list(self.entry.lines)
        body[-1] = body[-1].replace(f"  {root} =", f"  ROOT {root} =", 1)
        lines.extend(body)
        lines.append("}")
        return "\n".join(lines) + "\n"
