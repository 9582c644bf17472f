"""Lowers a core-ATen `torch.export.ExportedProgram` to a StableHLO module (MLIR text).

The entry function `@main` takes the user inputs first, then every parameter, buffer and lifted
constant, in the order of the exported program's signature; its results are the user outputs."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

import torch
from torch.export.graph_signature import InputKind, OutputKind

from .activations import module_paths
from .lowering import LOWERINGS, Context, LoweringError, SymArg, Unavailable
from .lowering.context import to_expr
from .lowering.random import DROPOUT_SWITCH, RNG_STATE, RandomStream
from .mlir import Builder, Value


class UnsupportedOpsError(Exception):
    """The exported program uses ATen ops the exporter cannot lower; the message lists them."""

    def __init__(self, ops: list):
        self.ops = ops
        lines = [f"  {target} at {where}" for target, where in ops]
        super().__init__(f"{len(ops)} unsupported ATen op use(s), no package written:\n" + "\n".join(lines))


@dataclass
class Argument:
    name: str  # user input name or state_dict name
    kind: str  # input, parameter, buffer, constant
    value: Value = None
    node: object = None
    target: str = ""


@dataclass
class Lowered:
    text: str
    inputs: list = field(default_factory=list)  # Argument
    weights: list = field(default_factory=list)  # Argument
    outputs: list = field(default_factory=list)  # Value
    activations: dict = field(default_factory=dict)  # module path -> SSA name (with %)
    activation_types: dict = field(default_factory=dict)  # module path -> element type
    mutated_buffers: list = field(default_factory=list)  # buffer names, for results after the user outputs


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def source_line(node) -> tuple[str, int] | None:
    """The last frame of the node's stack trace (the line of model code that produced it)."""
    trace = node.meta.get("stack_trace") or ""
    frames = _FRAME.findall(trace)
    if not frames:
        return None
    f, line = frames[-1]
    return f, int(line)


def describe_source(node) -> str:
    src = source_line(node)
    where = f"{src[0]}:{src[1]}" if src else "<no stack trace>"
    code = ""
    trace = node.meta.get("stack_trace") or ""
    lines = [ln.strip() for ln in trace.strip().splitlines() if ln.strip()]
    if lines and not lines[-1].startswith("File "):
        code = f" ({lines[-1]})"
    return where + code


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def location(node) -> str:
    src = source_line(node)
    paths = module_paths(node)
    inner = f"{_quote(src[0])}:{src[1]}:0" if src else None
    if paths and paths[-1]:
        return f"loc({_quote(paths[-1])}({inner}))" if inner else f"loc({_quote(paths[-1])})"
    return f"loc({inner})" if inner else ""


def target_name(node) -> str:
    t = node.target
    if t is operator.getitem:
        return "getitem"
    return str(t)


def find_unsupported(graph) -> list:
    bad = []
    for node in graph.nodes:
        if node.op == "call_function":
            name = target_name(node)
            if name != "getitem" and name not in LOWERINGS:
                bad.append((name, describe_source(node)))
        elif node.op in ("call_module", "call_method"):
            bad.append((f"{node.op} {node.target}", describe_source(node)))
    return bad


