"""HloEnv's result objects over hlox data: HloModule, HloGraph (CSR graph), EvaluationResult.

HloGraph is built from hlox's graph features (docs/DECISIONS.md, "Graph features"): one node per
instruction, one edge per operand (operand -> user). Edges are given in HloEnv's compressed
sparse row form: the operands of node i are in_edge_indices[in_edge_offsets[i]:in_edge_offsets[i+1]]
(in operand order), its users out_edge_indices[out_edge_offsets[i]:out_edge_offsets[i+1]].
An alternative is an hlox decision site, shown as HloEnv shows it (HloGraph's docstring).
"""
import numpy as np

from .. import _hlox as native

# HloEnv graph fields with no counterpart in hlox's features: asking for one says so.
_NOT_PROVIDED = {
    "opcode_attrs": "hlox's graph features carry no per-opcode attribute vectors",
    "opcode_attr_counts": "hlox's graph features carry no per-opcode attribute vectors",
    "lehmercodes": "hlox's edge features carry no layout permutation codes",
    "layouts": "hlox's edge features carry no layouts",
}


def module_hash(module):
    """HloEnv's module hash, an unsigned 64-bit integer: the first 64 bits of hlox's content hash
    (Module.hash), so equal modules get equal hashes as in HloEnv."""
    return int(module.hash[:16], 16)


class HloModule:
    """HloEnv's HloModule(input, format="path"|"txt") over an hlox Module (a snapshot: hlox
    modules are immutable): to_string(), hash(), clone(), counts, cost_analysis()."""

    def __init__(self, input, format="path"):  # noqa: A002 - HloEnv's names
        if isinstance(input, native.Module):
            self.module = input
        elif format == "path":
            self.module = native.load_module(input)
        elif format == "txt":
            self.module = native.parse_module(input)
        else:
            raise ValueError("format must be 'path' or 'txt', got %r" % (format,))

    def to_string(self):
        return self.module.text

    def hash(self):
        return module_hash(self.module)

    def clone(self):
        return HloModule(self.module.clone())

    @property
    def instruction_count(self):
        return self.module.instruction_count

    @property
    def computation_count(self):
        return len(self.module.computations)

    def cost_analysis(self):
        """hlox's analytical costs under XLA's cost-analysis names: flops, "bytes accessed",
        optimal_seconds (the roofline time on this machine's calibrated peaks). XLA's
        transcendentals count has no hlox counterpart and is absent."""
        a = native.evaluate(self.module, "none", {}, validate=False, measure=False)["analytical"]
        return {"flops": a["flops"], "bytes accessed": a["bytes_moved"],
                "optimal_seconds": a["roofline_seconds"]}

    def __str__(self):
        return self.module.text


class _Columns:
    """Named columns of a feature matrix: one attribute per column (dashes as underscores)."""

    def __init__(self, matrix, columns):
        self.matrix, self.columns = matrix, list(columns)
        for i, name in enumerate(self.columns):
            setattr(self, name.replace("-", "_"), matrix[:, i])

    def __getattr__(self, name):
        if name in _NOT_PROVIDED:
            raise AttributeError("%s is not provided: %s" % (name, _NOT_PROVIDED[name]))
        raise AttributeError(name)


