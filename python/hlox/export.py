"""PyTorch-to-HLO exporter.

    PYTHONPATH=python /usr/bin/python3 -m hlox.export --model PKG.MOD:NAME --input-shape 2,3,16,16 \
        [--train] -o out.hlo [--example DIR]

Traces the model with make_fx (torch.fx graphs of ATen ops, with PyTorch's decompositions of
composite ops such as layer norm and softmax), then walks the graph with real tensors: each node
is executed by PyTorch (which fixes its result shape and dtype and gives the reference outputs)
and lowered to HLO by aten_ops. Inference graphs trace the module in eval mode; --train traces a
whole training step: forward, loss, backward (autograd) and an SGD update. Weights, buffers and
inputs become HLO parameters in that order. An op without a mapping is an error naming it."""

import argparse
import importlib
import os
import sys
from typing import List, Sequence, Tuple

import numpy as np
import torch
from torch._decomp import get_decompositions
from torch.fx.experimental.proxy_tensor import make_fx
from torch.nn.utils.stateless import functional_call

from . import aten_ops
from .hlo_builder import HloBuilder, TORCH_TO_HLO, Val
from .lowering import ExportError, Lowering

aten = torch.ops.aten
DECOMPOSITIONS = get_decompositions([
    aten.native_batch_norm, aten.native_batch_norm_backward, aten.native_layer_norm,
    aten.native_layer_norm_backward, aten._softmax, aten._softmax_backward_data, aten._log_softmax,
    aten._log_softmax_backward_data, aten.gelu, aten.gelu_backward, aten.threshold_backward, aten.silu,
    aten.silu_backward, aten.addmm, aten.mse_loss, aten.mse_loss_backward, aten.tanh_backward,
    aten.sigmoid_backward, aten.var, aten.std, aten.dropout, aten.native_dropout, aten._adaptive_avg_pool2d,
    aten.embedding_dense_backward, aten.masked_fill, aten.addcmul, aten.addcdiv, aten.rsub, aten.logsumexp,
    aten.hardtanh, aten.t, aten.transpose, aten.nll_loss_forward, aten.nll_loss_backward,
])


def load_model(spec: str) -> torch.nn.Module:
    """PKG.MOD:NAME -> an nn.Module built with no arguments (NAME a class or a factory function)."""
    if ":" not in spec:
        raise ExportError(f"--model must be PKG.MOD:NAME, got {spec!r}")
    mod_name, attr = spec.split(":", 1)
    obj = getattr(importlib.import_module(mod_name), attr)
    model = obj()
    if isinstance(model, tuple):  # zoo entries return (module, shapes, train)
        model = model[0]
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"{spec} did not build an nn.Module")
    return model


def make_step(model: torch.nn.Module, train: bool, lr: float):
    names = [n for n, _ in model.named_parameters()]

    if not train:
        def infer(params, buffers, *xs):
            with torch.no_grad():
                out = functional_call(model, {**params, **buffers}, tuple(xs))
            return list(out) if isinstance(out, (tuple, list)) else [out]
        return infer

    def step(params, buffers, *xs):
        out = functional_call(model, {**params, **buffers}, tuple(xs))
        out = out[0] if isinstance(out, (tuple, list)) else out
        loss = out if out.dim() == 0 else (out * out).mean()
        grads = torch.autograd.grad(loss, [params[n] for n in names])
        return [loss] + [params[n] - lr * g for n, g in zip(names, grads)]
    return step


class Exported:
    def __init__(self, text: str, inputs: List[np.ndarray], outputs: List[np.ndarray]):
        self.text, self.inputs, self.outputs = text, inputs, outputs


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    return t.detach().contiguous().numpy().copy()


