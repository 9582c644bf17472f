"""`warpforge.export`: PyTorch module -> WarpForge model package."""

from __future__ import annotations

import copy
import inspect
import re

import sympy
import torch
from torch.export import Dim

from . import __version__
from .activations import Recorder, find_main_stack, output_nodes
from .lower import lower_program
from .mlir import element_type
from .package import default_name, write_package

FP32_TOLERANCES = {"rtol": 1e-3, "atol": 1e-5}
LOW_PRECISION_TOLERANCES = {"rel_l2": 1e-2}


def export(module: torch.nn.Module, example_inputs, out_dir, *, dynamic_batch: bool = False, dtype=None,
           name: str | None = None, activations="auto", input_names=None, train: bool = False):
    """Exports `module` called on `example_inputs` (a tensor, a tuple of tensors passed
    positionally, or a dict of tensors passed as keyword arguments) to the model package
    `out_dir` and returns its manifest.

    dynamic_batch: dimension 0 of every input is dynamic (`batch`) in the StableHLO types.
    dtype: torch.bfloat16 or torch.float16 converts the model and its floating-point inputs;
        golden outputs stay those of the float32 model, judged by relative L2 error; the manifest
        records PyTorch's own error in that precision (`torch_low_precision_error`), which
        `warpforge validate` also judges by (docs/model-package.md).
    activations: "auto" (the children of the main stack), a list of module paths, or None.
    input_names: names of the inputs (default: the parameter names of `forward`).
    name: the model's name in the manifest (default: the name of `out_dir`, as a model repository
        names its models, so that `warpforge serve out/mlp` serves `mlp`).
    train: trace the module in train mode (BatchNorm normalises with the batch statistics; the
        updates of its running statistics are not part of the package, and the module's own
        buffers are left as they were). Dropout must have p=0 there, or the export fails on the
        random ops. Otherwise the module is run in eval mode.
    Key/value caches that the model returns (transformers' `DynamicCache` and the other
    `Cache` classes of `transformers.cache_utils`) are dropped from the outputs: the package's
    outputs are the model's other tensors. Raises UnsupportedOpsError (listing every unsupported op
    and the source line that produced it) or LoweringError, writing nothing, on failure."""
    by_keyword = isinstance(example_inputs, dict)
    if by_keyword:
        if input_names:
            raise ValueError("input_names cannot rename keyword inputs")
        input_names = list(example_inputs.keys())
        example_inputs = tuple(example_inputs.values())
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    if not all(isinstance(x, torch.Tensor) for x in example_inputs):
        raise TypeError("example_inputs must be tensors")
    if dtype not in (None, torch.float32, torch.bfloat16, torch.float16):
        raise ValueError(f"dtype must be None, torch.float32, torch.bfloat16 or torch.float16, not {dtype}")
    name = name or default_name(out_dir)
    input_names = list(input_names) if input_names else _input_names(module, len(example_inputs))

    if train:
        module = copy.deepcopy(module)  # the reference run updates BatchNorm's running statistics
        pristine = copy.deepcopy(module).train()
    was_training = module.training
    module.train(train)
    try:
        paths = find_main_stack(module) if activations == "auto" else list(activations or [])
        recorder = Recorder(module, paths)
        try:
            with torch.no_grad():
                reference = module(**dict(zip(input_names, example_inputs))) if by_keyword else module(*example_inputs)
        finally:
            recorder.remove()
        out_names, out_tensors = _flatten_outputs(reference)

        model, inputs = (pristine if train else module), example_inputs
        low_error = None
        if dtype in (torch.bfloat16, torch.float16):
            model = copy.deepcopy(model).to(dtype)
            inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in example_inputs)
            low_error = _low_precision_error(copy.deepcopy(model) if train else model, dtype, inputs, input_names,
                                             by_keyword, paths, out_names, out_tensors, recorder.values)
        trace_inputs = inputs
        dynamic_shapes = None
        if dynamic_batch:
            batch = Dim("batch")
            dynamic_shapes = tuple({0: batch} if x.dim() > 0 else None for x in inputs)
            # A size-1 example batch would be specialised to 1: trace on a batch of 2.
            trace_inputs = tuple(torch.cat([x, x]) if x.dim() > 0 and x.shape[0] == 1 else x for x in inputs)
        with _caches_dropped(reference):
            if by_keyword:
                ep = torch.export.export(model, (), kwargs=dict(zip(input_names, trace_inputs)),
                                         dynamic_shapes=dict(zip(input_names, dynamic_shapes)) if dynamic_shapes
                                         else None, strict=False)
            else:
                ep = torch.export.export(model, trace_inputs, dynamic_shapes=dynamic_shapes, strict=False)
            ep = ep.run_decompositions(decomposition_table(train=train))

        act_nodes = output_nodes(ep.graph, recorder.values)
        module_sym = module_symbol(name)
        low = element_type(dtype) if dtype in (torch.bfloat16, torch.float16) else None
        lowered = lower_program(ep, input_names, act_nodes, module_sym, low=low)
        if len(lowered.outputs) != len(out_tensors):
            raise RuntimeError(f"the exported program has {len(lowered.outputs)} outputs, the model returns "
                               f"{len(out_tensors)} tensors")

        weights = {w.name: t for w, t in zip(lowered.weights, weight_tensors(ep, lowered))}
        batch_sym = _batch_symbol(lowered) if dynamic_batch else None

        def shape_of(val_shape):
            out = []
            for d in val_shape:
                if isinstance(d, int):
                    out.append(d)
                else:
                    expr = d.node.expr if isinstance(d, torch.SymInt) else d
                    if expr == batch_sym:
                        out.append("batch")
                    else:
                        out.append(str(expr.subs(batch_sym, sympy.Symbol("batch"))) if batch_sym is not None
                                   else str(expr))
            return out

        manifest = {
            "format": "warpforge.package",
            "format_version": 1,
            "name": name,
            "producer": {"name": "warpforge.export", "version": __version__, "torch": torch.__version__},
            "entry": "main",
            "dtype": element_type(dtype) if dtype is not None else "f32",
            "inputs": [{"name": a.name, "argument": i, "dtype": a.value.type.dtype,
                        "shape": shape_of(a.node.meta["val"].shape)} for i, a in enumerate(lowered.inputs)],
            "weights": [{"name": w.name, "argument": len(lowered.inputs) + i, "dtype": w.value.type.dtype,
                         "shape": list(w.value.type.shape), "kind": w.kind} for i, w in enumerate(lowered.weights)],
            "outputs": [],
            "dynamic_dims": {"batch": {"min": 1, "max": None}} if dynamic_batch else {},
            "tolerances": dict(LOW_PRECISION_TOLERANCES if dtype in (torch.bfloat16, torch.float16)
                               else FP32_TOLERANCES),
            "golden": {"inputs": "golden/inputs.safetensors", "outputs": "golden/outputs.safetensors"},
        }
        if low_error is not None:
            manifest["torch_low_precision_error"] = low_error
        out_vals = output_vals(ep)
        _check_output_shapes(out_names, out_vals, out_tensors,
                             static=all(t is x for t, x in zip(trace_inputs, inputs)))
        for i, (oname, v, val) in enumerate(zip(out_names, lowered.outputs, out_vals)):
            manifest["outputs"].append({"name": oname, "result": i, "dtype": v.type.dtype, "shape": shape_of(val.shape)})
        act_tensors = {}
        if lowered.activations:
            manifest["golden"]["activations"] = "golden/activations.safetensors"
            manifest["activations"] = []
            for path in paths:
                if path not in lowered.activations:
                    continue
                node = act_nodes[path]
                manifest["activations"].append({
                    "name": path, "value": lowered.activations[path], "dtype": lowered.activation_types[path],
                    "shape": shape_of(node.meta["val"].shape)})
                act_tensors[path] = recorder.values[path]
        reference64 = None
        if dtype in (None, torch.float32):
            reference64 = _float64_reference(pristine if train else module, example_inputs, input_names,
                                             by_keyword, list(act_tensors), out_names, len(out_tensors), train)
        if reference64 is not None:
            manifest["golden"]["outputs64"] = "golden/outputs64.safetensors"
            if act_tensors:
                manifest["golden"]["activations64"] = "golden/activations64.safetensors"
        write_package(out_dir, manifest, lowered.text, weights,
                      dict(zip(input_names, inputs)), dict(zip(out_names, out_tensors)), act_tensors,
                      reference64)
        return manifest
    finally:
        module.train(was_training)


