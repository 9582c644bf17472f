"""Normalisations: layer norm, group norm, batch norm in inference mode. Narrow floats are
normalised in f32 and rounded once, as PyTorch's CPU kernels do."""

from __future__ import annotations

from .context import Context, Unavailable
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
