"""Shape and layout ops: view/reshape, permute, expand, (un)squeeze, slice, select, cat, split,
flip, padding and repetition."""

from __future__ import annotations

from ..mlir import i64_array
from .context import Context, LoweringError, is_static_dim
from .registry import register


@register("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.squeeze.dim",
          "aten.squeeze.dims", "aten.squeeze.default", "aten.unsqueeze.default", "aten.flatten.using_ints",
          "aten.unflatten.int", "aten.view_as.default")
def _reshape(ctx: Context, node, a, *args, **kwargs):
    return ctx.reshape(a, ctx.meta_dims(node))


@register("aten.permute.default")
def _permute(ctx, node, a, dims):
    return ctx.transpose(a, [d % a.type.rank for d in dims])


@register("aten.transpose.int")
def _transpose(ctx, node, a, d0, d1):
    perm = list(range(a.type.rank))
    d0, d1 = d0 % a.type.rank, d1 % a.type.rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ctx.transpose(a, perm)


@register("aten.t.default", "aten.numpy_T.default")
def _t(ctx, node, a):
    return ctx.transpose(a, list(reversed(range(a.type.rank))))


@register("aten.expand.default", "aten.expand_as.default", "aten.broadcast_to.default")
def _expand(ctx, node, a, *args, **kwargs):
    return ctx.broadcast(a, ctx.meta_dims(node))


def slice_dim(ctx: Context, v, dim, start, end, step):
    """v[..., start:end:step, ...] along `dim` with already-normalised static start/end."""
    dims = ctx.dims_of(v)
    rank = len(dims)
    n = (end - start + step - 1) // step if end > start else 0
    out_dims = list(dims)
    out_dims[dim] = n
    if all(is_static_dim(d) for d in dims):
        starts = [0] * rank
        limits = list(dims)
        strides = [1] * rank
        starts[dim], limits[dim], strides[dim] = start, end, step
        return ctx.emit("stablehlo.slice", [v], ctx.tt(out_dims, v.type.dtype),
                        f"start_indices = {i64_array(starts)}, limit_indices = {i64_array(limits)}, "
                        f"strides = {i64_array(strides)}")
    starts = [0] * rank
    limits = list(dims)
    strides = [1] * rank
    starts[dim], limits[dim], strides[dim] = start, end, step
    return ctx.emit("stablehlo.real_dynamic_slice",
                    [v, ctx.shape_tensor(starts), ctx.shape_tensor(limits), ctx.shape_tensor(strides)],
                    ctx.tt(out_dims, v.type.dtype), dims=out_dims)


def _norm_index(i, size, default):
    if i is None:
        return default
    if not isinstance(i, int):
        raise LoweringError(f"slice bound {i} is not a static integer")
    if i < 0:
        i += size
    return max(0, min(i, size))


@register("aten.slice.Tensor")
def _slice(ctx, node, a, dim=0, start=None, end=None, step=1):
    dims = ctx.dims_of(a)
    dim %= len(dims)
    size = dims[dim]
    if not is_static_dim(size):
        if (start in (None, 0)) and (end is None or (isinstance(end, int) and end >= 2**62)) and step == 1:
            return a
        raise LoweringError(f"slice of the dynamic dimension {dim} with bounds {start}:{end}:{step}")
    s = _norm_index(start, size, 0)
    e = _norm_index(end, size, size)
    if s == 0 and e == size and step == 1:
        return a
    return slice_dim(ctx, a, dim, s, max(e, s), step)


@register("aten.select.int")
def _select(ctx, node, a, dim, index):
    dims = ctx.dims_of(a)
    dim %= len(dims)
    if not is_static_dim(dims[dim]):
        raise LoweringError(f"select on the dynamic dimension {dim}")
    index = index + dims[dim] if index < 0 else index
    s = slice_dim(ctx, a, dim, index, index + 1, 1)
    return ctx.reshape(s, ctx.meta_dims(node))


@register("aten.narrow.default")
def _narrow(ctx, node, a, dim, start, length):
    dim %= a.type.rank
    return slice_dim(ctx, a, dim, start, start + length, 1)


