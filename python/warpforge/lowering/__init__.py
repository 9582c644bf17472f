"""Lowerings from core ATen ops to StableHLO, one module per op family. Importing this package
fills `LOWERINGS`."""

from . import attention, conv, elementwise, indexing, matmul, norm, pool, random, reduce, resize, shape, sort  # noqa: F401
from .context import Context, LoweringError, SymArg, Unavailable
from .registry import LOWERINGS

__all__ = ["LOWERINGS", "Context", "LoweringError", "SymArg", "Unavailable"]
