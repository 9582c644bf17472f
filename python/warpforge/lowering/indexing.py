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
