"""Gradients of exported models: `warpforge autodiff` differentiates a package's model.mlir with
respect to the model's parameters, `warpforge run` runs the value-and-grad function, and every
gradient must match PyTorch autograd of the sum of the first output within the DESIGN.md
gradient tolerance (rtol 1e-3, atol 1e-5). An element outside it still passes where WarpForge's
gradient is no further from the float64 autograd gradient than PyTorch's float32 one (see
helpers.compare): gradients are sums over the batch that can cancel."""

from __future__ import annotations

import copy
import pathlib
import subprocess

import pytest
import torch
from safetensors.torch import load_file
from torch import nn

import warpforge
from helpers import WARPFORGE, compare, manifest
import zoo
from zoo import ZOO

GRAD_TOL = {"rtol": 1e-3, "atol": 1e-5}


def mlp():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(12, 32), nn.Tanh(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 5))
    return m.eval(), (torch.randn(4, 12),)


class PoolNet(nn.Module):
    """Convolutions (padding, stride, groups), max-pool and avg-pool, a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.pool2 = nn.MaxPool2d(3, stride=1, padding=1)
        self.pool3 = nn.AvgPool2d(2)
        self.fc = nn.Linear(8 * 2 * 2, 6)

    def forward(self, x):
        y = self.pool1(torch.relu(self.conv1(x)))   # [B, 8, 8, 8]
        y = self.pool2(torch.sigmoid(self.conv2(y)))  # [B, 8, 4, 4]
        y = self.pool3(y)                           # [B, 8, 2, 2]
        return self.fc(y.flatten(1))


def poolnet():
    torch.manual_seed(0)
    return PoolNet().eval(), (torch.randn(2, 3, 16, 16),)


class Reductions(nn.Module):
    """max over a dim, sort, topk, cumsum, prod, logsumexp, clamp: the ops with choosing or
    permuting gradients."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x):
        y = self.lin(x)
        v, _ = y.max(dim=1)
        s, _ = torch.sort(y, dim=1)
        t, _ = torch.topk(y, 2, dim=1)
        c = torch.cumsum(y, 1)
        p = torch.prod(y, 1)
        return (v.sum() + (s[:, 0] * s[:, -1]).sum() + t.sum() + (c * c).sum() + p.sum()
                + torch.logsumexp(y, 1).sum() + y.clamp(-0.3, 0.4).sum())


def reductions():
    torch.manual_seed(0)
    return Reductions().eval(), (torch.randn(3, 6),)


def bert_small_random_norms():
    """zoo.bert_small with random LayerNorm scales and shifts: with the initial scale of ones,
    the sum of a LayerNorm's output does not depend on its input, and every gradient upstream of
    the last LayerNorm would be zero up to rounding (nothing to compare)."""
    model, inputs = zoo.bert_small()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(torch.rand(mod.weight.shape, generator=g) + 0.5)
                mod.bias.copy_(torch.rand(mod.bias.shape, generator=g) * 0.2 - 0.1)
    return model, inputs


MODELS = {
    "reductions": reductions,
    "mlp": mlp,
    "poolnet": poolnet,
    "resnet18": ZOO["resnet18"],
    "convnet": ZOO["convnet"],
    "embednet": ZOO["embednet"],
    "mha": ZOO["mha"],
    "bert_small": bert_small_random_norms,
    "gpt2": ZOO["gpt2"],
    "llama": ZOO["llama"],
    "lstm": ZOO["lstm"],
}


def first_output(out):
    return [t for t in torch.utils._pytree.tree_leaves(out) if isinstance(t, torch.Tensor)][0]


def torch_grads(model, inputs, names, dtype):
    """Autograd gradients of the sum of the first output, by parameter name (a parameter the
    output does not use has a zero gradient; tied parameters share one gradient)."""
    m = copy.deepcopy(model).to(dtype).eval()
    params = dict(m.named_parameters(remove_duplicate=False))
    xs = [x.to(dtype) if x.is_floating_point() else x for x in inputs]
    m.zero_grad()
    first_output(m(*xs)).sum().backward()
    return {n: torch.zeros_like(params[n]) if params[n].grad is None else params[n].grad.detach().clone()
            for n in names}


def tied_groups(model, names):
    """Names that refer to one tensor (GPT-2's lm_head.weight and transformer.wte.weight): the
    package has one argument per name, autograd one gradient for the tensor."""
    params = dict(model.named_parameters(remove_duplicate=False))
    groups = {}
    for n in names:
        groups.setdefault(id(params[n]), []).append(n)
    return list(groups.values())


