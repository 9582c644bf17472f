"""The state shared by every lowering: the builder, the values of graph nodes, and helpers that
emit the static op where shapes are static and the stablehlo dynamic op where a dimension is
dynamic (`?`), computing dynamic sizes from the symbolic sizes torch.export records."""

from __future__ import annotations

import sympy
import torch

from ..mlir import DYN, Builder, TensorType, Value, dense_splat, element_type, i64_array, is_float, is_unsigned

Dims = list  # each entry an int or a sympy expression over the dynamic input sizes


class LoweringError(Exception):
    """An op, or a variant of an op, that the lowering cannot express; the message names it."""


class SymArg:
    """A symbolic integer argument (a SymInt node of the graph)."""

    def __init__(self, expr):
        self.expr = expr

    def __repr__(self):
        return f"SymArg({self.expr})"


class Unavailable:
    """An output of a multi-output op that the lowering does not compute (e.g. max_pool indices)."""

    def __init__(self, what: str):
        self.what = what


def to_expr(d):
    """int | SymInt | sympy -> int or a non-constant sympy expression."""
    if isinstance(d, torch.SymInt):
        d = d.node.expr
    if isinstance(d, sympy.Expr):
        if d.is_Integer:
            return int(d)
        return d
    return int(d)


def is_static_dim(d) -> bool:
    return isinstance(d, int)


