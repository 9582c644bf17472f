"""Elementwise ATen ops: arithmetic, math functions, comparisons, selection, conversion, and the
ops that create tensors (full, arange, scalar_tensor)."""

from __future__ import annotations

import math

from ..mlir import Value, is_float
from .context import Context, LoweringError, SymArg, result_dtype
from .registry import register


def _operands(ctx: Context, node, dtype: str, *xs):
    dims = ctx.meta_dims(node)
    return [ctx.as_tensor(x, dtype, dims) for x in xs]


def _binary(op: str):
    def lower(ctx: Context, node, a, c):
        dtype = ctx.meta_dtype(node)
        x, y = _operands(ctx, node, dtype, a, c)
        return ctx.binary(op, x, y)

    return lower


for _name, _op in [("mul", "stablehlo.multiply"), ("maximum", "stablehlo.maximum"),
                   ("minimum", "stablehlo.minimum"), ("bitwise_and", "stablehlo.and"),
                   ("bitwise_or", "stablehlo.or"), ("bitwise_xor", "stablehlo.xor"),
                   ("atan2", "stablehlo.atan2")]:
    register(f"aten.{_name}.Tensor", f"aten.{_name}.Scalar", f"aten.{_name}.default")(_binary(_op))

for _name, _op in [("logical_and", "stablehlo.and"), ("logical_or", "stablehlo.or"), ("logical_xor", "stablehlo.xor")]:
    def _logical(ctx, node, a, c, _op=_op):
        x, y = _operands(ctx, node, "i1", a, c)
        return ctx.binary(_op, x, y)

    register(f"aten.{_name}.default")(_logical)


@register("aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar")
def _add_sub(ctx: Context, node, a, c, alpha=1):
    dtype = ctx.meta_dtype(node)
    x, y = _operands(ctx, node, dtype, a, c)
    if alpha != 1:
        y = ctx.binary("stablehlo.multiply", y, ctx.scalar_like(alpha, y))
    op = "stablehlo.add" if "add" in str(node.target) else "stablehlo.subtract"
    return ctx.binary(op, x, y)


