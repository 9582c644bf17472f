"""Normalisations: layer norm, group norm, batch norm in inference mode and in train mode
(stablehlo.batch_norm_training). Narrow floats are normalised in f32 and rounded once, as
PyTorch's CPU kernels do."""

from __future__ import annotations

import operator

import torch

from ..mlir import float_literal
from .context import Context, LoweringError, Unavailable, is_static_dim
from .reduce import _acc_type, _count, prod_dims, sum_
from .registry import register


def _moments(ctx: Context, x, axes):
    """mean and biased variance over `axes` (results without those axes)."""
    dims = ctx.dims_of(x)
    kept = [i for i in range(len(dims)) if i not in axes]
    s = sum_(ctx, x, axes, x.type.dtype)
    n = _count(ctx, x, axes, s)
    mean = ctx.binary("stablehlo.divide", s, n)
    centered = ctx.binary("stablehlo.subtract", x, ctx.broadcast_in_dim(mean, dims, kept))
    var = ctx.binary("stablehlo.divide", sum_(ctx, ctx.binary("stablehlo.multiply", centered, centered), axes,
                                              x.type.dtype), n)
    return mean, var, centered, kept


@register("aten.native_layer_norm.default")
def _layer_norm(ctx, node, x, normalized_shape, weight, bias, eps):
    out_dtype = ctx.meta_dtype_of_val(node.meta["val"][0])
    acc = _acc_type(x.type.dtype)
    x = ctx.convert(x, acc)
    rank = x.type.rank
    axes = list(range(rank - len(normalized_shape), rank))
    dims = ctx.dims_of(x)
    mean, var, centered, kept = _moments(ctx, x, axes)
    rstd = ctx.unary("stablehlo.rsqrt", ctx.binary("stablehlo.add", var, ctx.scalar_like(eps, var)))
    y = ctx.binary("stablehlo.multiply", centered, ctx.broadcast_in_dim(rstd, dims, kept))
    if weight is not None:
        y = ctx.binary("stablehlo.multiply", y, ctx.broadcast_in_dim(ctx.convert(weight, acc), dims, axes))
    if bias is not None:
        y = ctx.binary("stablehlo.add", y, ctx.broadcast_in_dim(ctx.convert(bias, acc), dims, axes))
    vals = node.meta["val"]
    return (ctx.convert(y, out_dtype),
            ctx.reshape(ctx.convert(mean, ctx.meta_dtype_of_val(vals[1])), ctx.meta_dims_of_val(vals[1])),
            ctx.reshape(ctx.convert(rstd, ctx.meta_dtype_of_val(vals[2])), ctx.meta_dims_of_val(vals[2])))


