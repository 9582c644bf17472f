"""Sorting: sort (values and indices, stable) and topk, through stablehlo.sort with an iota
operand carrying the indices."""

from __future__ import annotations

from ..mlir import TensorType, Value, is_float, is_unsigned
from .context import Context
from .registry import register
from .shape import slice_dim


def sort_with_indices(ctx: Context, x, dim: int, descending: bool):
    dims = ctx.dims_of(x)
    idx = ctx.iota(dims, dim, "i64")
    et = x.type.dtype
    t, ti = TensorType((), et), TensorType((), "i64")
    a, c = Value(ctx.b.fresh("r"), t), Value(ctx.b.fresh("r"), t)
    ia, ic = Value(ctx.b.fresh("r"), ti), Value(ctx.b.fresh("r"), ti)
    res = Value(ctx.b.fresh("r"), TensorType((), "i1"))
    kind = "FLOAT" if is_float(et) else ("UNSIGNED" if is_unsigned(et) else "SIGNED")
    direction = "GT" if descending else "LT"
    region = (f"{{\n    ^bb0({a}: {t}, {c}: {t}, {ia}: {ti}, {ic}: {ti}):\n"
              f"      {res} = \"stablehlo.compare\"({a}, {c}) {{comparison_direction = #stablehlo<comparison_direction "
              f"{direction}>, compare_type = #stablehlo<comparison_type {kind}>}} : ({t}, {t}) -> tensor<i1>\n"
              f"      \"stablehlo.return\"({res}) : (tensor<i1>) -> ()\n    }}")
    values, indices = ctx.b.op("stablehlo.sort", [x, idx], [x.type, idx.type],
                               f"dimension = {dim} : i64, is_stable = true", region)
    values.dims, indices.dims = list(dims), list(dims)
    return values, indices


@register("aten.sort.default", "aten.sort.stable")
def _sort(ctx, node, x, *args, **kwargs):
    if str(node.target) == "aten.sort.default":
        dim = args[0] if args else kwargs.get("dim", -1)
        descending = args[1] if len(args) > 1 else kwargs.get("descending", False)
    else:
        dim = kwargs.get("dim", -1)
        descending = kwargs.get("descending", False)
    if x.type.rank == 0:
        return x, ctx.full(0, [], "i64")
    return sort_with_indices(ctx, x, dim % x.type.rank, bool(descending))


@register("aten.topk.default")
def _topk(ctx, node, x, k, dim=-1, largest=True, sorted=True):
    dim %= x.type.rank
    values, indices = sort_with_indices(ctx, x, dim, bool(largest))
    return slice_dim(ctx, values, dim, 0, k, 1), slice_dim(ctx, indices, dim, 0, k, 1)
