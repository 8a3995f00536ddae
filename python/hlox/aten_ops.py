"""The ATen-to-HLO table. Each handler gets the Lowering, the node's arguments (tensors already
turned into HLO values) and PyTorch's real result for the node (which fixes result shapes and
dtypes), and returns the HLO value(s). An ATen op without a handler is an ExportError naming it."""

import operator

from .hlo_builder import TORCH_TO_HLO, Val
from .lowering import FLOAT_TYPES, ExportError, Lowering


def dt(t) -> str:
    try:
        return TORCH_TO_HLO[str(t.dtype)]
    except KeyError:
        raise ExportError(f"unsupported dtype {t.dtype}")


def shp(t):
    return tuple(int(d) for d in t.shape)


def _common(out, *xs):
    """Compute type for an op whose result is `out`: PyTorch's promoted operand type."""
    tensors = [x for x in xs if isinstance(x, Val)]
    if not tensors:
        return dt(out)
    return dt(out) if dt(out) != "pred" else tensors[0].dtype


BINARY = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "maximum": "maximum",
          "minimum": "minimum", "pow": "power", "atan2": "atan2", "remainder": "remainder",
          "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "logical_and": "and",
          "logical_or": "or"}
COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
UNARY = {"exp": "exponential", "log": "log", "tanh": "tanh", "sqrt": "sqrt", "rsqrt": "rsqrt",
         "neg": "negate", "abs": "abs", "sin": "sine", "cos": "cosine", "sigmoid": "logistic",
         "erf": "erf", "floor": "floor", "ceil": "ceil", "log1p": "log-plus-one", "expm1": "exponential-minus-one",
         "sign": "sign", "round": "round-nearest-even", "bitwise_not": "not", "logical_not": "not"}
IDENTITY = {"alias", "clone", "detach", "contiguous", "lift_fresh_copy", "_to_copy", "convert_element_type",
            "type_as", "to"}
RESHAPE = {"view", "_unsafe_view", "_reshape_alias", "reshape", "squeeze", "unsqueeze", "flatten", "view_as"}
CREATE = {"empty", "zeros", "ones", "full", "new_zeros", "new_ones", "new_full", "new_empty", "zeros_like",
          "ones_like", "full_like", "empty_like", "scalar_tensor", "fill"}


def lower_binary(L: Lowering, name, args, kwargs, out):
    a, b = args[0], args[1]
    alpha = kwargs.get("alpha", args[2] if len(args) > 2 else 1)
    op = BINARY[name]
    ct = _common(out, a, b)
    if name == "div" and ct not in FLOAT_TYPES:
        ct = dt(out)
    if alpha != 1:
        b = L.binary("multiply", b, alpha, ct, shp(out))
    if name == "pow" and not isinstance(b, Val) and float(b) == 2.0:
        x = L.as_val(a, ct, shp(out))
        return L.convert(L.b.emit("multiply", ct, shp(out), (x, x)), dt(out))
    return L.binary(op, a, b, dt(out), shp(out), compute=ct)


def lower_create(L, name, args, kwargs, out):
    value = out.flatten()[0].item() if out.numel() else 0
    if name == "empty" or name == "new_empty" or name == "empty_like":
        value = 0
        # empty's contents are undefined; the exporter defines them as zeros and copies
        # PyTorch's real value only if it is used, which the check below rejects.
    return L.scalar(value, dt(out), shp(out))


def lower_reduce(L, name, args, kwargs, out):
    x = args[0]
    dims = args[1] if len(args) > 1 and args[1] is not None else list(range(x.rank))
    if isinstance(dims, int):
        dims = [dims]
    keep = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
    if name in ("sum", "mean") and len(dims) == 0:
        dims = list(range(x.rank))
    if name == "sum":
        r = L.reduce(x, dims, "add", keep, dtype=dt(out))
    elif name == "mean":
        r = L.mean(L.convert(x, dt(out)), dims, keep)
    elif name == "amax":
        r = L.reduce(x, dims, "maximum", keep)
    elif name == "amin":
        r = L.reduce(x, dims, "minimum", keep)
    else:
        raise ExportError(name)
    return L.reshape(r, shp(out))


def lower_var_mean(L, name, args, kwargs, out):
    x = args[0]
    dims = args[1] if len(args) > 1 and args[1] is not None else list(range(x.rank))
    correction = kwargs.get("correction", 1)
    keep = kwargs.get("keepdim", False)
    mean_k = L.mean(x, dims, True)
    diff = L.binary("subtract", x, mean_k, x.dtype, x.dims)
    sq = L.b.emit("multiply", x.dtype, x.dims, (diff, diff))
    count = 1
    for d in dims:
        count *= x.dims[d % x.rank]
    s = L.reduce(sq, dims, "add", keep)
    var = L.binary("divide", s, float(max(count - (correction if correction is not None else 1), 0)), s.dtype, s.dims)
    mean = mean_k if keep else L.reshape(mean_k, var.dims)
    return (L.reshape(var, shp(out[0])), L.reshape(mean, shp(out[1])))