@register("aten.cat.default", "aten.concat.default")
def _cat(ctx, node, tensors, dim=0):
    dtype = ctx.meta_dtype(node)
    out_dims = ctx.meta_dims(node)
    dim %= len(out_dims)
    parts = [ctx.convert(t, dtype) for t in tensors if not (t.type.rank == 1 and t.type.shape[0] == 0 and len(out_dims) != 1)]
    if len(parts) == 1:
        return parts[0]
    return ctx.emit("stablehlo.concatenate", parts, ctx.tt(out_dims, dtype), f"dimension = {dim} : i64",
                    dims=out_dims)


@register("aten.split_with_sizes.default", "aten.split.Tensor", "aten.split_with_sizes_copy.default",
          "aten.unbind.int", "aten.chunk.default")
def _split(ctx, node, a, *args, **kwargs):
    outs = node.meta["val"]
    target = str(node.target)
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if target == "aten.unbind.int":
        dim = args[0] if args else kwargs.get("dim", 0)
    dim %= a.type.rank
    results, offset = [], 0
    for o in outs:
        odims = ctx.meta_dims_of_val(o)
        size = odims[dim] if target != "aten.unbind.int" else 1
        if not is_static_dim(size):
            raise LoweringError(f"{target} along the dynamic dimension {dim}")
        part = slice_dim(ctx, a, dim, offset, offset + size, 1)
        if target == "aten.unbind.int":
            part = ctx.reshape(part, odims)
        results.append(part)
        offset += size
    return tuple(results)


@register("aten.flip.default")
def _flip(ctx, node, a, dims):
    dims = [d % a.type.rank for d in dims]
    return ctx.emit("stablehlo.reverse", [a], a.type, f"dimensions = {i64_array(dims)}", dims=ctx.dims_of(a))


@register("aten.constant_pad_nd.default")
def _pad(ctx, node, a, pad, value=0):
    rank = a.type.rank
    lo, hi = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        lo[d], hi[d] = pad[2 * i], pad[2 * i + 1]
    out_dims = ctx.meta_dims(node)
    pv = ctx.b.constant(value, a.type.dtype)
    if all(is_static_dim(d) for d in out_dims):
        return ctx.emit("stablehlo.pad", [a, pv], ctx.tt(out_dims, a.type.dtype),
                        f"edge_padding_low = {i64_array(lo)}, edge_padding_high = {i64_array(hi)}, "
                        f"interior_padding = {i64_array([0] * rank)}")
    return ctx.emit("stablehlo.dynamic_pad", [a, pv, ctx.shape_tensor(lo), ctx.shape_tensor(hi),
                                              ctx.shape_tensor([0] * rank)],
                    ctx.tt(out_dims, a.type.dtype), dims=out_dims)


@register("aten.repeat.default")
def _repeat(ctx, node, a, repeats):
    # x.repeat(r): broadcast to [r0, d0, r1, d1, ...] and reshape to [r0*d0, r1*d1, ...]
    dims = ctx.dims_of(a)
    extra = len(repeats) - len(dims)
    dims = [1] * extra + dims
    a = ctx.reshape(a, dims)
    inter = []
    for r, d in zip(repeats, dims):
        inter += [r, d]
    b = ctx.broadcast_in_dim(a, inter, [2 * i + 1 for i in range(len(dims))])
    return ctx.reshape(b, ctx.meta_dims(node))


@register("aten.reflection_pad1d.default", "aten.reflection_pad2d.default", "aten.reflection_pad3d.default",
          "aten.replication_pad1d.default", "aten.replication_pad2d.default", "aten.replication_pad3d.default")
def _edge_pad(ctx, node, a, pad):
    """Reflection / replication padding as a gather of source positions along each padded dim."""
    from .resize import _take

    reflect = "reflection" in str(node.target)
    rank = a.type.rank
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        n = ctx.dims_of(a)[d]
        if not is_static_dim(n):
            raise LoweringError(f"padding the dynamic dimension {d}")
        pos = []
        for j in range(-lo, n + hi):
            if reflect:
                k = abs(j)
                k = 2 * (n - 1) - k if k > n - 1 else k
            else:
                k = min(max(j, 0), n - 1)
            pos.append(k)
        a = _take(ctx, a, d, pos)
    return a


