"""Bad input to the exporter: unsupported ops fail with one message naming every op and the
source line that produced it; a failed export writes nothing."""

import inspect
import os

import pytest
import torch
from torch import nn

import warpforge
from warpforge import UnsupportedOpsError, package


class TwoUnsupported(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        f = torch.fft.rfft(y).abs()  # LINE_FFT
        z = torch.special.bessel_j0(y)  # LINE_BESSEL
        f2 = torch.fft.rfft(z).abs()  # LINE_FFT2
        return f.sum() + z.sum() + f2.sum()


def _line(marker):
    src, start = inspect.getsourcelines(TwoUnsupported.forward)
    for i, text in enumerate(src):
        if marker in text:
            return start + i
    raise AssertionError(marker)


def test_unsupported_ops_are_listed_with_source_lines(tmp_path):
    out = tmp_path / "pkg"
    with pytest.raises(UnsupportedOpsError) as info:
        warpforge.export(TwoUnsupported(), (torch.randn(2, 8),), out)
    msg = str(info.value)
    this_file = os.path.abspath(__file__)
    assert "3 unsupported ATen op use(s)" in msg, msg
    for marker, op in [("LINE_FFT", "aten._fft_r2c"), ("LINE_BESSEL", "aten.special_bessel_j0"),
                       ("LINE_FFT2", "aten._fft_r2c")]:
        assert f"{op}.default at {this_file}:{_line(marker)}" in msg, msg
    assert [op for op, _ in info.value.ops] == ["aten._fft_r2c.default", "aten.special_bessel_j0.default",
                                                 "aten._fft_r2c.default"]
    # nothing written: no package, no temporary directory beside it
    assert not out.exists()
    assert os.listdir(tmp_path) == []


def test_cli_reports_unsupported_ops(tmp_path, capsys):
    from warpforge import cli

    rc = cli.main(["test_errors:TwoUnsupported", str(tmp_path / "pkg"), "--input-shape", "2,8"])
    assert rc == 1
    err = capsys.readouterr().err
    assert "aten._fft_r2c.default" in err and "aten.special_bessel_j0.default" in err
    assert os.listdir(tmp_path) == []


def test_failure_while_writing_leaves_nothing(tmp_path, monkeypatch):
    calls = []
    real = package.save_file

    def failing(tensors, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        return real(tensors, path)

    monkeypatch.setattr(package, "save_file", failing)
    with pytest.raises(OSError, match="disk full"):
        warpforge.export(nn.Linear(4, 2), (torch.randn(3, 4),), tmp_path / "pkg")
    assert os.listdir(tmp_path) == []


def test_existing_package_is_replaced_whole(tmp_path):
    out = tmp_path / "pkg"
    warpforge.export(nn.Sequential(nn.Linear(4, 2), nn.ReLU()), (torch.randn(3, 4),), out)
    (out / "stale.txt").write_text("from an older export")
    warpforge.export(nn.Linear(4, 5), (torch.randn(3, 4),), out)
    assert sorted(os.listdir(out)) == ["golden", "manifest.json", "model.mlir", "weights.safetensors"]
    assert os.listdir(tmp_path) == ["pkg"]
    # a failing export leaves the previous package untouched
    with pytest.raises(UnsupportedOpsError):
        warpforge.export(TwoUnsupported(), (torch.randn(2, 8),), out)
    assert sorted(os.listdir(out)) == ["golden", "manifest.json", "model.mlir", "weights.safetensors"]
    assert os.listdir(tmp_path) == ["pkg"]


def test_rejects_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="dtype"):
        warpforge.export(nn.Linear(4, 2), (torch.randn(3, 4),), tmp_path / "p", dtype=torch.int8)
    with pytest.raises(TypeError, match="tensors"):
        warpforge.export(nn.Linear(4, 2), (3,), tmp_path / "p")
    assert os.listdir(tmp_path) == []