def export(model: torch.nn.Module, input_shapes: Sequence[Tuple[int, ...]], train: bool = False,
           name: str = "model", seed: int = 0, lr: float = 0.01) -> Exported:
    """Traces `model` and returns the HLO text, parameter values and PyTorch's outputs."""
    torch.manual_seed(seed)
    model.train(train)
    params = {n: p.detach().clone().requires_grad_(train) for n, p in model.named_parameters()}
    buffers = {n: b.detach().clone() for n, b in model.named_buffers()}
    xs = [torch.randn(s) for s in input_shapes]
    fn = make_step(model, train, lr)
    graph = make_fx(fn, decomposition_table=DECOMPOSITIONS)(params, buffers, *xs)

    b = HloBuilder(name.replace("-", "_"))
    L = Lowering(b)
    flat_inputs = list(params.values()) + list(buffers.values()) + xs
    env, real = {}, {}
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(flat_inputs):
        raise ExportError(f"traced graph has {len(placeholders)} inputs, expected {len(flat_inputs)}")
    for node, value in zip(placeholders, flat_inputs):
        v = value.detach()
        real[node] = v
        env[node] = b.parameter(aten_ops.dt(v), aten_ops.shp(v), stem="Arg")

    def hlo_arg(a):
        if isinstance(a, torch.fx.Node):
            if env[a] is None:
                raise ExportError(f"{a.name} ({a.target}) is used but has no HLO value "
                                  "(e.g. max-pool indices are not exported)")
            return env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(hlo_arg(x) for x in a)
        return a

    def real_arg(a):
        if isinstance(a, torch.fx.Node):
            return real[a]
        if isinstance(a, (list, tuple)):
            return type(a)(real_arg(x) for x in a)
        return a

    outputs = None
    for node in graph.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":
            t = getattr(graph, node.target).detach()
            real[node] = t
            env[node] = b.constant_array(aten_ops.dt(t), t.numpy()) if t.dim() else b.constant(aten_ops.dt(t), t.item())
            continue
        if node.op == "output":
            outputs = node.args[0]
            break
        if node.op != "call_function":
            raise ExportError(f"unsupported fx node {node.op} {node.target}")
        rargs, rkwargs = list(real_arg(node.args)), {k: real_arg(v) for k, v in node.kwargs.items()}
        packet = getattr(node.target, "overloadpacket", None)
        inplace = packet is not None and packet.__name__.endswith("_") and isinstance(node.args[0], torch.fx.Node)
        if inplace:  # run in-place ops on a copy so earlier readers keep their values
            rargs[0] = rargs[0].clone()
        with torch.no_grad():
            value = node.target(*rargs, **rkwargs)
        real[node] = value
        env[node] = aten_ops.lower(L, node.target, hlo_arg(node.args),
                                   {k: hlo_arg(v) for k, v in node.kwargs.items()}, value)
        # In-place ops (name ending in '_') update their first argument for later readers.
        if inplace:
            env[node.args[0]] = env[node]
            real[node.args[0]] = value
    flat_out = [o for o in outputs if o is not None]
    out_vals = [env[o] for o in flat_out]
    text = b.text(out_vals)
    return Exported(text, [_to_numpy(t) for t in flat_inputs], [_to_numpy(real[o]) for o in flat_out])


def write_example(exp: Exported, directory: str) -> None:
    os.makedirs(directory, exist_ok=True)
    for i, a in enumerate(exp.inputs):
        np.save(os.path.join(directory, f"{i}.npy"), a)
    for i, a in enumerate(exp.outputs):
        np.save(os.path.join(directory, f"out{i}.npy"), a)


def parse_shape(text: str) -> Tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ExportError(f"bad --input-shape {text!r}: expected comma-separated integers")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hlox.export", description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="PKG.MOD:NAME (nn.Module class or factory)")
    ap.add_argument("--input-shape", action="append", default=[], help="one per input, e.g. 2,3,16,16")
    ap.add_argument("--train", action="store_true", help="export a training step (fwd+bwd+SGD)")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--example", help="write parameter values and PyTorch outputs as .npy here")
    args = ap.parse_args(argv)
    try:
        model = load_model(args.model)
        shapes = [parse_shape(s) for s in args.input_shape]
        name = args.model.split(":")[-1]
        exp = export(model, shapes, args.train, name, args.seed, args.lr)
    except ExportError as e:
        print(f"hlox.export: error: {e}", file=sys.stderr)
        return 1
    with open(args.output, "w") as f:
        f.write(exp.text)
    if args.example:
        write_example(exp, args.example)
    print(f"wrote {args.output}: {exp.text.count(chr(10))} lines, {len(exp.inputs)} parameters, "
          f"{len(exp.outputs)} outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