def _dense_order(shape, strides):
    """The dimensions of a tensor in decreasing stride order when its elements fill a dense
    block of memory without overlap (contiguous up to a permutation), else None. Size-1
    dimensions, whose stride means nothing, go where they stand."""
    dims = [d for d in range(len(shape)) if shape[d] != 1]
    order = sorted(dims, key=lambda d: -strides[d])
    expect = 1
    for d in reversed(order):
        if strides[d] != expect:
            return None
        expect *= shape[d]
    out = list(order)
    for d in range(len(shape)):
        if shape[d] == 1:
            out.insert(min(d, len(out)), d)
    return out


@register("aten.as_strided.default", "aten.as_strided_copy.default")
def _as_strided(ctx, node, a, size, stride, storage_offset=None):
    """x.as_strided(size, stride, offset) over the memory of `x`, which must be dense (contiguous
    up to a permutation of its dimensions, as every tensor computed by the graph is): a reshape
    where the strides are the contiguous strides of `size`, a slice of the flattened tensor and a
    reshape where they are at an offset, a reshape and a transpose where they are a permutation
    of contiguous strides, and a gather of the flattened tensor at the computed positions
    otherwise (steps, overlapping windows)."""
    what = f"as_strided(size={list(size)}, stride={list(stride)}, storage_offset={storage_offset})"
    src = node.args[0].meta.get("val")
    size, stride = list(size), list(stride)
    in_shape = list(src.shape) if src is not None else []
    if not all(isinstance(d, int) for d in size + stride + in_shape) or (
            storage_offset is not None and not isinstance(storage_offset, int)):
        raise LoweringError(f"{what} with dynamic sizes, strides or offset")
    in_strides = list(src.stride())
    in_offset = src.storage_offset()
    if not isinstance(in_offset, int):
        raise LoweringError(f"{what} of a tensor with a dynamic storage offset")
    n = 1
    for d in in_shape:
        n *= d
    order = _dense_order(in_shape, in_strides) if n else list(range(len(in_shape)))
    if order is None:
        raise LoweringError(f"{what} of a tensor whose memory is not dense (shape {in_shape}, strides "
                            f"{in_strides}): its storage is not a value of the graph")
    offset = (in_offset if storage_offset is None else storage_offset) - in_offset
    numel = 1
    for d in size:
        numel *= d
    if numel == 0:
        return ctx.full(0, size, a.type.dtype)
    last = offset + sum((s - 1) * st for s, st in zip(size, stride))
    if offset < 0 or min(stride, default=0) < 0 or last >= n:
        raise LoweringError(f"{what} reads outside the {n} elements of its input (shape {in_shape}, strides "
                            f"{in_strides}, storage offset {in_offset})")
    flat = ctx.reshape(ctx.transpose(a, order), [n])  # the input's memory, in order
    out_order = _dense_order(size, stride)
    if out_order is not None:
        # Dense: a contiguous run of `numel` elements from `offset`, read in `out_order`.
        if offset or numel != n:
            flat = slice_dim(ctx, flat, 0, offset, offset + numel, 1)
        permuted = [size[d] for d in out_order]
        inverse = [out_order.index(d) for d in range(len(size))]
        return ctx.transpose(ctx.reshape(flat, permuted), inverse)
    # Anything else that stays inside the input: gather the positions offset + sum_j i_j * stride_j.
    pos = ctx.full(offset, size, "i64")
    for d, st in enumerate(stride):
        if size[d] != 1 and st:
            step = ctx.binary("stablehlo.multiply", ctx.iota(size, d, "i64"), ctx.full(st, size, "i64"))
            pos = ctx.binary("stablehlo.add", pos, step)
    from .indexing import gather

    idx = ctx.reshape(pos, size + [1])
    return gather(ctx, flat, idx, [], [0], [0], [1], size)
