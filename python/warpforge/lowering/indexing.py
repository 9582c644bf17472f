"""Indexing: embedding, index.Tensor (advanced indexing), index_select, gather. All lower to
stablehlo.gather (dynamic_gather where a slice size is dynamic)."""

from __future__ import annotations

from ..mlir import i64_array
from .context import Context, LoweringError, is_static_dim
from .registry import register


def gather(ctx: Context, x, indices, offset_dims, collapsed, start_index_map, slice_sizes, out_dims):
    """stablehlo.gather with index_vector_dim = the last dimension of `indices`."""
    ivd = indices.type.rank - 1
    dn = (f"#stablehlo.gather<offset_dims = {list(offset_dims)}, collapsed_slice_dims = {list(collapsed)}, "
          f"start_index_map = {list(start_index_map)}, index_vector_dim = {ivd}>")
    t = ctx.tt(out_dims, x.type.dtype)
    if all(is_static_dim(s) for s in slice_sizes):
        return ctx.emit("stablehlo.gather", [x, indices], t,
                        f"dimension_numbers = {dn}, slice_sizes = {i64_array(slice_sizes)}, indices_are_sorted = false",
                        dims=out_dims)
    return ctx.emit("stablehlo.dynamic_gather", [x, indices, ctx.shape_tensor(slice_sizes)], t,
                    f"dimension_numbers = {dn}, indices_are_sorted = false", dims=out_dims)


def _wrap_negative(ctx, idx, size):
    """idx + size where idx < 0 (PyTorch's negative indices)."""
    idx = ctx.convert(idx, "i64")
    dims = ctx.dims_of(idx)
    neg = ctx.compare(idx, ctx.full(0, dims, "i64"), "LT")
    n = ctx.as_tensor(size, "i64", dims) if is_static_dim(size) else ctx.broadcast(ctx.sym_value(size), dims)
    return ctx.select(neg, ctx.binary("stablehlo.add", idx, n), idx)


def _stack_last(ctx, parts, dims):
    cols = [ctx.reshape(p, list(dims) + [1]) for p in parts]
    if len(cols) == 1:
        return cols[0]
    out = list(dims) + [len(cols)]
    return ctx.emit("stablehlo.concatenate", cols, ctx.tt(out, "i64"), f"dimension = {len(dims)} : i64", dims=out)


