"""aten.scaled_dot_product_attention, kept whole by the exporter (not decomposed) and lowered to
two dot_generals around an f32 softmax; boolean or additive masks, causal masking, explicit
scale, and grouped-query attention (`enable_gqa`)."""

from __future__ import annotations

import math

from .context import Context, LoweringError, is_static_dim
from .matmul import dot_general
from .random import dropout
from .reduce import softmax
from .registry import register


def _repeat_heads(ctx: Context, v, groups: int):
    """repeat_interleave(v, groups, dim=-3): each key/value head serves `groups` query heads."""
    dims = ctx.dims_of(v)
    r = len(dims)
    expanded = dims[:r - 2] + [groups] + dims[r - 2:]
    b = ctx.broadcast_in_dim(v, expanded, list(range(r - 2)) + [r - 1, r])
    return ctx.reshape(b, dims[:r - 3] + [dims[r - 3] * groups] + dims[r - 2:])


@register("aten.scaled_dot_product_attention.default")
def _sdpa(ctx: Context, node, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    qd, kd = ctx.dims_of(q), ctx.dims_of(k)
    rank = len(qd)
    if enable_gqa and qd[-3] != kd[-3]:
        if not (is_static_dim(qd[-3]) and is_static_dim(kd[-3])) or qd[-3] % kd[-3]:
            raise LoweringError(f"grouped-query attention with {qd[-3]} query heads and {kd[-3]} key heads")
        g = qd[-3] // kd[-3]
        k, v = _repeat_heads(ctx, k, g), _repeat_heads(ctx, v, g)
    # Batch dimensions broadcast (multi-query attention passes one key head for all query heads).
    kd, vd = ctx.dims_of(k), ctx.dims_of(v)
    if kd[:-2] != qd[:-2] or vd[:-2] != qd[:-2]:
        bd = []
        for a, b_, c in zip(qd[:-2], kd[:-2], vd[:-2]):
            sizes = {d for d in (a, b_, c) if not (is_static_dim(d) and d == 1)}
            if len(sizes) > 1:
                raise LoweringError(f"batch dimensions {qd[:-2]}, {kd[:-2]} and {vd[:-2]} of query, key and value "
                                    "do not broadcast")
            bd.append(sizes.pop() if sizes else 1)
        q = ctx.broadcast(q, bd + qd[-2:])
        k = ctx.broadcast(k, bd + kd[-2:])
        v = ctx.broadcast(v, bd + vd[-2:])
        qd = ctx.dims_of(q)
    dtype = ctx.meta_dtype(node)
    prod = ctx.product_dtype(node)
    batch = [(i, i) for i in range(rank - 2)]
    s = dot_general(ctx, ctx.convert(q, prod), ctx.convert(k, prod), batch, [rank - 1], [rank - 1])
    s = ctx.convert(s, "f32" if dtype in ("bf16", "f16", "f32") else dtype)
    e = qd[-1]
    if scale is None:
        if not is_static_dim(e):
            raise LoweringError("a dynamic head dimension without an explicit scale")
        scale = 1.0 / math.sqrt(e)
    s = ctx.binary("stablehlo.multiply", s, ctx.scalar_like(scale, s))
    sdims = ctx.dims_of(s)
    neg_inf = ctx.scalar_like(float("-inf"), s)
    if is_causal:
        L, S = sdims[-2], sdims[-1]
        rows = ctx.iota([L, S], 0, "i64")
        cols = ctx.iota([L, S], 1, "i64")
        keep = ctx.broadcast_in_dim(ctx.compare(rows, cols, "GE"), sdims, [rank - 2, rank - 1])
        s = ctx.select(keep, s, neg_inf)
    if attn_mask is not None:
        if attn_mask.type.dtype == "i1":
            s = ctx.select(ctx.broadcast(attn_mask, sdims), s, neg_inf)
        else:
            s = ctx.binary("stablehlo.add", s, ctx.broadcast(ctx.convert(attn_mask, s.type.dtype), sdims))
    p = softmax(ctx, s, rank - 1)
    if dropout_p:  # on the attention weights, as PyTorch's math attention applies it
        p = ctx.convert(dropout(ctx, ctx.convert(p, dtype), float(dropout_p))[0], p.type.dtype)
    out = dot_general(ctx, ctx.convert(p, prod), ctx.convert(v, prod), batch, [rank - 1], [rank - 2])
    return ctx.convert(out, dtype)
