"""A small builder for StableHLO text: tensor types, SSA values and ops in MLIR's generic form.

Values are objects whose names are fixed only when the module is rendered, so that a value can be
renamed after the op that defines it was emitted (the exporter names the outputs of recorded
modules after their path)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

# torch dtype -> StableHLO element type name.
_DTYPES = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.float64: "f64",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "ui8",
    torch.bool: "i1",
}

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
DYN = None  # a dynamic dimension in a shape list


def element_type(dtype: torch.dtype) -> str:
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise TypeError(f"torch dtype {dtype} has no StableHLO element type in the exporter") from None


def is_float(et: str) -> bool:
    return et in FLOAT_TYPES


def is_unsigned(et: str) -> bool:
    return et.startswith("ui") or et == "i1"


@dataclass(frozen=True)
class TensorType:
    shape: tuple  # ints, or DYN for a dynamic dimension
    dtype: str

    def __str__(self) -> str:
        dims = "".join(("?" if d is DYN else str(d)) + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not DYN for d in self.shape)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(self.shape, dtype)

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)


_SSA_ID = re.compile(r"^(?:[0-9]+|[A-Za-z_$.\-][A-Za-z0-9_$.\-]*)$")


def ssa_id(name: str) -> str:
    """`name` made into a valid MLIR SSA suffix id (letters, digits, `$._-`; not starting with a
    digit unless all digits)."""
    s = re.sub(r"[^A-Za-z0-9_$.\-]", "_", name)
    if not s or (s[0].isdigit() and not s.isdigit()):
        s = "_" + s
    assert _SSA_ID.match(s), s
    return s


class Value:
    __slots__ = ("name", "type", "dims")

    def __init__(self, name: str, type_: TensorType):
        self.name = name
        self.type = type_
        self.dims = None  # sizes as ints / sympy expressions, where known

    def __str__(self) -> str:
        return "%" + self.name

    def __repr__(self) -> str:
        return f"Value(%{self.name}: {self.type})"


@dataclass
class Op:
    name: str
    operands: list
    results: list
    attrs: str = ""
    region: str | None = None  # text of the op's regions (already rendered), or None
    loc: str = ""

    def render(self, indent: str) -> str:
        res = ", ".join(str(r) for r in self.results)
        lhs = f"{res} = " if self.results else ""
        ops = ", ".join(str(o) for o in self.operands)
        region = f" ({self.region})" if self.region is not None else ""
        attrs = f" {{{self.attrs}}}" if self.attrs else ""
        ftype = "(" + ", ".join(str(o.type) for o in self.operands) + ") -> "
        if len(self.results) == 1:
            ftype += str(self.results[0].type)
        else:
            ftype += "(" + ", ".join(str(r.type) for r in self.results) + ")"
        loc = f" {self.loc}" if self.loc else ""
        return f'{indent}{lhs}"{self.name}"({ops}){region}{attrs} : {ftype}{loc}'


@dataclass
class Builder:
    """Collects the ops of one function body."""

    ops: list = field(default_factory=list)
    used: set = field(default_factory=set)
    counter: int = 0
    loc: str = ""  # location attached to ops emitted now

    def fresh(self, hint: str = "v") -> str:
        while True:
            name = f"{hint}{self.counter}"
            self.counter += 1
            if name not in self.used:
                self.used.add(name)
                return name

    def reserve(self, name: str) -> str:
        """A unique SSA id based on `name`."""
        base = ssa_id(name)
        cand, i = base, 1
        while cand in self.used:
            cand = f"{base}_{i}"
            i += 1
        self.used.add(cand)
        return cand

    def op(self, name: str, operands, result_types, attrs: str = "", region: str | None = None):
        single = isinstance(result_types, TensorType)
        types = [result_types] if single else list(result_types)
        results = [Value(self.fresh(), t) for t in types]
        self.ops.append(Op(name, list(operands), results, attrs, region, self.loc))
        return results[0] if single else results

    # ---- helpers used by every lowering ----------------------------------------------------
    def constant(self, value, dtype: str, shape=()) -> Value:
        """A splat constant of a static shape."""
        return self.op("stablehlo.constant", [], TensorType(tuple(shape), dtype),
                       f"value = {dense_splat(value, dtype, shape)}")

    def constant_list(self, values, dtype: str) -> Value:
        t = TensorType((len(values),), dtype)
        body = ", ".join(_scalar_literal(v, dtype) for v in values)
        return self.op("stablehlo.constant", [], t, f"value = dense<[{body}]> : {t}")

    def scalar_region(self, op_name: str, dtype: str, nargs: int = 2) -> str:
        """A region `^bb0(%a, %b): return op(%a, %b)` on 0-d tensors of `dtype`."""
        t = TensorType((), dtype)
        args = [Value(self.fresh("r"), t) for _ in range(nargs)]
        res = Value(self.fresh("r"), t)
        head = ", ".join(f"{a}: {t}" for a in args)
        body = Op(op_name, args, [res]).render("      ")
        ret = f'      "stablehlo.return"({res}) : ({t}) -> ()'
        return "{\n    ^bb0(" + head + "):\n" + body + "\n" + ret + "\n    }"


def _scalar_literal(v, dtype: str) -> str:
    if dtype == "i1":
        return "true" if bool(v) else "false"
    if is_float(dtype):
        v = float(v)
        if v != v:
            return "0x7FC00000" if dtype == "f32" else _nan_hex(dtype)
        if v in (float("inf"), float("-inf")):
            return _inf_hex(dtype, v < 0)
        return float_literal(v)
    return str(int(v))


def float_literal(v: float) -> str:
    """A finite float as an MLIR float literal that reads back to the same double: the shortest
    round-trip digits (repr), with a '.' in the mantissa, which MLIR's parser requires (`1e-12`
    would be an integer followed by junk; `1.0e-12` is a float)."""
    s = repr(float(v))
    mantissa, e, exponent = s.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _inf_hex(dtype: str, neg: bool) -> str:
    bits = {"f32": (0x7F800000, 0xFF800000), "f16": (0x7C00, 0xFC00), "bf16": (0x7F80, 0xFF80),
            "f64": (0x7FF0000000000000, 0xFFF0000000000000)}[dtype]
    return hex(bits[1] if neg else bits[0]).upper().replace("0X", "0x")


def _nan_hex(dtype: str) -> str:
    return {"f16": "0x7E00", "bf16": "0x7FC0", "f64": "0x7FF8000000000000"}[dtype]


def dense_splat(value, dtype: str, shape=()) -> str:
    return f"dense<{_scalar_literal(value, dtype)}> : {TensorType(tuple(shape), dtype)}"


def i64_array(values) -> str:
    values = list(values)
    return "array<i64" + (": " + ", ".join(str(int(v)) for v in values) if values else "") + ">"


def int_list(values) -> str:
    return "[" + ", ".join(str(int(v)) for v in values) + "]"
