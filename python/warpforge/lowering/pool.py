"""Pooling: max_pool2d_with_indices (values), avg_pool2d, adaptive average pooling, all through
reduce_window."""

from __future__ import annotations

from ..mlir import i64_array
from .context import Context, LoweringError, Unavailable, dense_i64_matrix, is_static_dim
from .registry import register


def _expand(v, n, default=None):
    v = list(v) if v is not None else []
    if not v:
        return list(default)
    return v * n if len(v) == 1 else v


def _reduce_window(ctx: Context, x, init, body, window, strides, dilations, pads, out_dims):
    rank = x.type.rank
    nsp = len(window)
    lead = rank - nsp
    attrs = (f"window_dimensions = {i64_array([1] * lead + list(window))}, "
             f"window_strides = {i64_array([1] * lead + list(strides))}, "
             f"base_dilations = {i64_array([1] * rank)}, "
             f"window_dilations = {i64_array([1] * lead + list(dilations))}, "
             f"padding = {dense_i64_matrix([[0, 0]] * lead + [list(p) for p in pads])}")
    init_v = ctx.b.constant(init, x.type.dtype)
    return ctx.emit("stablehlo.reduce_window", [x, init_v], ctx.tt(out_dims, x.type.dtype), attrs,
                    region=ctx.b.scalar_region(body, x.type.dtype), dims=out_dims)


def _pads(in_sizes, out_sizes, kernel, stride, dilation, padding):
    pads = []
    for i, (n, o, k, s, d, p) in enumerate(zip(in_sizes, out_sizes, kernel, stride, dilation, padding)):
        if not is_static_dim(n) or not is_static_dim(o):
            raise LoweringError(f"pooling over the dynamic spatial dimension {i}")
        hi = max(p, (o - 1) * s + d * (k - 1) + 1 - n - p)
        pads.append((p, hi))
    return pads


@register("aten.max_pool2d_with_indices.default", "aten.max_pool3d_with_indices.default",
          "aten.max_pool1d_with_indices.default")
def _max_pool(ctx, node, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    nsp = x.type.rank - 2
    kernel = _expand(kernel_size, nsp)
    stride = _expand(stride, nsp, kernel)
    padding = _expand([padding] if isinstance(padding, int) else padding, nsp)
    dilation = _expand([dilation] if isinstance(dilation, int) else dilation, nsp)
    out_dims = ctx.meta_dims_of_val(node.meta["val"][0])
    in_dims = ctx.dims_of(x)
    pads = _pads(in_dims[2:], out_dims[2:], kernel, stride, dilation, padding)
    y = _reduce_window(ctx, x, float("-inf"), "stablehlo.maximum", kernel, stride, dilation, pads, out_dims)
    return (y, Unavailable("the indices output of max_pool_with_indices"))


@register("aten.avg_pool2d.default", "aten.avg_pool1d.default", "aten.avg_pool3d.default")
def _avg_pool(ctx, node, x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
    nsp = x.type.rank - 2
    kernel = _expand(kernel_size, nsp)
    stride = _expand(stride, nsp, kernel)
    padding = _expand([padding] if isinstance(padding, int) else padding, nsp)
    out_dims = ctx.meta_dims(node)
    in_dims = ctx.dims_of(x)
    pads = _pads(in_dims[2:], out_dims[2:], kernel, stride, [1] * nsp, padding)
    s = _reduce_window(ctx, x, 0, "stablehlo.add", kernel, stride, [1] * nsp, pads, out_dims)
    if divisor_override:
        return ctx.binary("stablehlo.divide", s, ctx.scalar_like(divisor_override, s))
    exact = all(lo == p and hi == p for (lo, hi), p in zip(pads, padding))
    if exact and (count_include_pad or all(p == 0 for p in padding)):
        n = 1
        for k in kernel:
            n *= k
        return ctx.binary("stablehlo.divide", s, ctx.scalar_like(n, s))
    # Count the elements each window covers: ones padded by `padding` with ones when they count,
    # then the extra (ceil_mode) padding with zeros.
    sp_in = in_dims[2:]
    ones = ctx.b.constant(1, x.type.dtype, sp_in)
    if count_include_pad:
        ones = ctx.emit("stablehlo.pad", [ones, ctx.b.constant(1, x.type.dtype)],
                        ctx.tt([n + 2 * p for n, p in zip(sp_in, padding)], x.type.dtype),
                        f"edge_padding_low = {i64_array(padding)}, edge_padding_high = {i64_array(padding)}, "
                        f"interior_padding = {i64_array([0] * nsp)}")
        cpads = [(0, hi - p) for (lo, hi), p in zip(pads, padding)]
    else:
        cpads = pads
    counts = _reduce_window(ctx, ones, 0, "stablehlo.add", kernel, stride, [1] * nsp, cpads, out_dims[2:])
    counts = ctx.broadcast_in_dim(counts, out_dims, list(range(2, 2 + nsp)))
    return ctx.binary("stablehlo.divide", s, counts)


def _adaptive_avg_pool_matrix(ctx, x, sp, output_size):
    """Adaptive average pooling where the windows overlap or differ in size (an input smaller
    than the output, 7 from 10): along each spatial dimension, a product with the matrix that
    averages input positions floor(i * n / o) .. ceil((i + 1) * n / o) - 1 into output i, as
    PyTorch's kernel takes them."""
    from .matmul import dot_general

    rank = x.type.rank
    lead = rank - len(sp)
    for k, (n, o) in enumerate(zip(sp, output_size)):
        if n == o:
            continue
        d = lead + k
        m = [0.0] * (n * o)
        for i in range(o):
            start, end = (i * n) // o, -((-(i + 1) * n) // o)
            for j in range(start, end):
                m[j * o + i] = 1.0 / (end - start)
        mat = ctx.reshape(ctx.b.constant_list(m, x.type.dtype), [n, o])
        y = dot_general(ctx, x, mat, [], [d], [0])  # x's other dims, then o
        perm = list(range(d)) + [rank - 1] + list(range(d, rank - 1))
        x = ctx.transpose(y, perm)
    return x


@register("aten._adaptive_avg_pool2d.default", "aten.adaptive_avg_pool2d.default",
          "aten._adaptive_avg_pool3d.default", "aten.adaptive_avg_pool1d.default")
def _adaptive_avg_pool(ctx, node, x, output_size):
    nsp = len(output_size)
    in_dims = ctx.dims_of(x)
    sp = in_dims[-nsp:]
    out_dims = ctx.meta_dims(node)
    if any(not is_static_dim(n) for n in sp):
        raise LoweringError(f"adaptive average pooling of the dynamic spatial dimensions {sp}")
    if any(n % o for n, o in zip(sp, output_size)):
        return _adaptive_avg_pool_matrix(ctx, x, sp, list(output_size))
    kernel = [n // o for n, o in zip(sp, output_size)]
    s = _reduce_window(ctx, x, 0, "stablehlo.add", kernel, kernel, [1] * nsp, [(0, 0)] * nsp, out_dims)
    n = 1
    for k in kernel:
        n *= k
    return ctx.binary("stablehlo.divide", s, ctx.scalar_like(n, s))
