"""`warpforge inspect PKG --cpu-plan` on an exported conv net: the CPU backend's plan names its
fused convolutions, the 3x3 stride-1 ones Winograd where oneDNN has it for this CPU, and
--no-winograd / --no-fusion print the plans those flags run; `validate` passes either way."""

import re
import subprocess

import torch
from torch import nn

import warpforge
from helpers import WARPFORGE


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False)
        self.conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        return torch.relu(self.bn(self.conv(h)) + h)


def _inspect(pkg, *flags):
    proc = subprocess.run([WARPFORGE, "inspect", str(pkg), "--cpu-plan", *flags], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cpu_plan_names_winograd_convolutions(tmp_path):
    torch.manual_seed(0)
    model = Block().eval()
    with torch.no_grad():  # batch norm statistics that are not the identity
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    pkg = tmp_path / "block"
    warpforge.export(model, (torch.randn(2, 3, 17, 19),), pkg)
    plan = _inspect(pkg)
    assert "2 fused convolutions" in plan, plan
    winograd = int(re.search(r"(\d+) of them Winograd", plan).group(1))
    assert winograd in (0, 1), plan  # the stride-2 stem never; the 3x3 stride-1 one where oneDNN has it
    assert plan.count("] winograd at") == winograd, plan
    assert "fused_convolution[convolution,subtract,multiply,add,add(residual),relu]" in plan, plan
    direct = _inspect(pkg, "--no-winograd")
    assert "0 of them Winograd" in direct and "winograd at" not in direct, direct
    assert "0 fused convolutions" in _inspect(pkg, "--no-fusion")
    for flags in ([], ["--no-winograd"]):
        proc = subprocess.run([WARPFORGE, "validate", str(pkg), *flags], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
