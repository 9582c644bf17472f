"""Matrix products: mm, bmm, addmm, baddbmm, and general dot_general for matmul-shaped ops."""

from __future__ import annotations

from .context import Context
from .registry import register


def dot_general(ctx: Context, a, c, batch, contract_a, contract_c, result_dtype: str | None = None):
    """dot_general of `a` and `c`: result dims are batch, a's free dims, c's free dims; the result
    in `result_dtype` (a wider float than the operands': their f32 accumulator, unrounded) or in
    the operands' type."""
    da, dc = ctx.dims_of(a), ctx.dims_of(c)
    ba, bc = [x[0] for x in batch], [x[1] for x in batch]
    free_a = [i for i in range(len(da)) if i not in ba and i not in contract_a]
    free_c = [i for i in range(len(dc)) if i not in bc and i not in contract_c]
    dims = [da[i] for i in ba] + [da[i] for i in free_a] + [dc[i] for i in free_c]
    attrs = (f"dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = {list(ba)}, "
             f"rhs_batching_dimensions = {list(bc)}, lhs_contracting_dimensions = {list(contract_a)}, "
             f"rhs_contracting_dimensions = {list(contract_c)}>")
    return ctx.emit("stablehlo.dot_general", [a, c], ctx.tt(dims, result_dtype or a.type.dtype), attrs, dims=dims)


def _same_dtype(ctx, node, *vs):
    dtype = ctx.product_dtype(node)
    return [ctx.convert(v, dtype) for v in vs]


def _result(ctx, node, v):
    return ctx.convert(v, ctx.meta_dtype(node))


@register("aten.mm.default")
def _mm(ctx, node, a, c):
    a, c = _same_dtype(ctx, node, a, c)
    return _result(ctx, node, dot_general(ctx, a, c, [], [1], [0]))


@register("aten.bmm.default")
def _bmm(ctx, node, a, c):
    a, c = _same_dtype(ctx, node, a, c)
    return _result(ctx, node, dot_general(ctx, a, c, [(0, 0)], [2], [1]))


def _scaled_add(ctx, node, bias, prod, beta, alpha):
    dims = ctx.dims_of(prod)
    if alpha != 1:
        prod = ctx.binary("stablehlo.multiply", prod, ctx.scalar_like(alpha, prod))
    if beta == 0:
        return prod
    bias = ctx.as_tensor(bias, prod.type.dtype, dims)
    if beta != 1:
        bias = ctx.binary("stablehlo.multiply", bias, ctx.scalar_like(beta, bias))
    return ctx.binary("stablehlo.add", prod, bias)


def _product_plus_bias(ctx, node, bias, a, c, batch, contract_a, contract_c, beta, alpha):
    """beta * bias + alpha * (a . c). In bf16/f16 PyTorch adds the bias to the product's float32
    accumulator and rounds once (measured on the CPU and on an H100): the product stays f32 until
    the sum is rounded to the node's type. Rounding the product first would add a second rounding
    per layer, which compounds over a training run. The CUDA backend writes the f32 product and
    rounds the sum in the next fused kernel (src/backends/cuda/README.md says why not cuBLASLt's
    bias epilogue)."""
    a, c = _same_dtype(ctx, node, a, c)
    out = ctx.meta_dtype(node)
    if out in ("bf16", "f16") and a.type.dtype == out:
        prod = dot_general(ctx, a, c, batch, contract_a, contract_c, result_dtype="f32")
        return ctx.convert(_scaled_add(ctx, node, bias, prod, beta, alpha), out)
    return _scaled_add(ctx, node, bias, _result(ctx, node, dot_general(ctx, a, c, batch, contract_a, contract_c)),
                       beta, alpha)


@register("aten.addmm.default")
def _addmm(ctx, node, bias, a, c, beta=1, alpha=1):
    return _product_plus_bias(ctx, node, bias, a, c, [], [1], [0], beta, alpha)


@register("aten.baddbmm.default")
def _baddbmm(ctx, node, bias, a, c, beta=1, alpha=1):
    return _product_plus_bias(ctx, node, bias, a, c, [(0, 0)], [2], [1], beta, alpha)


@register("aten.dot.default", "aten.vdot.default")
def _dot(ctx, node, a, c):
    a, c = _same_dtype(ctx, node, a, c)
    return _result(ctx, node, dot_general(ctx, a, c, [], [0], [0]))


@register("aten.mv.default")
def _mv(ctx, node, a, c):
    a, c = _same_dtype(ctx, node, a, c)
    return _result(ctx, node, dot_general(ctx, a, c, [], [1], [0]))
