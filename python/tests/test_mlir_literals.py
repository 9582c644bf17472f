"""Float literals in the exported text are MLIR float literals: a '.' in the mantissa (`1.0e-12`,
never `1e-12`, which upstream MLIR's parser rejects), the shortest digits that read back to the
same value, and hex bit patterns for infinities and NaNs."""

import re
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

import warpforge
from helpers import WARPFORGE
from warpforge.mlir import dense_splat, float_literal

# An exponent on a mantissa without a '.': what MLIR reads as an integer followed by junk.
_BARE_EXPONENT = re.compile(r"(?<![\w.])[-+]?\d+[eE][-+]?\d+")


@pytest.mark.parametrize("value, text", [
    (1e-12, "1.0e-12"),
    (1e-05, "1.0e-05"),
    (-3e38, "-3.0e+38"),
    (1e16, "1.0e+16"),
    (5e-324, "5.0e-324"),
    (1.5e-07, "1.5e-07"),
    (3.4028234663852886e+38, "3.4028234663852886e+38"),
    (0.7071067811865476, "0.7071067811865476"),
    (1.0, "1.0"),
    (-0.0, "-0.0"),
    (64, "64.0"),
])
def test_float_literal_has_a_point_and_round_trips(value, text):
    assert float_literal(value) == text
    assert float(text) == float(value)


def test_dense_splat_forms():
    assert dense_splat(1e-12, "f32", (2, 3)) == "dense<1.0e-12> : tensor<2x3xf32>"
    assert dense_splat(-3e38, "f64") == "dense<-3.0e+38> : tensor<f64>"
    assert dense_splat(float("-inf"), "f32") == "dense<0xFF800000> : tensor<f32>"
    assert dense_splat(float("inf"), "bf16") == "dense<0x7F80> : tensor<bf16>"
    assert dense_splat(float("nan"), "f32") == "dense<0x7FC00000> : tensor<f32>"
    assert dense_splat(3, "i64") == "dense<3> : tensor<i64>"
    assert dense_splat(True, "i1") == "dense<true> : tensor<i1>"


class SmallExponents(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(8, eps=1e-12)

    def forward(self, x):
        return self.norm(x).clamp(min=-3e38) * 1e16 + 1e-20


def _export(tmp_path):
    torch.manual_seed(0)
    model, inputs = SmallExponents().eval(), (torch.randn(2, 8),)
    warpforge.export(model, inputs, tmp_path / "pkg", activations=None)
    return (tmp_path / "pkg" / "model.mlir").read_text()


def test_exported_dense_floats_are_mlir_float_literals(tmp_path):
    text = _export(tmp_path)
    bodies = re.findall(r"dense<([^>]*)>", text)
    assert bodies
    for body in bodies:
        assert not _BARE_EXPONENT.search(body), body
    for literal in ("1.0e-12", "-3.0e+38", "1.0e+16", "1.0e-20"):
        assert f"dense<{literal}>" in text, literal
    proc = subprocess.run([WARPFORGE, "print", str(tmp_path / "pkg" / "model.mlir")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_upstream_mlir_parses_the_export(tmp_path):
    pytest.importorskip("jax")
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    text = _export(tmp_path)
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(text)
    # The values upstream read (printed back as f32 literals) are the exported ones.
    printed = {float(np.float32(v)) for v in re.findall(r"dense<([-+0-9.eE]+)>", str(module))}
    for value in (1e-12, -3e38, 1e16, 1e-20):
        assert float(np.float32(value)) in printed, value
