"""Dropout in train mode, on WarpForge's RNG: `stablehlo.rng_bit_generator` (THREE_FRY, XLA's
generator, which the evaluator and the CUDA backend implement bit for bit) on a state the
program takes as an argument and returns advanced, so that a trainer carries it from step to step
like the optimizer state.

A program lowered with a `RandomStream` (`lower_program(..., rng=True)`) that uses dropout gets two
more arguments after its weights: `warpforge.rng_state` (tensor<2xui64>: key, counter) and
`warpforge.dropout` (tensor<i1>: dropout on or off), and the final state as its last result. With
dropout off every mask keeps everything and the scale is 1, so the program computes exactly what
the model computes without dropout (the golden comparison runs so); the state still advances."""

from __future__ import annotations

from ..mlir import TensorType, Value
from .context import Context, LoweringError, is_static_dim
from .registry import register

RNG_STATE = "warpforge.rng_state"
DROPOUT_SWITCH = "warpforge.dropout"
RNG_ALGORITHM = "THREE_FRY"


class RandomStream:
    """The RNG state threaded through a program's random ops, in graph order."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.initial = None  # the state argument, made at the first use
        self.enabled = None  # the dropout switch argument
        self.state = None  # the current state
        self._disabled = None

    @property
    def used(self) -> bool:
        return self.initial is not None

    def _start(self):
        b = self.ctx.b
        self.initial = Value(b.reserve(RNG_STATE), TensorType((2,), "ui64"))
        self.enabled = Value(b.reserve(DROPOUT_SWITCH), TensorType((), "i1"))
        self.state = self.initial

    def bits(self, dims) -> Value:
        """Uniform random ui32 of shape `dims`, advancing the state."""
        if not all(is_static_dim(d) for d in dims):
            raise LoweringError("dropout on a tensor of dynamic shape (the random bits need a static one)")
        if not self.used:
            self._start()
        state, bits = self.ctx.b.op("stablehlo.rng_bit_generator", [self.state],
                                    [self.state.type, TensorType(tuple(dims), "ui32")],
                                    f"rng_algorithm = #stablehlo<rng_algorithm {RNG_ALGORITHM}>")
        bits.dims = list(dims)
        self.state = state
        return bits

    def disabled(self) -> Value:
        if self._disabled is None:
            self._disabled = self.ctx.unary("stablehlo.not", self.enabled)
        return self._disabled


def dropout(ctx: Context, x: Value, p: float):
    """Inverted dropout as PyTorch's native_dropout: each element kept with probability 1 - p
    (a uniform ui32 >= round(p * 2^32)), the kept ones scaled by 1 / (1 - p). Returns (output, keep
    mask). With the switch off: (x * 1 * 1, all true)."""
    rng = getattr(ctx, "rng", None)
    if rng is None:
        raise LoweringError(f"dropout with p={p} in train mode: only a training program (warpforge.export_training) "
                            "carries the RNG state it needs; export the model in eval mode")
    if not 0 <= p <= 1:
        raise LoweringError(f"dropout probability {p} is not in [0, 1]")
    dims = ctx.dims_of(x)
    dtype = x.type.dtype
    bits = rng.bits(dims)
    if p < 1:
        threshold = min(round(p * 2.0 ** 32), 2 ** 32 - 1)
        keep = ctx.compare(bits, ctx.full(threshold, dims, "ui32"), "GE")
        scale = 1.0 / (1.0 - p)
    else:  # p = 1 drops everything (torch's scale is 0 there)
        keep = ctx.full(False, dims, "i1")
        scale = 0.0
    keep = ctx.binary("stablehlo.or", keep, ctx.broadcast_in_dim(rng.disabled(), dims, []))
    factor = ctx.b.op("stablehlo.select", [rng.enabled, ctx.b.constant(scale, dtype), ctx.b.constant(1.0, dtype)],
                      TensorType((), dtype))
    out = ctx.binary("stablehlo.multiply", x, ctx.convert(keep, dtype))
    out = ctx.binary("stablehlo.multiply", out, ctx.broadcast_in_dim(factor, dims, []))
    return out, keep


@register("aten.native_dropout.default")
def _native_dropout(ctx: Context, node, x, p, train):
    if not train or not p:
        return x, ctx.full(True, ctx.dims_of(x), "i1")
    return dropout(ctx, x, float(p))