def lower_mm(L, name, args, kwargs, out):
    a, b = args[0], args[1]
    batch = 1 if name == "bmm" else 0
    return L.dot(L.convert(a, dt(out)), L.convert(b, dt(out)), batch, dt(out))


def lower_conv(L, name, args, kwargs, out):
    x, w, bias, stride, padding, dilation, transposed, _, groups = args[:9]
    if transposed:
        raise ExportError("aten.convolution with transposed=True")
    n = len(stride)
    sp = L.spatial_labels(n)
    y = L.conv(x, w, shp(out), stride, padding, dilation, groups, f"bf{sp}_oi{sp}->bf{sp}")
    if bias is not None:
        bb = L.b.emit("broadcast", y.dtype, y.dims, (bias,), "dimensions={1}")
        y = L.b.emit("add", y.dtype, y.dims, (y, bb))
    return y


def lower_conv_backward(L, name, args, kwargs, out):
    g, x, w, bias_sizes, stride, padding, dilation, transposed, _, groups, mask = args[:11]
    if transposed or groups != 1:
        raise ExportError("aten.convolution_backward with transposed or groups != 1")
    n = len(stride)
    sp = L.spatial_labels(n)
    results = [None, None, None]
    if mask[0]:
        pads = []
        for i in range(n):
            k_dil = (w.dims[2 + i] - 1) * dilation[i] + 1
            g_dil = (g.dims[2 + i] - 1) * stride[i] + 1
            lo = k_dil - 1 - padding[i]
            hi = x.dims[2 + i] - 1 + k_dil - g_dil - lo
            pads.append((lo, hi))
        size = "x".join(str(w.dims[2 + i]) for i in range(n))
        results[0] = L._conv(g, w, x.dims, [1] * n, None, dilation, 1, f"bf{sp}_io{sp}->bf{sp}", stride, pads,
                             True, size)
    if mask[1]:
        pads = []
        for i in range(n):
            lo = padding[i]
            hi = (w.dims[2 + i] - 1) * dilation[i] + (g.dims[2 + i] - 1) * stride[i] + 1 - x.dims[2 + i] - lo
            pads.append((lo, hi))
        size = "x".join(str(g.dims[2 + i]) for i in range(n))
        results[1] = L._conv(x, g, w.dims, dilation, None, stride, 1, f"fb{sp}_io{sp}->fb{sp}", None, pads,
                             False, size)
    if mask[2]:
        results[2] = L.reduce(g, [0] + [2 + i for i in range(n)], "add", False)
    return tuple(results)


def lower_max_pool(L, name, args, kwargs, out):
    x, kernel = args[0], list(args[1])
    stride = list(args[2]) if len(args) > 2 and args[2] else kernel
    padding = list(args[3]) if len(args) > 3 else [0, 0]
    dilation = list(args[4]) if len(args) > 4 else [1, 1]
    if len(padding) == 1:
        padding = padding * len(kernel)
    o = out[0]
    lead = x.rank - len(kernel)
    size = "x".join(["1"] * lead + [str(k) for k in kernel])
    strides = "x".join(["1"] * lead + [str(s) for s in stride])
    pad = "x".join(["0_0"] * lead + [f"{p}_{(shp(o)[lead + i] - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 - x.dims[lead + i] - p}" for i, p in enumerate(padding)])
    win = f"size={size} stride={strides} pad={pad}"
    if any(d != 1 for d in dilation):
        win += " rhs_dilate=" + "x".join(["1"] * lead + [str(d) for d in dilation])
    init = L.b.constant(x.dtype, float("-inf"))
    r = L.b.emit("reduce-window", x.dtype, shp(o), (x, init),
                 f"window={{{win}}}, to_apply={L.b.reducer('maximum', x.dtype)}")
    return (r, None)  # indices are not exported; a use of them is an error (see getitem)


def lower_embedding(L, name, args, kwargs, out):
    w, idx = args[0], args[1]
    flat = L.reshape(idx, list(idx.dims) + [1])
    dims = list(idx.dims) + [w.dims[1]]
    return L.b.emit("gather", w.dtype, dims, (w, flat),
                    f"offset_dims={{{idx.rank}}}, collapsed_slice_dims={{0}}, start_index_map={{0}}, "
                    f"index_vector_dim={idx.rank}, slice_sizes={{1,{w.dims[1]}}}")


def lower_slice(L, name, args, kwargs, out):
    x, dim = args[0], args[1] % args[0].rank
    start = args[2] if len(args) > 2 and args[2] is not None else 0
    end = args[3] if len(args) > 3 and args[3] is not None else x.dims[dim]
    step = args[4] if len(args) > 4 else 1
    size = x.dims[dim]
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    starts, limits, strides = [0] * x.rank, list(x.dims), [1] * x.rank
    starts[dim], limits[dim], strides[dim] = start, end, step
    return L.slice(x, starts, limits, strides)