def lower_program(ep, input_names: list, activation_nodes: dict, module_name: str = "main", low: str | None = None,
                  *, buffer_mutations: bool = False, weight_name=None, rng: bool = False) -> Lowered:
    """`low` ("bf16"/"f16"): arguments and results keep that type, matmuls and convolutions take
    operands of that type, and everything else computes in f32 (as torch.autocast does).
    buffer_mutations: the new values of the buffers the program mutates (BatchNorm's running
    statistics in train mode) become results after the user outputs, named in `mutated_buffers`;
    otherwise they are dropped. weight_name: maps a state_dict name to the argument's name.
    rng: dropout in train mode draws from an RNG state (lowering/random.py): where the program
    uses it, the state and the dropout switch become its last arguments (kinds `rng_state` and
    `dropout_switch`, no `target`) and the advanced state its last result, named in
    `mutated_buffers`."""
    graph = ep.graph
    unsupported = find_unsupported(graph)
    if unsupported:
        raise UnsupportedOpsError(unsupported)

    b = Builder()
    ctx = Context(b)
    ctx.low = low
    if rng:
        ctx.rng = RandomStream(ctx)
    by_name = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    activation_names = {path: b.reserve(path) for path in activation_nodes}

    inputs, weights = [], []
    user_specs = [s for s in ep.graph_signature.input_specs if s.kind == InputKind.USER_INPUT]
    if len(user_specs) != len(input_names):
        raise LoweringError(f"the exported program has {len(user_specs)} tensor inputs, expected {len(input_names)}")
    by_arg_name = {getattr(sp.arg, "name", None): sp for sp in user_specs}
    if all(n in by_arg_name for n in input_names):
        user_specs = [by_arg_name[n] for n in input_names]  # keyword inputs: match by name
    for spec, name in zip(user_specs, input_names):
        node = by_name.get(getattr(spec.arg, "name", None))
        if node is None or not isinstance(node.meta.get("val"), torch.Tensor):
            raise LoweringError(f"input {name!r} is not a tensor")
        inputs.append(Argument(name, "input", node=node))
    kinds = {InputKind.PARAMETER: "parameter", InputKind.BUFFER: "buffer", InputKind.CONSTANT_TENSOR: "constant"}
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            continue
        if spec.kind not in kinds:
            raise LoweringError(f"unsupported exported-program input kind {spec.kind} ({spec.target})")
        wname = weight_name(spec.target) if weight_name else spec.target
        weights.append(Argument(wname, kinds[spec.kind], node=by_name[spec.arg.name], target=spec.target))

    for arg in inputs + weights:
        node = arg.node
        dims = ctx.meta_dims(node)
        v = Value(b.reserve(arg.name), ctx.tt(dims, ctx.storage_dtype(node)))
        v.dims = dims
        arg.value = v
        ctx.values[node] = v
        if arg.kind == "input":
            ctx.add_symbol_source(v, dims)
    b.loc = ""
    for arg in inputs + weights:
        if low and arg.value.type.dtype == low:
            ctx.values[arg.node] = ctx.convert(arg.value, "f32")

    output_node = next(n for n in graph.nodes if n.op == "output")
    block_args = {id(a.value) for a in inputs + weights}
    renamed = set()
    for node in graph.nodes:
        if node.op != "call_function":
            continue
        b.loc = location(node)
        ctx.node = node
        try:
            if node.target is operator.getitem:
                src, idx = node.args
                result = ctx.values[src][idx]
            else:
                args = [_map(ctx, a, node) for a in node.args]
                kwargs = {k: _map(ctx, v, node) for k, v in node.kwargs.items()}
                result = LOWERINGS[target_name(node)](ctx, node, *args, **kwargs)
            if isinstance(result, Value):
                _check_type(ctx, node, result)
            ctx.values[node] = result
        except LoweringError as e:
            raise LoweringError(f"{target_name(node)} at {describe_source(node)}: {e}") from None
        for path, anode in activation_nodes.items():
            if anode is node and isinstance(result, Value):
                v = result
                if id(v) in block_args or id(v) in renamed:
                    v = ctx.emit("stablehlo.convert", [v], v.type, dims=ctx.dims_of(v))
                    ctx.values[node] = v
                b.used.discard(v.name)
                v.name = activation_names[path]
                renamed.add(id(v))

    out_specs = ep.graph_signature.output_specs
    outputs, mutated = [], []
    pairs = [(s, a) for s, a in zip(out_specs, output_node.args[0]) if s.kind == OutputKind.USER_OUTPUT]
    if buffer_mutations:
        pairs += [(s, a) for s, a in zip(out_specs, output_node.args[0]) if s.kind == OutputKind.BUFFER_MUTATION]
    for spec, arg in pairs:
        v = ctx.values.get(arg) if hasattr(arg, "op") else None
        if not isinstance(v, Value):
            raise LoweringError(f"output {getattr(arg, 'name', arg)!r} is not a tensor computed by the graph")
        outputs.append(ctx.convert(v, ctx.storage_dtype(arg)))
        if spec.kind == OutputKind.BUFFER_MUTATION:
            mutated.append(weight_name(spec.target) if weight_name else spec.target)
    if ctx.rng is not None and ctx.rng.used:
        weights.append(Argument(RNG_STATE, "rng_state", value=ctx.rng.initial))
        weights.append(Argument(DROPOUT_SWITCH, "dropout_switch", value=ctx.rng.enabled))
        outputs.append(ctx.rng.state)
        mutated.append(RNG_STATE)

    text = _render(b, module_name, inputs + weights, outputs)
    acts = {p: "%" + n for p, n in activation_names.items() if p in activation_nodes}
    types = {p: ctx.values[activation_nodes[p]].type.dtype for p in acts}
    return Lowered(text, inputs, weights, outputs, acts, types, mutated)


def _check_type(ctx, node, v: Value):
    val = node.meta.get("val")
    if not isinstance(val, torch.Tensor):
        return
    want = ctx.node_type(node)
    if v.type != want:
        raise LoweringError(f"internal: lowered to {v.type}, torch says {want}")
    v.dims = ctx.meta_dims(node)


def _map(ctx, a, node):
    if isinstance(a, torch.fx.Node):
        v = ctx.values.get(a)
        if isinstance(v, Unavailable):
            raise LoweringError(f"uses {v.what}, which the exporter does not compute")
        if v is None and a in ctx.values:
            raise LoweringError(f"uses the result of {a.name}, which has no value")
        return v
    if isinstance(a, (list, tuple)):
        return type(a)(_map(ctx, x, node) for x in a)
    if isinstance(a, torch.SymInt):
        e = to_expr(a)
        return e if isinstance(e, int) else SymArg(e)
    if isinstance(a, (torch.dtype, torch.device, torch.layout, torch.memory_format)) or a is None:
        return a
    return a


def _render(b: Builder, module_name: str, args: list, outputs: list) -> str:
    sig = ",\n    ".join(f"{a.value}: {a.value.type} {{mhlo.name = {_quote(a.name)}}}" for a in args)
    res = ", ".join(str(o.type) for o in outputs)
    lines = [f"module @{module_name} {{",
             f"  func.func public @main(\n    {sig}) -> ({res}) {{"]
    for op in b.ops:
        lines.append(op.render("    "))
    lines.append(f"    func.return {', '.join(str(o) for o in outputs)} : {res}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