@register("aten.native_group_norm.default")
def _group_norm(ctx, node, x, weight, bias, n, c, hxw, group, eps):
    out_dtype = ctx.meta_dtype_of_val(node.meta["val"][0])
    acc = _acc_type(x.type.dtype)
    x = ctx.convert(x, acc)
    dims = ctx.dims_of(x)
    batch = dims[0]
    rest = prod_dims(dims[1:])
    grouped = ctx.reshape(x, [batch, group, rest // group])
    mean, var, centered, _ = _moments(ctx, grouped, [2])
    rstd = ctx.unary("stablehlo.rsqrt", ctx.binary("stablehlo.add", var, ctx.scalar_like(eps, var)))
    y = ctx.binary("stablehlo.multiply", centered, ctx.broadcast_in_dim(rstd, ctx.dims_of(grouped), [0, 1]))
    y = ctx.reshape(y, dims)
    if weight is not None:
        y = ctx.binary("stablehlo.multiply", y, ctx.broadcast_in_dim(ctx.convert(weight, acc), dims, [1]))
    if bias is not None:
        y = ctx.binary("stablehlo.add", y, ctx.broadcast_in_dim(ctx.convert(bias, acc), dims, [1]))
    vals = node.meta["val"]
    return (ctx.convert(y, out_dtype),
            ctx.convert(mean, ctx.meta_dtype_of_val(vals[1])),
            ctx.convert(rstd, ctx.meta_dtype_of_val(vals[2])))


@register("aten._native_batch_norm_legit_no_training.default")
def _batch_norm(ctx, node, x, weight, bias, running_mean, running_var, momentum, eps):
    out_dtype = ctx.meta_dtype_of_val(node.meta["val"][0])
    acc = _acc_type(x.type.dtype)
    x = ctx.convert(x, acc)
    dims = ctx.dims_of(x)
    mean = ctx.convert(running_mean, acc)
    var = ctx.convert(running_var, acc)
    scale = ctx.unary("stablehlo.rsqrt", ctx.binary("stablehlo.add", var, ctx.scalar_like(eps, var)))
    if weight is not None:
        scale = ctx.binary("stablehlo.multiply", scale, ctx.convert(weight, acc))
    y = ctx.binary("stablehlo.subtract", x, ctx.broadcast_in_dim(mean, dims, [1]))
    y = ctx.binary("stablehlo.multiply", y, ctx.broadcast_in_dim(scale, dims, [1]))
    if bias is not None:
        y = ctx.binary("stablehlo.add", y, ctx.broadcast_in_dim(ctx.convert(bias, acc), dims, [1]))
    unused = Unavailable("the saved statistics of batch norm")
    return (ctx.convert(y, out_dtype), unused, unused)


def _used_results(node) -> set:
    """The indices of a multi-result node's results that the graph reads (through getitem)."""
    used = set()
    for u in node.users:
        if u.op == "call_function" and u.target is operator.getitem:
            used.add(u.args[1])
        else:
            return set(range(len(node.meta["val"])))  # the tuple itself is used: all of it
    return used


def _promoted(*dtypes: str) -> str:
    """ATen's promotion of tensors of the element types `dtypes` (all dimensioned)."""
    from ..mlir import _DTYPES, element_type
    back = {v: k for k, v in _DTYPES.items()}
    out = back[dtypes[0]]
    for d in dtypes[1:]:
        out = torch.promote_types(out, back[d])
    return element_type(out)


def _scaled(ctx, v, factor):
    """`factor * v` as ATen's mul.Tensor with a Python scalar computes it: the scalar in v's type."""
    return ctx.binary("stablehlo.multiply", v, ctx.scalar_like(factor, v))


def _add_promoted(ctx, a, c):
    t = _promoted(a.type.dtype, c.type.dtype)
    return ctx.binary("stablehlo.add", ctx.convert(a, t), ctx.convert(c, t))


def _batch_norm_train(ctx, node, x, weight, bias, running_mean, running_var, momentum, eps):
    """Train-mode batch norm as torch/_decomp's native_batch_norm_helper computes it, with the
    statistics and the normalisation as one stablehlo.batch_norm_training over feature 1 (its
    gradient is one batch_norm_grad): in the computation type (f32 for bf16/f16 inputs), weight
    and bias ones and zeros where absent; the output rounded to the input's type. The saved mean
    and rstd (rsqrt(biased variance + eps)) and the running statistics, momentum * batch stat +
    (1 - momentum) * running stat (the variance made unbiased by n / (n - 1), n the elements per
    channel), in the decomposition's order of operations and types. Only the results the graph
    reads are computed (running statistics: None where the op has none)."""
    if x.type.rank < 2:
        raise LoweringError(f"batch norm of a rank-{x.type.rank} input (needs [N, C, ...])")
    vals = node.meta["val"]
    used = _used_results(node)
    acc = _acc_type(x.type.dtype)
    xa = ctx.convert(x, acc)
    dims = ctx.dims_of(xa)
    c = dims[1]
    if not is_static_dim(c):
        raise LoweringError("batch norm with a dynamic number of channels")
    scale = ctx.convert(weight, acc) if weight is not None else ctx.full(1, [c], acc)
    offset = ctx.convert(bias, acc) if bias is not None else ctx.full(0, [c], acc)
    scale, offset = ctx.reshape(scale, [c]), ctx.reshape(offset, [c])
    stat_t = ctx.tt([c], acc)
    y, mean, var = ctx.b.op("stablehlo.batch_norm_training", [xa, scale, offset], [xa.type, stat_t, stat_t],
                            f"epsilon = {float_literal(eps)} : f32, feature_index = 1 : i64")
    y.dims, mean.dims, var.dims = list(dims), [c], [c]

    results = [ctx.convert(y, ctx.meta_dtype_of_val(vals[0]))]
    results.append(ctx.convert(mean, ctx.meta_dtype_of_val(vals[1])) if 1 in used else Unavailable("save_mean"))
    if 2 in used:
        rstd = ctx.unary("stablehlo.rsqrt", ctx.binary("stablehlo.add", var, ctx.scalar_like(eps, var)))
        results.append(ctx.convert(rstd, ctx.meta_dtype_of_val(vals[2])))
    else:
        results.append(Unavailable("save_rstd"))
    if len(vals) == 3:
        return tuple(results)
    # new_running_mean = momentum * save_mean + (1 - momentum) * running_mean
    if 3 in used:
        rm = _add_promoted(ctx, _scaled(ctx, mean, momentum), _scaled(ctx, running_mean, 1 - momentum))
        results.append(ctx.convert(rm, ctx.meta_dtype_of_val(vals[3])))
    else:
        results.append(Unavailable("new_running_mean"))
    # new_running_var = momentum * (var * (n / (n - 1))) + (1 - momentum) * running_var
    if 4 in used:
        others = [d for i, d in enumerate(dims) if i != 1]
        if all(is_static_dim(d) for d in others):
            n = float(prod_dims(others))
            unbiased = _scaled(ctx, var, n / (n - 1) if n != 1 else float("inf"))
        else:
            nv = ctx.convert(ctx.sym_value(prod_dims(others)), acc)
            ratio = ctx.binary("stablehlo.divide", nv, ctx.binary("stablehlo.subtract", nv, ctx.b.constant(1, acc)))
            unbiased = ctx.binary("stablehlo.multiply", var, ctx.broadcast_in_dim(ratio, [c], []))
        rv = _add_promoted(ctx, _scaled(ctx, unbiased, momentum), _scaled(ctx, running_var, 1 - momentum))
        results.append(ctx.convert(rv, ctx.meta_dtype_of_val(vals[4])))
    else:
        results.append(Unavailable("new_running_var"))
    return tuple(results)


@register("aten._native_batch_norm_legit_functional.default")
def _batch_norm_functional(ctx, node, x, weight, bias, running_mean, running_var, training, momentum, eps):
    """Train-mode batch norm of a training program (the running statistics as results 3 and 4);
    eval mode is decomposed before lowering (training.py's table)."""
    if not training:
        raise LoweringError("eval-mode _native_batch_norm_legit_functional (decomposed before lowering)")
    return _batch_norm_train(ctx, node, x, weight, bias, running_mean, running_var, momentum, eps)


@register("aten._native_batch_norm_legit.no_stats")
def _batch_norm_no_stats(ctx, node, x, weight, bias, training, momentum, eps):
    """BatchNorm without running statistics (track_running_stats=False): always the batch's."""
    return _batch_norm_train(ctx, node, x, weight, bias, None, None, momentum, eps)