class Context:
    def __init__(self, builder: Builder):
        self.b = builder
        self.values: dict = {}  # fx node -> Value | tuple | SymArg | Unavailable
        self.symbol_sources: dict = {}  # sympy.Symbol -> (Value, dim)
        self._sym_cache: dict = {}
        self.node = None  # the node being lowered (for error messages)
        self.low = None  # "bf16" / "f16" in a low-precision export
        self.rng = None  # random.RandomStream of a training program (dropout)

    # ---- types and dims -------------------------------------------------------------------
    @staticmethod
    def tt(dims, dtype: str) -> TensorType:
        return TensorType(tuple(d if is_static_dim(d) else DYN for d in dims), dtype)

    @staticmethod
    def meta_dims(node) -> Dims:
        val = node.meta["val"]
        return [to_expr(d) for d in val.shape]

    @staticmethod
    def meta_dims_of_val(val) -> Dims:
        return [to_expr(d) for d in val.shape]

    def meta_dtype_of_val(self, val) -> str:
        """The element type a value is computed in: the model's, except that in a low-precision
        export (`self.low`) values of the low type are computed in f32."""
        et = element_type(val.dtype)
        return "f32" if self.low and et == self.low else et

    def meta_dtype(self, node) -> str:
        return self.meta_dtype_of_val(node.meta["val"])

    def storage_dtype(self, node) -> str:
        return element_type(node.meta["val"].dtype)

    def product_dtype(self, node) -> str:
        """Operand type of a matmul/convolution node: the low type where the model computes it
        in the low type (accumulation is f32 in every backend), else the node's type."""
        et = self.storage_dtype(node)
        return et if self.low and et == self.low else self.meta_dtype(node)

    def node_type(self, node) -> TensorType:
        return self.tt(self.meta_dims(node), self.meta_dtype(node))

    def dims_of(self, v: Value) -> Dims:
        dims = getattr(v, "dims", None)
        if dims is not None:
            return list(dims)
        if v.type.is_static:
            return list(v.type.shape)
        raise LoweringError(f"internal: the sizes of {v!r} are not known")

    def emit(self, name, operands, result_type, attrs="", region=None, dims=None) -> Value:
        v = self.b.op(name, operands, result_type, attrs, region)
        v.dims = list(dims) if dims is not None else (list(result_type.shape) if result_type.is_static else None)
        return v

    # ---- symbolic sizes -----------------------------------------------------------------------
    def add_symbol_source(self, value: Value, dims: Dims):
        for i, d in enumerate(dims):
            if isinstance(d, sympy.Symbol) and d not in self.symbol_sources:
                self.symbol_sources[d] = (value, i)

    def sym_value(self, expr) -> Value:
        """A tensor<i64> holding the runtime value of `expr`."""
        expr = to_expr(expr) if not isinstance(expr, sympy.Expr) else expr
        if isinstance(expr, int) or (isinstance(expr, sympy.Expr) and expr.is_Integer):
            return self.b.constant(int(expr), "i64")
        key = sympy.srepr(expr)
        if key in self._sym_cache:
            return self._sym_cache[key]
        scalar = TensorType((), "i64")
        if isinstance(expr, sympy.Symbol):
            if expr not in self.symbol_sources:
                raise LoweringError(f"dynamic size {expr} is not the size of any input")
            src, dim = self.symbol_sources[expr]
            size = self.emit("stablehlo.get_dimension_size", [src], TensorType((), "i32"), f"dimension = {dim} : i64")
            out = self.emit("stablehlo.convert", [size], scalar)
        elif isinstance(expr, (sympy.Add, sympy.Mul)):
            op = "stablehlo.add" if isinstance(expr, sympy.Add) else "stablehlo.multiply"
            args = [self.sym_value(a) for a in expr.args]
            out = args[0]
            for a in args[1:]:
                out = self.emit(op, [out, a], scalar)
        elif type(expr).__name__ in ("FloorDiv", "CleanDiv", "IntTrueDiv") and len(expr.args) == 2:
            a, c = (self.sym_value(x) for x in expr.args)
            out = self.emit("stablehlo.divide", [a, c], scalar)  # sizes are non-negative
        elif type(expr).__name__ in ("Mod", "PythonMod") and len(expr.args) == 2:
            a, c = (self.sym_value(x) for x in expr.args)
            out = self.emit("stablehlo.remainder", [a, c], scalar)
        elif isinstance(expr, sympy.Pow) and expr.args[1].is_Integer and int(expr.args[1]) > 0:
            base = self.sym_value(expr.args[0])
            out = base
            for _ in range(int(expr.args[1]) - 1):
                out = self.emit("stablehlo.multiply", [out, base], scalar)
        else:
            raise LoweringError(f"cannot compute the dynamic size expression {expr} ({type(expr).__name__})")
        self._sym_cache[key] = out
        return out

    def shape_tensor(self, dims) -> Value:
        """tensor<Nxi64> with the sizes `dims` (constant when all are static)."""
        if all(is_static_dim(d) for d in dims):
            return self.b.constant_list([int(d) for d in dims], "i64")
        parts = []
        for d in dims:
            s = self.sym_value(d)
            parts.append(self.emit("stablehlo.reshape", [s], TensorType((1,), "i64")))
        if len(parts) == 1:
            return parts[0]
        return self.emit("stablehlo.concatenate", parts, TensorType((len(dims),), "i64"), "dimension = 0 : i64")

    # ---- basic ops ----------------------------------------------------------------------------
    def convert(self, v: Value, dtype: str) -> Value:
        if v.type.dtype == dtype:
            return v
        if dtype == "i1" and v.type.dtype != "i1":
            zero = self.full(0, self.dims_of(v), v.type.dtype)
            return self.compare(v, zero, "NE")
        return self.emit("stablehlo.convert", [v], v.type.with_dtype(dtype), dims=self.dims_of(v))

    def full(self, value, dims, dtype: str) -> Value:
        if all(is_static_dim(d) for d in dims):
            return self.b.constant(value, dtype, dims)
        scalar = self.b.constant(value, dtype)
        return self.broadcast_in_dim(scalar, dims, [])

    def broadcast_in_dim(self, v: Value, dims, bdims) -> Value:
        t = self.tt(dims, v.type.dtype)
        if all(is_static_dim(d) for d in dims):
            return self.emit("stablehlo.broadcast_in_dim", [v], t, f"broadcast_dimensions = {i64_array(bdims)}")
        shape = self.shape_tensor(dims)
        return self.emit("stablehlo.dynamic_broadcast_in_dim", [v, shape], t,
                         f"broadcast_dimensions = {i64_array(bdims)}", dims=dims)

    def broadcast(self, v: Value, dims) -> Value:
        """Numpy-style broadcast of `v` to `dims` (trailing dimensions aligned)."""
        have = self.dims_of(v)
        if [_key(d) for d in have] == [_key(d) for d in dims]:
            return v
        r, n = len(have), len(dims)
        if r > n:
            raise LoweringError(f"cannot broadcast {v.type} to rank {n}")
        return self.broadcast_in_dim(v, dims, list(range(n - r, n)))

    def reshape(self, v: Value, dims) -> Value:
        have = self.dims_of(v)
        if [_key(d) for d in have] == [_key(d) for d in dims]:
            return v
        t = self.tt(dims, v.type.dtype)
        if all(is_static_dim(d) for d in dims):
            return self.emit("stablehlo.reshape", [v], t)
        return self.emit("stablehlo.dynamic_reshape", [v, self.shape_tensor(dims)], t, dims=dims)

    def transpose(self, v: Value, perm) -> Value:
        perm = list(perm)
        if perm == list(range(len(perm))):
            return v
        have = self.dims_of(v)
        dims = [have[p] for p in perm]
        return self.emit("stablehlo.transpose", [v], self.tt(dims, v.type.dtype),
                         f"permutation = {i64_array(perm)}", dims=dims)

    def iota(self, dims, dim: int, dtype: str) -> Value:
        t = self.tt(dims, dtype)
        if all(is_static_dim(d) for d in dims):
            return self.emit("stablehlo.iota", [], t, f"iota_dimension = {dim} : i64")
        return self.emit("stablehlo.dynamic_iota", [self.shape_tensor(dims)], t, f"iota_dimension = {dim} : i64",
                         dims=dims)

    def unary(self, name: str, v: Value) -> Value:
        return self.emit(name, [v], v.type, dims=self.dims_of(v))

    def binary(self, name: str, a: Value, c: Value) -> Value:
        return self.emit(name, [a, c], a.type, dims=self.dims_of(a))

    def compare(self, a: Value, c: Value, direction: str) -> Value:
        et = a.type.dtype
        kind = "FLOAT" if is_float(et) else ("UNSIGNED" if is_unsigned(et) else "SIGNED")
        return self.emit("stablehlo.compare", [a, c], a.type.with_dtype("i1"),
                         f"comparison_direction = #stablehlo<comparison_direction {direction}>, "
                         f"compare_type = #stablehlo<comparison_type {kind}>", dims=self.dims_of(a))

    def select(self, pred: Value, on_true: Value, on_false: Value) -> Value:
        return self.emit("stablehlo.select", [pred, on_true, on_false], on_true.type, dims=self.dims_of(on_true))

    def scalar_like(self, value, v: Value) -> Value:
        return self.full(value, self.dims_of(v), v.type.dtype)

    def reduce(self, v: Value, axes, init, body_op: str) -> Value:
        """Reduces `v` over `axes` with the binary op `body_op` starting at the scalar `init`."""
        axes = sorted(a % v.type.rank for a in axes)
        if not axes:
            return v
        dtype = v.type.dtype
        have = self.dims_of(v)
        dims = [d for i, d in enumerate(have) if i not in axes]
        init_v = self.b.constant(init, dtype)
        region = self.b.scalar_region(body_op, dtype)
        return self.emit("stablehlo.reduce", [v, init_v], self.tt(dims, dtype),
                         f"dimensions = {i64_array(axes)}", region=region, dims=dims)

    def as_tensor(self, x, dtype: str, dims) -> Value:
        """`x` (a Value, a Python number or a SymArg) as a tensor of `dtype` broadcast to `dims`."""
        if isinstance(x, Value):
            return self.broadcast(self.convert(x, dtype), dims)
        if isinstance(x, SymArg):
            return self.broadcast(self.convert(self.sym_value(x.expr), dtype), dims)
        if isinstance(x, (bool, int, float)):
            return self.full(x, dims, dtype)
        raise LoweringError(f"expected a tensor or a number, got {type(x).__name__}")