@register("aten.embedding.default")
def _embedding(ctx, node, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    idx_dims = ctx.dims_of(indices)
    wd = ctx.dims_of(weight)
    idx = _stack_last(ctx, [ctx.convert(indices, "i64")], idx_dims)
    out_dims = ctx.meta_dims(node)
    return gather(ctx, weight, idx, list(range(len(idx_dims), len(idx_dims) + len(wd) - 1)), [0], [0],
                  [1] + wd[1:], out_dims)


@register("aten.index_select.default")
def _index_select(ctx, node, x, dim, index):
    xd = ctx.dims_of(x)
    dim %= len(xd)
    idx = _wrap_negative(ctx, index, xd[dim])
    idx = _stack_last(ctx, [idx], ctx.dims_of(idx))
    sizes = list(xd)
    sizes[dim] = 1
    offset = [i for i in range(len(xd)) if i != dim]
    return gather(ctx, x, idx, offset, [dim], [dim], sizes, ctx.meta_dims(node))


@register("aten.index.Tensor")
def _index(ctx, node, x, indices):
    xd = ctx.dims_of(x)
    indexed = [i for i, t in enumerate(indices) if t is not None]
    if not indexed:
        return x
    for i in indexed:
        if indices[i].type.dtype == "i1":
            raise LoweringError("indexing with a boolean mask (data-dependent shape)")
    out_dims = ctx.meta_dims(node)
    # the broadcast shape of the index tensors
    idx_vals = [indices[i] for i in indexed]
    bdims = _broadcast_dims([ctx.dims_of(v) for v in idx_vals])
    parts = [ctx.broadcast(_wrap_negative(ctx, v, xd[i]), bdims) for i, v in zip(indexed, idx_vals)]
    idx = _stack_last(ctx, parts, bdims)
    rest = [i for i in range(len(xd)) if i not in indexed]
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    nb = len(bdims)
    if adjacent:
        pre = [i for i in rest if i < indexed[0]]
        offset = list(range(len(pre))) + [len(pre) + nb + k for k in range(len(rest) - len(pre))]
    else:
        offset = [nb + k for k in range(len(rest))]
    sizes = [1 if i in indexed else xd[i] for i in range(len(xd))]
    return gather(ctx, x, idx, offset, indexed, indexed, sizes, out_dims)


def _broadcast_dims(all_dims):
    n = max(len(d) for d in all_dims)
    out = []
    for k in range(n):
        size = 1
        for d in all_dims:
            j = k - (n - len(d))
            if j >= 0 and not (is_static_dim(d[j]) and d[j] == 1):
                size = d[j]
        out.append(size)
    return out


@register("aten.gather.default")
def _gather(ctx, node, x, dim, index, sparse_grad=False):
    xd = ctx.dims_of(x)
    dim %= len(xd)
    idims = ctx.dims_of(index)
    parts = []
    for d in range(len(xd)):
        if d == dim:
            parts.append(_wrap_negative(ctx, index, xd[dim]))
        else:
            parts.append(ctx.iota(idims, d, "i64"))
    idx = _stack_last(ctx, parts, idims)
    return gather(ctx, x, idx, [], list(range(len(xd))), list(range(len(xd))), [1] * len(xd), ctx.meta_dims(node))


# ---- scatters -----------------------------------------------------------------------------------
def scatter(ctx: Context, x, indices, updates, update_window_dims, inserted, to_operand, combine: str):
    """stablehlo.scatter with index_vector_dim = the last dimension of `indices`; `combine` is
    "replace" or a binary stablehlo op applied to (old, update)."""
    ivd = indices.type.rank - 1
    dn = (f"#stablehlo.scatter<update_window_dims = {list(update_window_dims)}, inserted_window_dims = "
          f"{list(inserted)}, scatter_dims_to_operand_dims = {list(to_operand)}, index_vector_dim = {ivd}>")
    dtype = x.type.dtype
    if combine == "replace":
        from ..mlir import TensorType, Value

        t = TensorType((), dtype)
        a, c = Value(ctx.b.fresh("r"), t), Value(ctx.b.fresh("r"), t)
        region = (f"{{\n    ^bb0({a}: {t}, {c}: {t}):\n      \"stablehlo.return\"({c}) : ({t}) -> ()\n    }}")
    else:
        region = ctx.b.scalar_region(combine, dtype)
    return ctx.emit("stablehlo.scatter", [x, indices, ctx.convert(updates, dtype)], x.type,
                    f"scatter_dimension_numbers = {dn}, indices_are_sorted = false, unique_indices = false",
                    region=region, dims=ctx.dims_of(x))


def _full_indices(ctx, idx_dims, dim, index, size):
    parts = []
    for d in range(len(idx_dims)):
        parts.append(_wrap_negative(ctx, index, size) if d == dim else ctx.iota(idx_dims, d, "i64"))
    return _stack_last(ctx, parts, idx_dims)


def _scatter_elementwise(ctx, node, x, dim, index, updates, combine):
    xd = ctx.dims_of(x)
    dim %= len(xd)
    idims = ctx.dims_of(index)
    idx = _full_indices(ctx, idims, dim, index, xd[dim])
    rank = len(xd)
    return scatter(ctx, x, idx, updates, [], list(range(rank)), list(range(rank)), combine)


def _src_like_index(ctx, src, index):
    """src[:idx0, :idx1, ...]: scatter reads only the leading block of src that index covers."""
    from .shape import slice_dim

    sd, idims = ctx.dims_of(src), ctx.dims_of(index)
    for d, (s, n) in enumerate(zip(sd, idims)):
        if is_static_dim(s) and is_static_dim(n) and s != n:
            src = slice_dim(ctx, src, d, 0, n, 1)
        elif not is_static_dim(s) and s != n:
            raise LoweringError("scatter with a dynamic source larger than its index")
    return src


@register("aten.scatter.src", "aten.scatter.value", "aten.scatter_add.default", "aten.scatter.reduce",
          "aten.scatter.value_reduce")
def _scatter(ctx, node, x, dim, index, src, reduce=None):
    target = str(node.target)
    dtype = ctx.meta_dtype(node)
    x = ctx.convert(x, dtype)
    if isinstance(src, (int, float)):
        updates = ctx.full(src, ctx.dims_of(index), dtype)
    else:
        updates = _src_like_index(ctx, ctx.convert(src, dtype), index)
    if target == "aten.scatter_add.default" or reduce == "add":
        combine = "stablehlo.add"
    elif reduce in ("multiply", "mul"):
        combine = "stablehlo.multiply"
    elif reduce is None:
        combine = "replace"
    else:
        raise LoweringError(f"scatter reduce={reduce!r}")
    return _scatter_elementwise(ctx, node, x, dim, index, updates, combine)


@register("aten.index_put.default")
def _index_put(ctx, node, x, indices, values, accumulate=False):
    dtype = ctx.meta_dtype(node)
    x = ctx.convert(x, dtype)
    xd = ctx.dims_of(x)
    indexed = [i for i, t in enumerate(indices) if t is not None]
    for i in indexed:
        if indices[i].type.dtype == "i1":
            raise LoweringError("index_put with a boolean mask (data-dependent shape)")
    idx_vals = [indices[i] for i in indexed]
    bdims = _broadcast_dims([ctx.dims_of(v) for v in idx_vals])
    parts = [ctx.broadcast(_wrap_negative(ctx, v, xd[i]), bdims) for i, v in zip(indexed, idx_vals)]
    idx = _stack_last(ctx, parts, bdims)
    rest = [i for i in range(len(xd)) if i not in indexed]
    adjacent = indexed == list(range(indexed[0], indexed[-1] + 1))
    nb = len(bdims)
    if adjacent:
        pre = [i for i in rest if i < indexed[0]]
        window = list(range(len(pre))) + [len(pre) + nb + k for k in range(len(rest) - len(pre))]
        upd_dims = [xd[i] for i in pre] + bdims + [xd[i] for i in rest if i not in pre]
    else:
        window = [nb + k for k in range(len(rest))]
        upd_dims = bdims + [xd[i] for i in rest]
    # the scatter (index) dimensions of `updates` are those update_window_dims leaves out,
    # which is where PyTorch puts the broadcast index shape in both layouts
    updates = ctx.broadcast(ctx.convert(values, dtype), upd_dims)
    return scatter(ctx, x, idx, updates, window, indexed, indexed, "stablehlo.add" if accumulate else "replace")


@register("aten.slice_scatter.default")
def _slice_scatter(ctx, node, x, src, dim=0, start=None, end=None, step=1):
    dtype = ctx.meta_dtype(node)
    x, src = ctx.convert(x, dtype), ctx.convert(src, dtype)
    xd = ctx.dims_of(x)
    dim %= len(xd)
    size = xd[dim]
    if not is_static_dim(size):
        raise LoweringError(f"slice_scatter along the dynamic dimension {dim}")
    s = 0 if start is None else (start + size if start < 0 else start)
    s = max(0, min(s, size))
    if step != 1:
        sd = ctx.dims_of(src)
        index_dims = list(sd)
        pos = ctx.binary("stablehlo.add", ctx.binary("stablehlo.multiply", ctx.iota(index_dims, dim, "i64"),
                                                      ctx.full(step, index_dims, "i64")), ctx.full(s, index_dims, "i64"))
        return _scatter_elementwise(ctx, node, x, dim, pos, src, "replace")
    starts = [ctx.b.constant(s if d == dim else 0, "i64") for d in range(len(xd))]
    return ctx.emit("stablehlo.dynamic_update_slice", [x, src] + starts, x.type, dims=xd)


@register("aten.select_scatter.default")
def _select_scatter(ctx, node, x, src, dim, index):
    dtype = ctx.meta_dtype(node)
    xd = ctx.dims_of(x)
    dim %= len(xd)
    index = index + xd[dim] if index < 0 else index
    sd = ctx.dims_of(src)
    src = ctx.reshape(ctx.convert(src, dtype), sd[:dim] + [1] + sd[dim:])
    starts = [ctx.b.constant(index if d == dim else 0, "i64") for d in range(len(xd))]
    return ctx.emit("stablehlo.dynamic_update_slice", [ctx.convert(x, dtype), src] + starts,
                    ctx.tt(xd, dtype), dims=xd)


@register("aten.scatter_reduce.two")
def _scatter_reduce(ctx, node, x, dim, index, src, reduce, include_self=True):
    from .reduce import _minmax_init

    dtype = ctx.meta_dtype(node)
    x = ctx.convert(x, dtype)
    updates = _src_like_index(ctx, ctx.convert(src, dtype), index)
    ops = {"sum": ("stablehlo.add", 0), "mean": ("stablehlo.add", 0), "prod": ("stablehlo.multiply", 1),
           "amax": ("stablehlo.maximum", _minmax_init(dtype, True)),
           "amin": ("stablehlo.minimum", _minmax_init(dtype, False))}
    if reduce not in ops:
        raise LoweringError(f"scatter_reduce reduce={reduce!r}")
    op, identity = ops[reduce]
    base = x
    if not include_self:
        # positions that receive an update start from the reduction's identity
        base = _scatter_elementwise(ctx, node, x, dim, index, ctx.full(identity, ctx.dims_of(index), dtype), "replace")
    out = _scatter_elementwise(ctx, node, base, dim, index, updates, op)
    if reduce == "mean":
        ones = ctx.full(1, ctx.dims_of(index), dtype)
        start = ctx.full(1 if include_self else 0, ctx.dims_of(x), dtype)
        count = _scatter_elementwise(ctx, node, start, dim, index, ones, "stablehlo.add")
        count = ctx.binary("stablehlo.maximum", count, ctx.scalar_like(1, count))
        out = ctx.binary("stablehlo.divide", out, count)
    return out


@register("aten.diagonal.default")
def _diagonal(ctx, node, x, offset=0, dim1=0, dim2=1):
    xd = ctx.dims_of(x)
    r = len(xd)
    d1, d2 = dim1 % r, dim2 % r
    out_dims = ctx.meta_dims(node)
    n = out_dims[-1]
    if not is_static_dim(n):
        raise LoweringError("diagonal of a dynamic dimension")
    rows = [i + max(-offset, 0) for i in range(n)]
    cols = [i + max(offset, 0) for i in range(n)]
    # move d1, d2 last, then gather pairs (row, col)
    rest = [i for i in range(r) if i not in (d1, d2)]
    t = ctx.transpose(x, rest + [d1, d2])
    idx = ctx.reshape(ctx.b.constant_list([v for pair in zip(rows, cols) for v in pair], "i64"), [n, 2])
    td = ctx.dims_of(t)
    nr = len(rest)
    return gather(ctx, t, idx, list(range(nr)), [nr, nr + 1], [nr, nr + 1], td[:nr] + [1, 1], out_dims)
