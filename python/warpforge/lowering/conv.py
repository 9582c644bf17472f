"""Convolution (aten.convolution: 1-D, 2-D, 3-D, strided, dilated, padded, grouped, transposed)."""

from __future__ import annotations

from ..mlir import i64_array
from .context import Context, LoweringError, dense_i64_matrix
from .registry import register


@register("aten.convolution.default")
def _convolution(ctx: Context, node, x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    dtype = ctx.product_dtype(node)
    x, w = ctx.convert(x, dtype), ctx.convert(w, dtype)
    nsp = x.type.rank - 2
    if nsp < 1:
        raise LoweringError(f"convolution of a rank-{x.type.rank} input")
    stride = _expand(stride, nsp)
    padding = _expand(padding, nsp)
    dilation = _expand(dilation, nsp)
    out_dims = ctx.meta_dims(node)
    wd = ctx.dims_of(w)
    spatial = list(range(2, 2 + nsp))
    sp = ", ".join(str(i) for i in range(nsp))
    if not transposed:
        # input [b, f, s...], kernel [o, i, s...], output [b, f, s...]
        dn = f"#stablehlo.conv<[b, f, {sp}]x[o, i, {sp}]->[b, f, {sp}]>"
        pads = [[p, p] for p in padding]
        attrs = (f"dimension_numbers = {dn}, window_strides = {i64_array(stride)}, padding = {dense_i64_matrix(pads)}, "
                 f"lhs_dilation = {i64_array([1] * nsp)}, rhs_dilation = {i64_array(dilation)}, "
                 f"feature_group_count = {groups} : i64, batch_group_count = 1 : i64")
        kernel = w
    else:
        # A transposed convolution is a convolution of the input dilated by `stride` with the
        # kernel flipped spatially and its in/out features swapped (per group).
        output_padding = _expand(output_padding, nsp)
        cin, cout_g = wd[0], wd[1]
        ks = wd[2:]
        if groups > 1:
            # [g*cin_g, cout_g, k...] -> [g, cin_g, cout_g, k...] -> [g, cout_g, cin_g, k...] -> [g*cout_g, cin_g, k...]
            cin_g = cin // groups
            k = ctx.reshape(w, [groups, cin_g, cout_g] + ks)
            k = ctx.transpose(k, [0, 2, 1] + [3 + i for i in range(nsp)])
            kernel = ctx.reshape(k, [groups * cout_g, cin_g] + ks)
        else:
            kernel = ctx.transpose(w, [1, 0] + spatial)
        kernel = ctx.emit("stablehlo.reverse", [kernel], kernel.type, f"dimensions = {i64_array(spatial)}",
                          dims=ctx.dims_of(kernel))
        pads = [[dilation[i] * (ks[i] - 1) - padding[i], dilation[i] * (ks[i] - 1) - padding[i] + output_padding[i]]
                for i in range(nsp)]
        dn = f"#stablehlo.conv<[b, f, {sp}]x[o, i, {sp}]->[b, f, {sp}]>"
        attrs = (f"dimension_numbers = {dn}, window_strides = {i64_array([1] * nsp)}, "
                 f"padding = {dense_i64_matrix(pads)}, lhs_dilation = {i64_array(stride)}, "
                 f"rhs_dilation = {i64_array(dilation)}, feature_group_count = {groups} : i64, "
                 f"batch_group_count = 1 : i64")
    y = ctx.emit("stablehlo.convolution", [x, kernel], ctx.tt(out_dims, dtype), attrs, dims=out_dims)
    dtype = ctx.meta_dtype(node)
    y = ctx.convert(y, dtype)
    if bias is not None:
        b = ctx.convert(bias, dtype)
        y = ctx.binary("stablehlo.add", y, ctx.broadcast_in_dim(b, out_dims, [1]))
    return y


def _expand(v, n):
    v = list(v)
    return v * n if len(v) == 1 else v