def _float64_reference(module, example_inputs, input_names, by_keyword, act_paths, out_names, n_outputs,
                       train=False):
    """The model computed in float64 on the same inputs: (outputs, activations) keyed like the
    golden files, or None when the model cannot run in float64. `validate` uses it to tell
    float32 rounding noise (where PyTorch is as far from the exact value as WarpForge) from
    real divergence."""
    try:
        m64 = copy.deepcopy(module).double().train(train)
        x64 = tuple(x.double() if x.is_floating_point() else x for x in example_inputs)
        recorder = Recorder(m64, act_paths)
        try:
            with torch.no_grad():
                out = m64(**dict(zip(input_names, x64))) if by_keyword else m64(*x64)
        finally:
            recorder.remove()
    except Exception:  # noqa: BLE001 - a model without float64 support simply has no arbiter
        return None
    names, tensors = _flatten_outputs(out)
    if len(tensors) != n_outputs or names != out_names or set(recorder.values) != set(act_paths):
        return None
    return dict(zip(names, tensors)), dict(recorder.values)


def _low_precision_error(model, dtype, inputs, input_names, by_keyword, paths, out_names, out_tensors, act_values):
    """PyTorch's own error in the package's low precision: `model` (already in bf16/f16) run
    eagerly on the golden inputs, compared with the float32 reference (`out_tensors`, and the
    recorded activations `act_values`), per tensor: `rel_l2` (||low - ref|| / ||ref||) and
    `max_abs_err`. `validate` judges WarpForge's error against it (docs/model-package.md).
    None when the model does not run in that precision here."""
    try:
        recorder = Recorder(model, paths)
        try:
            with torch.no_grad():
                out = model(**dict(zip(input_names, inputs))) if by_keyword else model(*inputs)
        finally:
            recorder.remove()
    except Exception:  # noqa: BLE001 - some CPU kernels lack bf16/f16: no reference error then
        return None
    names, tensors = _flatten_outputs(out)
    if names != out_names:
        return None

    def error(low, ref):
        if low.shape != ref.shape:
            return None
        d = low.double() - ref.double()
        norm = ref.double().norm().item()
        rel = d.norm().item() / norm if norm > 0 else (0.0 if d.norm().item() == 0 else float("inf"))
        mx = d.abs().max().item() if d.numel() else 0.0
        clean = lambda v: None if v != v or v in (float("inf"), float("-inf")) else v  # noqa: E731
        return {"rel_l2": clean(rel), "max_abs_err": clean(mx)}

    result = {"dtype": element_type(dtype), "outputs": {n: error(t, r) for n, t, r in zip(names, tensors, out_tensors)}}
    acts = {p: error(recorder.values[p], act_values[p]) for p in act_values if p in recorder.values}
    if acts:
        result["activations"] = acts
    return result


