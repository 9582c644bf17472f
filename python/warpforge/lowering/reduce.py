"""Reductions: sum, mean, amax/amin, max/min with indices, argmax/argmin, any/all, prod, var,
softmax, log_softmax, cumsum. Narrow floats (bf16, f16) accumulate in f32, as PyTorch does."""

from __future__ import annotations

import sympy

from ..mlir import Value, i64_array, is_float
from .context import LoweringError, dense_i64_matrix, is_static_dim
from .registry import register


def prod_dims(dims):
    if all(is_static_dim(d) for d in dims):
        n = 1
        for d in dims:
            n *= d
        return n
    return sympy.Mul(*[sympy.Integer(d) if is_static_dim(d) else d for d in dims])


def _axes(x: Value, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.type.rank))
    if isinstance(dim, int):
        dim = [dim]
    return sorted({d % max(x.type.rank, 1) for d in dim})


def _acc_type(dtype: str) -> str:
    return "f32" if dtype in ("bf16", "f16") else dtype


def _finish(ctx, node, v):
    v = ctx.convert(v, ctx.meta_dtype(node))
    return ctx.reshape(v, ctx.meta_dims(node))


def _count(ctx, x, axes, like: Value):
    dims = ctx.dims_of(x)
    sel = [dims[a] for a in axes]
    if all(is_static_dim(d) for d in sel):
        n = 1
        for d in sel:
            n *= d
        return ctx.scalar_like(n, like)
    n = ctx.sym_value(sympy.Mul(*[sympy.Integer(d) if is_static_dim(d) else d for d in sel]))
    return ctx.broadcast(ctx.convert(n, like.type.dtype), ctx.dims_of(like))


def sum_(ctx, x, axes, dtype):
    x = ctx.convert(x, dtype)
    return ctx.reduce(x, axes, 0, "stablehlo.add")


@register("aten.sum.dim_IntList", "aten.sum.default", "aten.sum.dim")
def _sum(ctx, node, x, dim=None, keepdim=False, dtype=None):
    out = ctx.meta_dtype(node)
    acc = _acc_type(out) if out != "i1" else "i64"
    return _finish(ctx, node, sum_(ctx, x, _axes(x, dim), acc))


@register("aten.mean.dim", "aten.mean.default")
def _mean(ctx, node, x, dim=None, keepdim=False, dtype=None):
    out = ctx.meta_dtype(node)
    axes = _axes(x, dim)
    s = sum_(ctx, x, axes, _acc_type(out))
    return _finish(ctx, node, ctx.binary("stablehlo.divide", s, _count(ctx, x, axes, s)))


def _minmax_init(dtype, is_max):
    if is_float(dtype):
        return float("-inf") if is_max else float("inf")
    if dtype == "i1":
        return not is_max and 1 or 0
    bits = int("".join(c for c in dtype if c.isdigit()))
    if dtype.startswith("ui"):
        return 0 if is_max else 2**bits - 1
    return -(2 ** (bits - 1)) if is_max else 2 ** (bits - 1) - 1


def amax(ctx, x, axes, is_max=True):
    return ctx.reduce(x, axes, _minmax_init(x.type.dtype, is_max), "stablehlo.maximum" if is_max else "stablehlo.minimum")


@register("aten.amax.default", "aten.amin.default", "aten.max.default", "aten.min.default")
def _amax(ctx, node, x, dim=None, keepdim=False):
    is_max = "max" in str(node.target)
    return _finish(ctx, node, amax(ctx, x, _axes(x, dim), is_max))


def _arg(ctx, x, axis, is_max, keep_dims_out):
    """Index of the first max (min) along `axis`, and the values, with keepdim-shaped results."""
    dims = ctx.dims_of(x)
    m = amax(ctx, x, [axis], is_max)
    kd = list(dims)
    kd[axis] = 1
    mk = ctx.reshape(m, kd)
    hit = ctx.compare(x, ctx.broadcast_in_dim(mk, dims, list(range(len(dims)))), "EQ")
    if is_float(x.type.dtype):  # a NaN is the max/min, as in PyTorch
        hit = ctx.binary("stablehlo.or", hit, ctx.compare(x, x, "NE"))
    idx = ctx.iota(dims, axis, "i64")
    big = ctx.full(2**62, dims, "i64")
    first = ctx.reduce(ctx.select(hit, idx, big), [axis], 2**62, "stablehlo.minimum")
    return m, first


@register("aten.max.dim", "aten.min.dim")
def _max_dim(ctx, node, x, dim, keepdim=False):
    axis = dim % x.type.rank
    m, i = _arg(ctx, x, axis, "max" in str(node.target), None)
    vals, idx = node.meta["val"]
    return (ctx.reshape(m, ctx.meta_dims_of_val(vals)), ctx.reshape(i, ctx.meta_dims_of_val(idx)))


@register("aten.argmax.default", "aten.argmin.default")
def _argmax(ctx, node, x, dim=None, keepdim=False):
    if dim is None:
        x = ctx.reshape(x, [prod_dims(ctx.dims_of(x))])
        axis = 0
    else:
        axis = dim % x.type.rank
    _, i = _arg(ctx, x, axis, "argmax" in str(node.target), None)
    return _finish(ctx, node, i)


@register("aten.any.dim", "aten.any.dims", "aten.any.default", "aten.all.dim", "aten.all.dims", "aten.all.default")
def _any(ctx, node, x, dim=None, keepdim=False):
    x = ctx.convert(x, "i1")
    is_any = "any" in str(node.target)
    r = ctx.reduce(x, _axes(x, dim), not is_any and 1 or 0, "stablehlo.or" if is_any else "stablehlo.and")
    return _finish(ctx, node, r)


