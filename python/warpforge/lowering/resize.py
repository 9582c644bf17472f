"""Resizing: upsample_nearest{1,2,3}d and upsample_bilinear2d / linear1d (align_corners either
way), separable along each spatial dimension with gathers of source indices computed from the
static sizes, as PyTorch's kernels compute them."""

from __future__ import annotations

import math

from .context import Context, LoweringError, is_static_dim
from .indexing import gather
from .registry import register


def _take(ctx: Context, x, axis: int, positions):
    """x gathered at the static `positions` along `axis`."""
    dims = ctx.dims_of(x)
    idx = ctx.b.constant_list(positions, "i64")
    idx = ctx.reshape(idx, [len(positions), 1])
    sizes = list(dims)
    sizes[axis] = 1
    out = list(dims)
    out[axis] = len(positions)
    offset = [i for i in range(len(dims)) if i != axis]
    return gather(ctx, x, idx, offset, [axis], [axis], sizes, out)


def _scales(in_sizes, out_sizes, scale_factors):
    out = []
    for i, (n, o) in enumerate(zip(in_sizes, out_sizes)):
        if scale_factors:
            out.append(1.0 / scale_factors[i])
        else:
            out.append(n / o)
    return out


def _spatial(ctx, node, x, output_size, scale_factors):
    dims = ctx.dims_of(x)
    out_dims = ctx.meta_dims(node)
    nsp = len(out_dims) - 2
    in_sp, out_sp = dims[2:], out_dims[2:]
    if not all(is_static_dim(d) for d in list(in_sp) + list(out_sp)):
        raise LoweringError("resizing dynamic spatial dimensions")
    return nsp, in_sp, out_sp


@register("aten.upsample_nearest2d.vec", "aten.upsample_nearest1d.vec", "aten.upsample_nearest3d.vec",
          "aten.upsample_nearest2d.default", "aten.upsample_nearest1d.default")
def _nearest(ctx, node, x, output_size, *rest):
    scale_factors = rest[0] if rest and isinstance(rest[0], (list, tuple)) else None
    if str(node.target).endswith(".default"):
        scale_factors = [1.0 / s if s else None for s in rest] if rest and any(rest) else None
        if scale_factors and None in scale_factors:
            scale_factors = None
    nsp, in_sp, out_sp = _spatial(ctx, node, x, output_size, scale_factors)
    scales = _scales(in_sp, out_sp, scale_factors)
    for i in range(nsp):
        pos = [min(int(math.floor(o * scales[i])), in_sp[i] - 1) for o in range(out_sp[i])]
        if pos != list(range(in_sp[i])):
            x = _take(ctx, x, 2 + i, pos)
    return x


@register("aten.upsample_bilinear2d.vec", "aten.upsample_linear1d.vec", "aten.upsample_bilinear2d.default")
def _bilinear(ctx, node, x, output_size, align_corners, *rest):
    scale_factors = rest[0] if rest and isinstance(rest[0], (list, tuple)) else None
    nsp, in_sp, out_sp = _spatial(ctx, node, x, output_size, scale_factors)
    scales = _scales(in_sp, out_sp, scale_factors)
    for i in range(nsp):
        n, m = in_sp[i], out_sp[i]
        lo, hi, w = [], [], []
        for o in range(m):
            if align_corners:
                src = o * (n - 1) / (m - 1) if m > 1 else 0.0
            else:
                src = max((o + 0.5) * scales[i] - 0.5, 0.0)
            i0 = min(int(math.floor(src)), n - 1)
            i1 = min(i0 + 1, n - 1)
            lo.append(i0)
            hi.append(i1)
            w.append(src - i0)
        axis = 2 + i
        a = _take(ctx, x, axis, lo)
        c = _take(ctx, x, axis, hi)
        dims = ctx.dims_of(a)
        wv = ctx.broadcast_in_dim(ctx.convert(ctx.b.constant_list(w, "f32"), a.type.dtype), dims, [axis])
        x = ctx.binary("stablehlo.add", a, ctx.binary("stablehlo.multiply", ctx.binary("stablehlo.subtract", c, a), wv))
    return x