class _caches_dropped:
    """While active, the key/value cache objects in `reference` (transformers' `DynamicCache`,
    `EncoderDecoderCache`, ...: any class of `transformers.cache_utils` that is no pytree node)
    flatten to no tensors, so that torch.export takes the model's other outputs and drops the
    cache (a model built with its default config returns one: `use_cache=True`)."""

    def __init__(self, reference):
        self.types = []
        for leaf in torch.utils._pytree.tree_leaves(reference):
            t = type(leaf)
            if (t.__module__.startswith("transformers.cache_utils") and t not in self.types
                    and t not in torch.utils._pytree.SUPPORTED_NODES):
                self.types.append(t)

    def __enter__(self):
        for t in self.types:
            torch.utils._pytree.register_pytree_node(
                t, lambda c: ([], None), lambda children, ctx: None,
                serialized_type_name=f"warpforge.dropped.{t.__module__}.{t.__qualname__}",
                flatten_with_keys_fn=lambda c: ([], None))
        return self

    def __exit__(self, *exc):
        for t in self.types:
            torch.utils._pytree._deregister_pytree_node(t)
        return False


def decomposition_table(train: bool = False):
    """torch.export's core-ATen decompositions, except scaled_dot_product_attention, which the
    lowering takes whole (its decomposition also trips torch 2.15 on GPT-2: a view of the
    non-contiguous attention output), and with the LSTM's final states given their shape
    (`_lstm_state_shapes`). train: BatchNorm in train mode decomposed too (the statistics of
    the batch, and the running-statistics update, which the forward package then drops)."""
    table = torch.export.default_decompositions()
    if train:
        from torch._decomp import get_decompositions

        table.update(get_decompositions([torch.ops.aten._native_batch_norm_legit_functional,
                                         torch.ops.aten._native_batch_norm_legit.default,
                                         torch.ops.aten.native_batch_norm]))
    for op in list(table.keys()):
        if "scaled_dot_product" in str(op):
            del table[op]
    lstm = torch.ops.aten.lstm.input
    if lstm in table:
        table[lstm] = _lstm_state_shapes(table[lstm])
    return table