class HloGraph:
    """Graph of one module, with the alternatives of a pending decision point (see the module
    docstring). As in HloEnv, each alternative is a node of its own (after the instruction
    nodes; opcode -1, is_alternative) whose operands are its choices: one in-edge per choice, from
    the site's anchor instruction, operand index = choice number, so "choices of alternative a =
    its operand count" holds as in HloEnv. Extra: `alternative_anchors[k]` (the anchor node of
    site k) and `alternative_sites` (hlox's site dicts)."""

    def __init__(self, features, module, sites=()):
        node_columns, edge_columns = list(features["node_columns"]), list(features["edge_columns"])
        anchors = np.asarray(features["site_nodes"], dtype=np.int64)
        choices = np.asarray(features["site_choices"], dtype=np.int64)
        n0, k = features["node_features"].shape[0], anchors.size
        alt_nodes = n0 + np.arange(k, dtype=np.int64)
        # Alternative nodes and their choice edges, appended to hlox's instruction graph.
        alt_feats = np.zeros((k, len(node_columns)), np.float32)
        alt_feats[:, node_columns.index("opcode")] = -1
        alt_feats[:, node_columns.index("is_site")] = 1
        alt_feats[:, node_columns.index("site_choices")] = choices
        nodes = np.concatenate([features["node_features"], alt_feats])
        choice_src = np.repeat(anchors, choices)
        choice_dst = np.repeat(alt_nodes, choices)
        choice_num = np.concatenate([np.arange(c) for c in choices]) if k else np.zeros(0, np.int64)
        choice_feats = np.zeros((choice_src.size, len(edge_columns)), np.float32)
        choice_feats[:, edge_columns.index("operand_index")] = choice_num
        edges = np.asarray(features["edge_index"], dtype=np.int64)
        src = np.concatenate([edges[0], choice_src]).astype(np.int64)
        dst = np.concatenate([edges[1], choice_dst]).astype(np.int64)
        edge_feats = np.concatenate([features["edge_features"], choice_feats])
        operand = edge_feats[:, edge_columns.index("operand_index")].astype(np.int64)
        n = n0 + k
        in_order = np.lexsort((operand, dst))
        out_order = np.lexsort((np.arange(src.size), src))
        self.in_edge_offsets = _offsets(dst, n)
        self.in_edge_indices = src[in_order]
        self.out_edge_offsets = _offsets(src, n)
        self.out_edge_indices = dst[out_order]
        self.alternative_indices = alt_nodes
        self.alternative_anchors = anchors
        self.alternative_sites = list(sites)
        self.node_features = _Columns(nodes, node_columns)
        nf = self.node_features
        nf.uids = np.arange(n, dtype=np.int64)
        nf.names = list(features["node_names"]) + ["alternative.%d" % i for i in range(k)]
        nf.opcodes = nf.opcode.astype(np.int64)
        nf.num_operands = np.diff(self.in_edge_offsets)
        nf.num_users = np.diff(self.out_edge_offsets)
        nf.is_alternative = np.arange(n) >= n0
        nf.out_tensor_sizes = nf.elements.astype(np.int64)
        self.in_edge_features = _Columns(edge_feats[in_order], edge_columns)
        self.in_edge_features.srcs, self.in_edge_features.dsts = src[in_order], dst[in_order]
        self.in_edge_features.operand_idxs = operand[in_order]
        self.out_edge_features = _Columns(edge_feats[out_order], edge_columns)
        self.out_edge_features.srcs, self.out_edge_features.dsts = src[out_order], dst[out_order]
        self.operand_idxs = self.in_edge_features.operand_idxs
        self._hash = module_hash(module)

    def hash(self):
        """The hash of the module this graph describes (HloModule.hash())."""
        return self._hash

    def __getattr__(self, name):
        if name in _NOT_PROVIDED:
            raise AttributeError("%s is not provided: %s" % (name, _NOT_PROVIDED[name]))
        raise AttributeError(name)


def graph_of(module, point=None):
    """HloGraph of `module`, or of a decision point's module with its sites as alternatives."""
    if point is not None:
        return HloGraph(point["features"], point["module"], point["sites"])
    return HloGraph(native.graph_features(module), module)


class EvaluationResult:
    """What evaluate(times) returns: `durations` in ns (one per timing sample; hlox's CPU runtime,
    each sample a median over calls_per_sample runs), `compute_durations` and `full_durations`
    (the same samples: hlox has no host-transfer share to separate), `output` (the output arrays on
    seeded inputs) and `record` (hlox's result record, docs/RESULTS.md)."""

    def __init__(self, record, output):
        samples = record["cost"].get("samples", [])
        self.durations = [int(round(s * 1e9)) for s in samples]
        self.compute_durations = list(self.durations)
        self.full_durations = list(self.durations)
        self.median_ns = int(round(record["cost"]["median"] * 1e9))
        self.output = output
        self.record = record


def _offsets(keys, n):
    """CSR offsets (n + 1 entries) of edges grouped by `keys`."""
    return np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=n))]).astype(np.int64)