def warpforge_grads(pkg, workdir):
    """Runs `warpforge autodiff` on the package (whose default --wrt is its parameters, in
    manifest order), then the new function; returns {parameter name: gradient} and the first
    output."""
    man = manifest(pkg)
    params = [w for w in man["weights"] if w.get("kind", "parameter") == "parameter"]
    grad_mlir = workdir / "grad.mlir"
    cmd = [WARPFORGE, "autodiff", str(pkg), "--name", "value_and_grad", "-o", str(grad_mlir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    out_dir = workdir / "out"
    cmd = [WARPFORGE, "run", str(grad_mlir), "--entry", "value_and_grad", "--input", str(pkg / "weights.safetensors"),
           "--input", str(pkg / man["golden"]["inputs"]), "--output-dir", str(out_dir), "--output-format",
           "safetensors"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    res = load_file(str(out_dir / "outputs.safetensors"))
    n_out = len(res) - len(params)
    grads = {w["name"]: res[f"out{n_out + i}"] for i, w in enumerate(params)}
    return grads, res["out0"]


@pytest.mark.parametrize("name", list(MODELS))
def test_model_gradients_match_torch(name, tmp_path):
    model, inputs = MODELS[name]()
    model = model.eval()  # the exporter traces inference mode (BatchNorm with running statistics)
    pkg = tmp_path / name
    man = warpforge.export(model, inputs, pkg, name=name)
    grads, value = warpforge_grads(pkg, tmp_path)

    # the value part is the model's first output
    with torch.no_grad():
        expected = first_output(model(*inputs))
    compare(value, expected, man["tolerances"], f"{name}: first output")

    names = list(grads)
    # PyTorch's embedding backward leaves the gradient of an nn.Embedding's padding_idx row at
    # zero by definition; the exported forward program (a gather) does not record that rule.
    for mod_name, mod in model.named_modules():
        if isinstance(mod, nn.Embedding) and mod.padding_idx is not None:
            key = f"{mod_name}.weight" if mod_name else "weight"
            if key in grads:
                grads[key][mod.padding_idx] = 0
    g32 = torch_grads(model, inputs, names, torch.float32)
    g64 = torch_grads(model, inputs, names, torch.float64)
    worst = 0.0
    largest = max(float(g.norm()) for g in g64.values())
    checked = 0
    for group in tied_groups(model, names):
        ours = sum(grads[n] for n in group)
        what = f"{name}: gradient of {'+'.join(group)}"
        assert all(grads[n].dtype == torch.float32 for n in group), group
        stats = compare(ours, g32[group[0]], GRAD_TOL, what, reference=g64[group[0]])
        worst = max(worst, stats["max_abs"])
        # Elementwise atol alone would pass a gradient that is small everywhere; where the
        # gradient is not negligible, its direction and size must match the float64 one too.
        ref = g64[group[0]]
        if float(ref.norm()) > 1e-4 * largest:
            rel = float((ours.double() - ref).norm() / ref.norm())
            assert rel <= 1e-4, f"{what}: relative L2 error {rel:.3g} from the float64 gradient"
            checked += 1
    assert checked >= len(names) // 2, f"{name}: only {checked} of {len(names)} gradients are not negligible"
    print(f"{name}: {len(names)} parameter gradients, max abs difference from PyTorch {worst:.3g}")


def test_resnet18_train_mode_gradients(tmp_path):
    """torchvision ResNet-18 in train mode (BatchNorm with batch statistics) on a 2x3x64x64
    batch: `warpforge autodiff` of the training package's loss program with respect to the
    parameters, against autograd of the same cross-entropy loss.

    The gradient is discontinuous where a ReLU input is zero, and with a batch of 2 (layer4's
    BatchNorm normalizes 8 values per channel) one ReLU input in layer4 carries a large share of
    every gradient upstream of it: with seed 0, one input of layer4.1's last ReLU is -1.3e-6 in
    float64 and +1.4e-6 in PyTorch's float32, and PyTorch's float32 gradients differ from the
    float64 ones by 3% (relative L2) while WarpForge's match them to 1e-5. The seed here leaves
    every layer4 ReLU input at least 2e-4 from zero, so both float32 gradients are well defined."""
    import torch.nn.functional as F
    import torchvision

    torch.manual_seed(4)
    model = torchvision.models.resnet18(weights=None, num_classes=10)
    batch = (torch.randn(2, 3, 64, 64), torch.randint(0, 10, (2,)))

    def loss_fn(m, x, y):
        return F.cross_entropy(m(x), y)

    pkg = tmp_path / "resnet18_train"
    man = warpforge.export_training(model, batch, loss_fn, pkg, torch.optim.SGD(model.parameters(), lr=0.02),
                                    golden_steps=1)
    loss_spec = man["training"]["loss"]
    params = [a for a in loss_spec["arguments"] if a["kind"] == "parameter" and a.get("trainable", True)]
    grad_mlir = tmp_path / "grad.mlir"
    cmd = [WARPFORGE, "autodiff", str(pkg / loss_spec["file"]), "--wrt", ",".join(str(a["argument"]) for a in params),
           "-o", str(grad_mlir)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    out_dir = tmp_path / "out"
    cmd = [WARPFORGE, "run", str(grad_mlir), "--entry", f"{loss_spec['entry']}_value_and_grad", "--input",
           str(pkg / "weights.safetensors"), "--input", str(pkg / "golden" / "batch.safetensors"), "--output-dir",
           str(out_dir), "--output-format", "safetensors"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}"
    res = load_file(str(out_dir / "outputs.safetensors"))
    n_out = len(res) - len(params)
    grads = {a["name"]: res[f"out{n_out + i}"] for i, a in enumerate(params)}
    assert len(grads) == 62

    def autograd(dtype):
        m = copy.deepcopy(model).to(dtype).train()
        loss = loss_fn(m, batch[0].to(dtype), batch[1])
        loss.backward()
        return loss.detach(), {n: p.grad.detach().clone() for n, p in m.named_parameters()}

    # the premise: no layer4 ReLU input within float32 rounding of zero (in float64)
    m64 = copy.deepcopy(model).double().train()
    margins = []
    hooks = [mod.register_forward_pre_hook(lambda _, inp: margins.append(float(inp[0].detach().abs().min())))
             for name, mod in m64.named_modules() if name.startswith("layer4") and isinstance(mod, nn.ReLU)]
    with torch.no_grad():
        m64(batch[0].double())
    for h in hooks:
        h.remove()
    assert margins and min(margins) > 1e-4, f"a layer4 ReLU input is {min(margins):.3g} from zero: pick another seed"

    loss32, g32 = autograd(torch.float32)
    loss64, g64 = autograd(torch.float64)
    compare(res["out0"], loss32, {"rtol": 1e-5, "atol": 1e-6}, "resnet18 train: loss", reference=loss64)
    worst = 0.0
    for n, ours in grads.items():
        assert ours.dtype == torch.float32, n
        stats = compare(ours, g32[n], GRAD_TOL, f"resnet18 train: gradient of {n}", reference=g64[n])
        worst = max(worst, stats["max_abs"])
        rel = float((ours.double() - g64[n]).norm() / g64[n].norm())
        assert rel <= 1e-4, f"resnet18 train: gradient of {n}: relative L2 error {rel:.3g} from the float64 gradient"
    print(f"resnet18 train: {len(grads)} parameter gradients, max abs difference from PyTorch {worst:.3g}")


BF16_MODELS = ["mlp", "poolnet", "bert_small", "gpt2"]


@pytest.mark.parametrize("name", BF16_MODELS)
def test_bf16_model_gradients(name, tmp_path):
    """A bf16 package's gradients against float32 autograd by relative L2 error (DESIGN.md:
    under 1e-2), or, where bf16 itself cannot get there (a first convolution's weight gradient
    sums thousands of products that cancel), no worse than 1.5 times PyTorch's own bf16 autograd."""
    model, inputs = MODELS[name]()
    model = model.eval()
    pkg = tmp_path / name
    warpforge.export(model, inputs, pkg, name=name, dtype=torch.bfloat16)
    grads, _ = warpforge_grads(pkg, tmp_path)
    for mod_name, mod in model.named_modules():
        if isinstance(mod, nn.Embedding) and mod.padding_idx is not None and f"{mod_name}.weight" in grads:
            grads[f"{mod_name}.weight"][mod.padding_idx] = 0
    names = list(grads)
    g32 = torch_grads(model, inputs, names, torch.float32)
    bf16_inputs = [x.to(torch.bfloat16) if x.is_floating_point() else x for x in inputs]
    gbf = torch_grads(model.to(torch.bfloat16), bf16_inputs, names, torch.bfloat16)
    largest = max(float(g.norm()) for g in g32.values())
    worst = 0.0
    for group in tied_groups(model, names):
        ref = g32[group[0]].double()
        if float(ref.norm()) <= 1e-3 * largest:
            continue
        ours = sum(grads[n].double() for n in group)
        assert all(grads[n].dtype == torch.bfloat16 for n in group), group
        rel = float((ours - ref).norm() / ref.norm())
        theirs = float((gbf[group[0]].double() - ref).norm() / ref.norm())
        assert rel <= max(1e-2, 1.5 * theirs), \
            f"{name}: gradient of {'+'.join(group)}: relative L2 {rel:.3g} (PyTorch bf16: {theirs:.3g})"
        worst = max(worst, rel)
    print(f"{name} bf16: worst relative L2 error of a gradient {worst:.3g}")


def test_autodiff_cli_errors(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text("""func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.map"(%x) ({
  ^bb0(%a: tensor<f32>):
    %n = "stablehlo.negate"(%a) : (tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%n) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
""")
    out = tmp_path / "out.mlir"
    proc = subprocess.run([WARPFORGE, "autodiff", str(src), "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "stablehlo.map" in proc.stderr and f"{src}:2:" in proc.stderr, proc.stderr
    assert not out.exists() and not list(tmp_path.glob("out.mlir*"))
    proc = subprocess.run([WARPFORGE, "autodiff", str(src), "--wrt", "1", "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 2 and "no argument 1" in proc.stderr, proc.stderr
    assert not out.exists()