@register("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(ctx: Context, node, a, c, alpha=1):
    dtype = ctx.meta_dtype(node)
    x, y = _operands(ctx, node, dtype, a, c)
    if alpha != 1:
        x = ctx.binary("stablehlo.multiply", x, ctx.scalar_like(alpha, x))
    return ctx.binary("stablehlo.subtract", y, x)


@register("aten.div.Tensor", "aten.div.Scalar", "aten.div.Tensor_mode", "aten.div.Scalar_mode")
def _div(ctx: Context, node, a, c, rounding_mode=None):
    dtype = ctx.meta_dtype(node)
    x, y = _operands(ctx, node, dtype, a, c)
    q = ctx.binary("stablehlo.divide", x, y)
    if rounding_mode is None or (rounding_mode == "trunc" and not is_float(dtype)):
        return q
    if rounding_mode == "trunc":
        return _trunc(ctx, q)
    if rounding_mode == "floor":
        if is_float(dtype):
            return ctx.unary("stablehlo.floor", q)
        return _int_floor_adjust(ctx, x, y, q)
    raise LoweringError(f"div rounding_mode={rounding_mode!r}")


def _trunc(ctx, v):
    neg = ctx.compare(v, ctx.scalar_like(0, v), "LT")
    return ctx.select(neg, ctx.unary("stablehlo.ceil", v), ctx.unary("stablehlo.floor", v))


def _int_floor_adjust(ctx, x, y, q):
    r = ctx.binary("stablehlo.subtract", x, ctx.binary("stablehlo.multiply", q, y))
    zero = ctx.scalar_like(0, r)
    nonzero = ctx.compare(r, zero, "NE")
    sign_differs = ctx.compare(ctx.compare(r, zero, "LT"), ctx.compare(y, ctx.scalar_like(0, y), "LT"), "NE")
    fix = ctx.binary("stablehlo.and", nonzero, sign_differs)
    return ctx.select(fix, ctx.binary("stablehlo.subtract", q, ctx.scalar_like(1, q)), q)


@register("aten.floor_divide.default", "aten.floor_divide.Scalar")
def _floor_divide(ctx, node, a, c):
    return _div(ctx, node, a, c, rounding_mode="floor")


@register("aten.remainder.Tensor", "aten.remainder.Scalar", "aten.fmod.Tensor", "aten.fmod.Scalar")
def _remainder(ctx, node, a, c):
    dtype = ctx.meta_dtype(node)
    x, y = _operands(ctx, node, dtype, a, c)
    r = ctx.binary("stablehlo.remainder", x, y)  # sign of the dividend (fmod)
    if "fmod" in str(node.target):
        return r
    zero = ctx.scalar_like(0, r)
    fix = ctx.binary("stablehlo.and", ctx.compare(r, zero, "NE"),
                     ctx.compare(ctx.compare(r, zero, "LT"), ctx.compare(y, ctx.scalar_like(0, y), "LT"), "NE"))
    return ctx.select(fix, ctx.binary("stablehlo.add", r, y), r)


@register("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar")
def _pow(ctx: Context, node, a, c):
    dtype = ctx.meta_dtype(node)
    if isinstance(c, (int, float)) and not isinstance(c, bool) and isinstance(a, Value):
        (x,) = _operands(ctx, node, dtype, a)
        if c == 2:
            return ctx.binary("stablehlo.multiply", x, x)
        if c == 1:
            return x
        if c == 0.5 and is_float(dtype):
            return ctx.unary("stablehlo.sqrt", x)
        if c == -0.5 and is_float(dtype):
            return ctx.unary("stablehlo.rsqrt", x)
        if c == 3:
            return ctx.binary("stablehlo.multiply", ctx.binary("stablehlo.multiply", x, x), x)
    x, y = _operands(ctx, node, dtype, a, c)
    return ctx.binary("stablehlo.power", x, y)


def _unary(op: str, float_only: bool = True):
    def lower(ctx: Context, node, a):
        dtype = ctx.meta_dtype(node)
        (x,) = _operands(ctx, node, dtype, a)
        if float_only and not is_float(dtype):
            raise LoweringError(f"{node.target} on {dtype}")
        return ctx.unary(op, x)

    return lower


for _name, _op in [("exp", "stablehlo.exponential"), ("log", "stablehlo.log"), ("sqrt", "stablehlo.sqrt"),
                   ("rsqrt", "stablehlo.rsqrt"), ("tanh", "stablehlo.tanh"), ("sigmoid", "stablehlo.logistic"),
                   ("sin", "stablehlo.sine"), ("cos", "stablehlo.cosine"), ("tan", "stablehlo.tan"),
                   ("log1p", "stablehlo.log_plus_one"), ("expm1", "stablehlo.exponential_minus_one"),
                   ("floor", "stablehlo.floor"), ("ceil", "stablehlo.ceil"),
                   ("round", "stablehlo.round_nearest_even"), ("erf", "chlo.erf"), ("asin", "chlo.asin"),
                   ("acos", "chlo.acos"), ("atan", "chlo.atan"), ("sinh", "chlo.sinh"), ("cosh", "chlo.cosh"),
                   ("asinh", "chlo.asinh"), ("acosh", "chlo.acosh"), ("atanh", "chlo.atanh"),
                   ("erfinv", "chlo.erf_inv"), ("lgamma", "chlo.lgamma"), ("digamma", "chlo.digamma")]:
    register(f"aten.{_name}.default")(_unary(_op))

for _name, _op in [("neg", "stablehlo.negate"), ("abs", "stablehlo.abs"), ("sign", "stablehlo.sign"),
                   ("bitwise_not", "stablehlo.not")]:
    register(f"aten.{_name}.default")(_unary(_op, float_only=False))


@register("aten.trunc.default")
def _trunc_op(ctx, node, a):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    return _trunc(ctx, x) if is_float(x.type.dtype) else x


@register("aten.log2.default", "aten.log10.default")
def _log_base(ctx, node, a):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    base = 2.0 if "log2" in str(node.target) else 10.0
    return ctx.binary("stablehlo.divide", ctx.unary("stablehlo.log", x), ctx.scalar_like(math.log(base), x))


@register("aten.isinf.default")
def _isinf(ctx, node, a):
    if not is_float(a.type.dtype):
        return ctx.full(False, ctx.dims_of(a), "i1")
    return ctx.compare(ctx.unary("stablehlo.abs", a), ctx.scalar_like(float("inf"), a), "EQ")


@register("aten.nan_to_num.default")
def _nan_to_num(ctx, node, a, nan=0.0, posinf=None, neginf=None):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    import torch

    finfo = torch.finfo({"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
                         "bf16": torch.bfloat16}[ctx.storage_dtype(node)])
    posinf = finfo.max if posinf is None else posinf
    neginf = finfo.min if neginf is None else neginf
    x = ctx.select(ctx.compare(x, x, "NE"), ctx.scalar_like(nan, x), x)
    x = ctx.select(ctx.compare(x, ctx.scalar_like(float("inf"), x), "EQ"), ctx.scalar_like(posinf, x), x)
    return ctx.select(ctx.compare(x, ctx.scalar_like(float("-inf"), x), "EQ"), ctx.scalar_like(neginf, x), x)


@register("aten.logical_not.default")
def _logical_not(ctx, node, a):
    x = ctx.convert(a, "i1")
    return ctx.unary("stablehlo.not", x)


@register("aten.reciprocal.default")
def _reciprocal(ctx, node, a):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    return ctx.binary("stablehlo.divide", ctx.scalar_like(1, x), x)


@register("aten.exp2.default")
def _exp2(ctx, node, a):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    return ctx.unary("stablehlo.exponential", ctx.binary("stablehlo.multiply", x, ctx.scalar_like(math.log(2), x)))


@register("aten.relu.default")
def _relu(ctx, node, a):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    return ctx.binary("stablehlo.maximum", x, ctx.scalar_like(0, x))


def _in_float(ctx, node, a, fn):
    """An activation PyTorch's kernels compute in float for bf16/f16 inputs, rounding once at the
    end (their opmath type): computed the same way here, instead of rounding after each op of its
    expansion (gelu's erf form would round four times, adding noise a bf16 training run carries)."""
    out = ctx.meta_dtype(node)
    (x,) = _operands(ctx, node, out, a)
    acc = "f32" if out in ("bf16", "f16") else out
    return ctx.convert(fn(ctx.convert(x, acc)), out)


@register("aten.silu.default")
def _silu(ctx, node, a):
    return _in_float(ctx, node, a, lambda x: ctx.binary("stablehlo.multiply", x, ctx.unary("stablehlo.logistic", x)))


def _gelu_of(ctx, x, approximate):
    half = ctx.binary("stablehlo.multiply", x, ctx.scalar_like(0.5, x))
    if approximate == "tanh":
        x3 = ctx.binary("stablehlo.multiply", ctx.binary("stablehlo.multiply", x, x), x)
        inner = ctx.binary("stablehlo.add", x, ctx.binary("stablehlo.multiply", x3, ctx.scalar_like(0.044715, x)))
        inner = ctx.binary("stablehlo.multiply", inner, ctx.scalar_like(math.sqrt(2 / math.pi), x))
        t = ctx.unary("stablehlo.tanh", inner)
    elif approximate == "none":
        t = ctx.unary("chlo.erf", ctx.binary("stablehlo.multiply", x, ctx.scalar_like(math.sqrt(0.5), x)))
    else:
        raise LoweringError(f"gelu approximate={approximate!r}")
    return ctx.binary("stablehlo.multiply", half, ctx.binary("stablehlo.add", t, ctx.scalar_like(1, t)))


@register("aten.gelu.default")
def _gelu(ctx, node, a, approximate="none"):
    return _in_float(ctx, node, a, lambda x: _gelu_of(ctx, x, approximate))


def _clamp_impl(ctx, node, a, lo, hi):
    dtype = ctx.meta_dtype(node)
    (x,) = _operands(ctx, node, dtype, a)
    if lo is not None:
        x = ctx.binary("stablehlo.maximum", x, ctx.as_tensor(lo, dtype, ctx.dims_of(x)))
    if hi is not None:
        x = ctx.binary("stablehlo.minimum", x, ctx.as_tensor(hi, dtype, ctx.dims_of(x)))
    return x


@register("aten.clamp.default", "aten.clamp.Tensor")
def _clamp(ctx, node, a, min=None, max=None):
    return _clamp_impl(ctx, node, a, min, max)


@register("aten.clamp_min.default", "aten.clamp_min.Tensor")
def _clamp_min(ctx, node, a, lo):
    return _clamp_impl(ctx, node, a, lo, None)


@register("aten.clamp_max.default", "aten.clamp_max.Tensor")
def _clamp_max(ctx, node, a, hi):
    return _clamp_impl(ctx, node, a, None, hi)


@register("aten.hardtanh.default")
def _hardtanh(ctx, node, a, min_val=-1.0, max_val=1.0):
    return _clamp_impl(ctx, node, a, min_val, max_val)


def _hardsigmoid_of(ctx, x):
    y = ctx.binary("stablehlo.add", x, ctx.scalar_like(3, x))
    y = ctx.binary("stablehlo.minimum", ctx.binary("stablehlo.maximum", y, ctx.scalar_like(0, y)), ctx.scalar_like(6, y))
    return ctx.binary("stablehlo.divide", y, ctx.scalar_like(6, y))


@register("aten.hardsigmoid.default")
def _hardsigmoid(ctx, node, a):
    return _in_float(ctx, node, a, lambda x: _hardsigmoid_of(ctx, x))


@register("aten.hardswish.default")
def _hardswish(ctx, node, a):
    return _in_float(ctx, node, a, lambda x: ctx.binary("stablehlo.multiply", x, _hardsigmoid_of(ctx, x)))


@register("aten.leaky_relu.default")
def _leaky_relu(ctx, node, a, negative_slope=0.01):
    (x,) = _operands(ctx, node, ctx.meta_dtype(node), a)
    pos = ctx.compare(x, ctx.scalar_like(0, x), "GT")
    return ctx.select(pos, x, ctx.binary("stablehlo.multiply", x, ctx.scalar_like(negative_slope, x)))


@register("aten.elu.default")
def _elu(ctx, node, a, alpha=1.0, scale=1.0, input_scale=1.0):
    def elu(x):
        neg = ctx.unary("stablehlo.exponential_minus_one", ctx.binary("stablehlo.multiply", x, ctx.scalar_like(input_scale, x)))
        neg = ctx.binary("stablehlo.multiply", neg, ctx.scalar_like(alpha, x))
        y = ctx.select(ctx.compare(x, ctx.scalar_like(0, x), "GT"), x, neg)
        return ctx.binary("stablehlo.multiply", y, ctx.scalar_like(scale, y)) if scale != 1 else y

    return _in_float(ctx, node, a, elu)


_COMPARE = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
for _name, _dir in _COMPARE.items():
    def _cmp(ctx, node, a, c, _dir=_dir):
        dtype = result_dtype(a, c)
        x, y = _operands(ctx, node, dtype, a, c)
        return ctx.compare(x, y, _dir)

    register(f"aten.{_name}.Tensor", f"aten.{_name}.Scalar")(_cmp)


@register("aten.isnan.default")
def _isnan(ctx, node, a):
    return ctx.compare(a, a, "NE")


@register("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def _where(ctx, node, cond, a, c):
    dtype = ctx.meta_dtype(node)
    dims = ctx.meta_dims(node)
    p = ctx.broadcast(ctx.convert(cond, "i1"), dims)
    x, y = _operands(ctx, node, dtype, a, c)
    return ctx.select(p, x, y)


@register("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(ctx, node, a, mask, value):
    dtype = ctx.meta_dtype(node)
    dims = ctx.meta_dims(node)
    p = ctx.broadcast(ctx.convert(mask, "i1"), dims)
    x, y = _operands(ctx, node, dtype, a, value)
    return ctx.select(p, y, x)


@register("aten._to_copy.default")
def _to_copy(ctx, node, a, **kwargs):
    return ctx.convert(a, ctx.meta_dtype(node))


@register("aten.clone.default", "aten.alias.default", "aten.detach.default", "aten.lift_fresh_copy.default",
          "aten.contiguous.default")
def _identity(ctx, node, a, **kwargs):
    return a


@register("aten.copy.default")
def _copy(ctx, node, dst, src, non_blocking=False):
    return ctx.as_tensor(src, ctx.meta_dtype(node), ctx.meta_dims(node))


@register("aten.fill.Scalar", "aten.fill.Tensor")
def _fill(ctx, node, a, value):
    return ctx.as_tensor(value, ctx.meta_dtype(node), ctx.meta_dims(node))


# ---- creation -------------------------------------------------------------------------------
def _fill_node(ctx, node, value):
    return ctx.as_tensor(value, ctx.meta_dtype(node), ctx.meta_dims(node))


@register("aten.full.default")
def _full(ctx, node, size, fill_value, **kwargs):
    return _fill_node(ctx, node, fill_value)


@register("aten.full_like.default")
def _full_like(ctx, node, a, fill_value, **kwargs):
    return _fill_node(ctx, node, fill_value)


@register("aten.zeros.default", "aten.zeros_like.default", "aten.new_zeros.default",
          "aten.empty.memory_format", "aten.empty_like.default", "aten.new_empty.default",
          "aten.empty_strided.default", "aten.new_empty_strided.default")
def _zeros(ctx, node, *args, **kwargs):
    return _fill_node(ctx, node, 0)


@register("aten.ones.default", "aten.ones_like.default", "aten.new_ones.default")
def _ones(ctx, node, *args, **kwargs):
    return _fill_node(ctx, node, 1)


@register("aten.new_full.default")
def _new_full(ctx, node, a, size, fill_value, **kwargs):
    return _fill_node(ctx, node, fill_value)


@register("aten.scalar_tensor.default")
def _scalar_tensor(ctx, node, value, **kwargs):
    return _fill_node(ctx, node, value)


@register("aten.arange.start_step", "aten.arange.start", "aten.arange.default")
def _arange(ctx, node, *args, **kwargs):
    if str(node.target) == "aten.arange.default":
        start, step = 0, 1
    else:
        start = args[0]
        step = args[2] if len(args) > 2 else kwargs.get("step", 1)
    dtype = ctx.meta_dtype(node)
    dims = ctx.meta_dims(node)
    idx = ctx.iota(dims, 0, dtype)
    if step != 1:
        idx = ctx.binary("stablehlo.multiply", idx, ctx.as_tensor(step, dtype, dims))
    if not (isinstance(start, (int, float)) and start == 0):
        idx = ctx.binary("stablehlo.add", idx, ctx.as_tensor(start, dtype, dims))
    return idx


@register("aten._assert_tensor_metadata.default", "aten._assert_scalar.default",
          "aten.sym_constrain_range_for_size.default", "aten._assert_async.msg")
def _assert(ctx, node, *args, **kwargs):
    return None


@register("aten.sym_size.int", "<built-in function mul>", "<built-in function add>", "<built-in function sub>",
          "<built-in function floordiv>", "aten.sym_numel.default")
def _sym(ctx, node, *args, **kwargs):
    return SymArg(node.meta["val"].node.expr) if hasattr(node.meta["val"], "node") else int(node.meta["val"])