@register("aten.prod.dim_int", "aten.prod.default")
def _prod(ctx, node, x, dim=None, keepdim=False, dtype=None):
    out = ctx.meta_dtype(node)
    x = ctx.convert(x, _acc_type(out))
    return _finish(ctx, node, ctx.reduce(x, _axes(x, dim), 1, "stablehlo.multiply"))


def _var(ctx, x, axes, correction):
    s = sum_(ctx, x, axes, x.type.dtype)
    n = _count(ctx, x, axes, s)
    mean = ctx.binary("stablehlo.divide", s, n)
    dims = ctx.dims_of(x)
    kept = [i for i in range(len(dims)) if i not in axes]
    centered = ctx.binary("stablehlo.subtract", x, ctx.broadcast_in_dim(mean, dims, kept))
    ss = sum_(ctx, ctx.binary("stablehlo.multiply", centered, centered), axes, x.type.dtype)
    denom = ctx.binary("stablehlo.subtract", n, ctx.scalar_like(correction, n)) if correction else n
    return ctx.binary("stablehlo.divide", ss, denom), mean


@register("aten.var.dim")
def _var_dim(ctx, node, x, dim=None, unbiased=True, keepdim=False):
    return _var_correction(ctx, node, x, dim, correction=1 if unbiased else 0, keepdim=keepdim)


@register("aten.var.correction", "aten.var_mean.correction")
def _var_correction(ctx, node, x, dim=None, correction=None, keepdim=False):
    out_val = node.meta["val"]
    out = ctx.meta_dtype(node) if not isinstance(out_val, (tuple, list)) else ctx.meta_dtype_of_val(out_val[0])
    acc = _acc_type(out)
    x = ctx.convert(x, acc)
    c = 1 if correction is None else correction
    v, m = _var(ctx, x, _axes(x, dim), c)
    if isinstance(out_val, (tuple, list)):
        return tuple(ctx.reshape(ctx.convert(t, out), ctx.meta_dims_of_val(val)) for t, val in zip((v, m), out_val))
    return _finish(ctx, node, v)


def softmax(ctx, x, axis, log=False):
    dims = ctx.dims_of(x)
    kept = [i for i in range(len(dims)) if i != axis]
    m = amax(ctx, x, [axis])
    shifted = ctx.binary("stablehlo.subtract", x, ctx.broadcast_in_dim(m, dims, kept))
    e = ctx.unary("stablehlo.exponential", shifted)
    s = ctx.reduce(e, [axis], 0, "stablehlo.add")
    if log:
        return ctx.binary("stablehlo.subtract", shifted,
                          ctx.broadcast_in_dim(ctx.unary("stablehlo.log", s), dims, kept))
    return ctx.binary("stablehlo.divide", e, ctx.broadcast_in_dim(s, dims, kept))


@register("aten._softmax.default", "aten._log_softmax.default", "aten.softmax.int", "aten.log_softmax.int")
def _softmax(ctx, node, x, dim, half_to_float=False, *rest):
    out = ctx.meta_dtype(node)
    x = ctx.convert(x, _acc_type(x.type.dtype))
    y = softmax(ctx, x, dim % x.type.rank, log="log_softmax" in str(node.target))
    return ctx.convert(y, out)


@register("aten.logsumexp.default")
def _logsumexp(ctx, node, x, dim, keepdim=False):
    out = ctx.meta_dtype(node)
    x = ctx.convert(x, _acc_type(out))
    axes = _axes(x, dim)
    dims = ctx.dims_of(x)
    kept = [i for i in range(len(dims)) if i not in axes]
    m = amax(ctx, x, axes)
    finite = ctx.compare(ctx.unary("stablehlo.abs", m), ctx.scalar_like(float("inf"), m), "NE")
    m = ctx.select(finite, m, ctx.scalar_like(0, m))
    e = ctx.unary("stablehlo.exponential", ctx.binary("stablehlo.subtract", x, ctx.broadcast_in_dim(m, dims, kept)))
    r = ctx.binary("stablehlo.add", ctx.unary("stablehlo.log", ctx.reduce(e, axes, 0, "stablehlo.add")), m)
    return _finish(ctx, node, r)


@register("aten.cumsum.default", "aten.cumprod.default")
def _cumsum(ctx, node, x, dim, dtype=None):
    out = ctx.meta_dtype(node)
    acc = _acc_type(out)
    x = ctx.convert(x, acc)
    dims = ctx.dims_of(x)
    axis = dim % max(x.type.rank, 1)
    n = dims[axis]
    if not is_static_dim(n):
        raise LoweringError(f"{node.target} along the dynamic dimension {axis}")
    rank = len(dims)
    window = [1] * rank
    window[axis] = n
    pads = [[0, 0]] * rank
    pads[axis] = [n - 1, 0]
    is_sum = "cumsum" in str(node.target)
    attrs = (f"window_dimensions = {i64_array(window)}, window_strides = {i64_array([1] * rank)}, "
             f"base_dilations = {i64_array([1] * rank)}, window_dilations = {i64_array([1] * rank)}, "
             f"padding = {dense_i64_matrix(pads)}")
    init = ctx.b.constant(0 if is_sum else 1, acc)
    body = "stablehlo.add" if is_sum else "stablehlo.multiply"
    r = ctx.emit("stablehlo.reduce_window", [x, init], x.type, attrs,
                 region=ctx.b.scalar_region(body, acc), dims=dims)
    return ctx.convert(r, out)