def _lstm_state_shapes(decomposition):
    """`aten.lstm.input`'s decomposition with its final hidden and cell states reshaped to the
    shapes of the initial ones, [num_layers * num_directions, batch, hidden]. torch 2.11's
    decomposition squeezes the wrong dimension of each layer's last state (`hx.squeeze(1)`
    instead of `squeeze(0)` in `one_layer_lstm`), so for a batch other than 1 it returns
    h_n and c_n as [num_layers * num_directions, 1, batch, hidden]: the right values in the
    wrong shape, which the exported program then gives as the model's output shape. Where
    the decomposition is right the states are returned as they are."""

    def lstm(input, hx, params, *args, **kwargs):
        out, h, c = decomposition(input, hx, params, *args, **kwargs)
        if h.shape != hx[0].shape:
            h = h.reshape(hx[0].shape)
        if c.shape != hx[1].shape:
            c = c.reshape(hx[1].shape)
        return out, h, c

    return lstm


def _check_output_shapes(names, vals, tensors, static: bool):
    """Raises when an output of the exported program does not have the shape of the tensor the
    model returns (a wrong shape in a torch decomposition would otherwise be written into the
    manifest and the StableHLO types). Symbolic sizes are not compared, nor, where the program
    was traced on other inputs than the example (`static` false), any size but the rank."""
    for name, val, t in zip(names, vals, tensors):
        shape = list(val.shape)
        ok = len(shape) == t.dim()
        if ok and static:
            ok = all(not isinstance(d, int) or d == n for d, n in zip(shape, t.shape))
        if not ok:
            raise RuntimeError(f"output {name!r}: the exported program gives shape {shape}, the model returns "
                               f"{list(t.shape)}")


def module_symbol(name: str) -> str:
    """`name` as an MLIR symbol for the module."""
    sym = re.sub(r"[^A-Za-z0-9_]", "_", name) or "model"
    return "_" + sym if sym[0].isdigit() else sym


def weight_tensors(ep, lowered) -> list:
    """The tensors of the lowered program's weight arguments (parameters, buffers, lifted
    constants), in argument order."""
    return [(ep.state_dict[w.target] if w.target in ep.state_dict else ep.constants[w.target]).detach()
            for w in lowered.weights]


def output_vals(ep):
    """The fake tensors (shapes, dtypes) of the exported program's user outputs."""
    from torch.export.graph_signature import OutputKind

    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    return [a.meta["val"] for a, s in zip(out_node.args[0], ep.graph_signature.output_specs)
            if s.kind == OutputKind.USER_OUTPUT]


def _batch_symbol(lowered):
    for a in lowered.inputs:
        shape = a.node.meta["val"].shape
        if len(shape) and isinstance(shape[0], torch.SymInt):
            return shape[0].node.expr
    return None


def _input_names(module, n):
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params[:n]]
    names += [f"input{i}" for i in range(len(names), n)]
    return names


def _flatten_outputs(out):
    """Names and tensors of the model's outputs, in pytree order."""
    if isinstance(out, torch.Tensor):
        return ["output"], [out.detach()]
    leaves, _ = torch.utils._pytree.tree_flatten_with_path(out)
    names, tensors = [], []
    prefix = "output." if isinstance(out, (tuple, list)) else ""
    for path, leaf in leaves:
        if not isinstance(leaf, torch.Tensor):
            continue
        parts = []
        for k in path:
            for attr in ("key", "idx", "name"):
                if hasattr(k, attr):
                    parts.append(str(getattr(k, attr)))
                    break
        names.append(prefix + ".".join(parts))
        tensors.append(leaf.detach())
    return names, tensors