def _key(d):
    return d if is_static_dim(d) else sympy.srepr(d)


def result_dtype(*args) -> str:
    """ATen's type promotion over Values and Python scalars, as a StableHLO element type."""
    from ..mlir import _DTYPES

    back = {v: k for k, v in _DTYPES.items()}
    probes = []
    for a in args:
        if isinstance(a, Value):
            probes.append(torch.empty((1,) * min(a.type.rank, 1), dtype=back[a.type.dtype]))
        elif isinstance(a, SymArg):
            probes.append(1)
        elif isinstance(a, (bool, int, float)):
            probes.append(a)
    if not probes:
        raise LoweringError("no operand to promote")
    out = probes[0] if isinstance(probes[0], torch.Tensor) else torch.tensor(probes[0])
    dtype = out.dtype
    for p in probes[1:]:
        dtype = torch.result_type(out, p)
        out = torch.empty((1,) if (isinstance(out, torch.Tensor) and out.dim()) or
                          (isinstance(p, torch.Tensor) and p.dim()) else (), dtype=dtype)
    return element_type(dtype)


def dense_i64_matrix(rows) -> str:
    n = len(rows)
    body = ", ".join("[" + ", ".join(str(int(x)) for x in r) + "]" for r in rows)
    return f"dense<[{body}]> : tensor<{n}x{len(rows[0]) if rows else 0}xi64>" if n else "dense<> : tensor<0x2xi64>"


__all__ = ["Context", "LoweringError", "SymArg", "Unavailable", "to_expr", "is_static_dim", "result_dtype",
           "dense_i64_matrix", "dense_splat"]