def lower_split(L, name, args, kwargs, out):
    x, size, dim = args[0], args[1], (args[2] if len(args) > 2 else 0) % args[0].rank
    parts, start = [], 0
    for t in out:
        n = t.shape[dim]
        starts, limits = [0] * x.rank, list(x.dims)
        starts[dim], limits[dim] = start, start + n
        parts.append(L.slice(x, starts, limits, [1] * x.rank))
        start += n
    return tuple(parts)


def lower_select_int(L, name, args, kwargs, out):
    x, dim, index = args[0], args[1] % args[0].rank, args[2]
    index = index + x.dims[dim] if index < 0 else index
    starts, limits = [0] * x.rank, list(x.dims)
    starts[dim], limits[dim] = index, index + 1
    return L.reshape(L.slice(x, starts, limits, [1] * x.rank), shp(out))


def lower_cat(L, name, args, kwargs, out):
    xs = [v for v in args[0] if v.dims[0:1] != (0,) or len(v.dims) > 1]
    dim = (args[1] if len(args) > 1 else 0) % len(shp(out))
    xs = [L.convert(v, dt(out)) for v in xs if v.dims[dim] != 0]
    return L.b.emit("concatenate", dt(out), shp(out), xs, f"dimensions={{{dim}}}")


def lower_where(L, name, args, kwargs, out):
    return L.select(L.convert(args[0], "pred"), args[1], args[2], dt(out), shp(out))


def lower_clamp(L, name, args, kwargs, out):
    x = L.convert(args[0], dt(out))
    lo = args[1] if len(args) > 1 else kwargs.get("min")
    hi = args[2] if len(args) > 2 else kwargs.get("max")
    if name == "clamp_min":
        lo, hi = args[1], None
    if lo is not None:
        x = L.binary("maximum", x, lo, dt(out), shp(out))
    if hi is not None:
        x = L.binary("minimum", x, hi, dt(out), shp(out))
    return x


def lower_getitem(L, name, args, kwargs, out):
    seq, i = args[0], args[1]
    return seq[i]  # None for results not exported (pooling indices); using one is an error


def lower(L: Lowering, target, args, kwargs, out):
    """Dispatches one traced call to its handler."""
    if target is operator.getitem:
        return lower_getitem(L, "getitem", args, kwargs, out)
    packet = getattr(target, "overloadpacket", None)
    name = getattr(packet, "__name__", str(target)).rstrip("_") if packet is not None else str(target)
    full = str(target)
    if name in IDENTITY:
        return L.convert(args[0], dt(out)) if isinstance(args[0], Val) else L.scalar(args[0], dt(out), shp(out))
    if name in RESHAPE:
        return L.reshape(args[0], shp(out))
    if name in CREATE:
        return lower_create(L, name, args, kwargs, out)
    if name == "copy":
        return L.as_val(args[1], dt(out), shp(out))
    if name in BINARY:
        return lower_binary(L, name, args, kwargs, out)
    if name == "rsub":
        return L.binary("subtract", args[1], args[0], dt(out), shp(out))
    if name in COMPARE:
        vals = [v for v in args[:2] if isinstance(v, Val)]
        ct = next((v.dtype for v in vals if v.dtype in FLOAT_TYPES), vals[0].dtype)
        return L.compare(COMPARE[name], args[0], args[1], ct, shp(out))
    if name in UNARY:
        return L.unary(UNARY[name], args[0], dt(out) if dt(out) != "pred" or name.endswith("not") else None)
    if name == "reciprocal":
        return L.binary("divide", 1.0, args[0], dt(out), shp(out))
    if name == "relu":
        return L.binary("maximum", args[0], 0, dt(out), shp(out))
    if name in ("sum", "mean", "amax", "amin"):
        return lower_reduce(L, name, args, kwargs, out)
    if name == "var_mean":
        return lower_var_mean(L, name, args, kwargs, out)
    if name in ("mm", "bmm"):
        return lower_mm(L, name, args, kwargs, out)
    if name == "convolution":
        return lower_conv(L, name, args, kwargs, out)
    if name == "convolution_backward":
        return lower_conv_backward(L, name, args, kwargs, out)
    if name == "max_pool2d_with_indices":
        return lower_max_pool(L, name, args, kwargs, out)
    if name == "embedding":
        return lower_embedding(L, name, args, kwargs, out)
    if name == "permute":
        return L.transpose(args[0], list(args[1]))
    if name == "expand":
        return L.broadcast_to(args[0], shp(out))
    if name == "slice":
        return lower_slice(L, name, args, kwargs, out)
    if name == "select" and "int" in full:
        return lower_select_int(L, name, args, kwargs, out)
    if name == "split":
        return lower_split(L, name, args, kwargs, out)
    if name == "cat":
        return lower_cat(L, name, args, kwargs, out)
    if name == "where":
        return lower_where(L, name, args, kwargs, out)
    if name in ("clamp", "clamp_min", "clamp_max"):
        if name == "clamp_max":
            return L.binary("minimum", args[0], args[1], dt(out), shp(out))
        return lower_clamp(L, name, args, kwargs, out)
    raise ExportError(f"no HLO mapping for {full}")
