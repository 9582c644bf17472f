"""The C++ trainer against PyTorch, step by step: `warpforge validate --training` replays each
package's golden run (loss of every step, gradients of every step, weights and optimizer state
after step 1 and after the last) under DESIGN.md's training tolerances; `warpforge train` runs,
checkpoints and resumes; bad input fails cleanly."""

import json
import re
import subprocess

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn

import warpforge
from helpers import MLP, WARPFORGE

torch.set_num_threads(2)


def _validate(pkg, *extra):
    proc = subprocess.run([WARPFORGE, "validate", str(pkg), "--training", "--json", *extra], capture_output=True,
                          text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def ce_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def _mlp_training(optimizer="adamw"):
    """The MLP, its optimizer, LR schedule and example batch (seeded: the same on every call)."""
    torch.manual_seed(0)
    model = MLP()
    if optimizer == "adamw":
        decay = [p for n, p in model.named_parameters() if n.endswith("weight") and not n.startswith("norm")]
        rest = [p for n, p in model.named_parameters() if not (n.endswith("weight") and not n.startswith("norm"))]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                                lr=1e-2)
        sched = warpforge.linear_warmup_decay(opt, num_warmup_steps=2, num_training_steps=10)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    batch = (torch.randn(8, 6), torch.randint(0, 4, (8,)))
    return model, opt, sched, batch


def _export_mlp(tmp_path, name="mlp", optimizer="adamw", steps=6, clip=None):
    model, opt, sched, batch = _mlp_training(optimizer)
    out = tmp_path / name
    warpforge.export_training(model, batch, ce_loss, out, opt, lr_schedule=sched, golden_steps=steps, grad_clip=clip,
                              batch_names=["x", "y"], eval_fn=lambda m, x: m(x), eval_batch=(batch[0],),
                              eval_batch_names=["x"], eval_output_names=["logits"], warpforge_binary=WARPFORGE)
    return out


@pytest.mark.parametrize("optimizer,clip", [("adamw", None), ("adamw", 0.5), ("sgd", None)])
def test_mlp_matches_pytorch_step_by_step(tmp_path, optimizer, clip):
    pkg = _export_mlp(tmp_path, optimizer=optimizer, clip=clip)
    assert (pkg / "train_step.mlir").exists()
    rc, report = _validate(pkg)
    assert rc == 0 and report["pass"], report.get("first_divergence")
    kinds = {c["kind"] for c in report["checks"]}
    assert kinds == {"loss", "gradient", "weight", "optimizer_state"}
    assert sum(c["kind"] == "loss" for c in report["checks"]) == 6


def test_validate_names_the_first_divergence(tmp_path):
    pkg = _export_mlp(tmp_path, steps=3)
    # A golden run whose step-2 loss is off: the report names step 2 and the loss.
    golden = tmp_path / "golden"
    golden.mkdir()
    for f in (pkg / "golden").iterdir():
        (golden / f.name).write_bytes(f.read_bytes())
    loss = load_file(str(golden / "loss.safetensors"))["loss"].clone()
    loss[1] *= 1.01
    save_file({"loss": loss}, str(golden / "loss.safetensors"))
    rc, report = _validate(pkg, "--golden", str(golden))
    assert rc == 1 and not report["pass"]
    assert report["first_divergence"].startswith("step 2: loss")


class ConvBN(nn.Module):
    """BatchNorm in train mode: running statistics are buffers the train step updates."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.max_pool2d(x, 2)
        return self.fc(x.mean(dim=(2, 3)))


def test_batchnorm_train_mode_matches_pytorch(tmp_path):
    torch.manual_seed(1)
    model = ConvBN()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    batch = (torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,)))
    pkg = tmp_path / "convbn"
    warpforge.export_training(model, batch, ce_loss, pkg, opt, golden_steps=5, warpforge_binary=WARPFORGE)
    rc, report = _validate(pkg)
    assert rc == 0, report.get("first_divergence")
    weights = {c["name"] for c in report["checks"] if c["kind"] == "weight"}
    assert "bn.running_mean" in weights and "bn2.running_var" in weights
    # each train-mode batch norm is one stablehlo.batch_norm_training (not PyTorch's decomposition
    # into elementwise ops and reductions), differentiated as one batch_norm_grad
    loss_mlir = (pkg / "loss.mlir").read_text()
    assert loss_mlir.count('"stablehlo.batch_norm_training"') == 2
    assert "feature_index = 1 : i64" in loss_mlir
    assert '"stablehlo.batch_norm_grad"' in (pkg / "train_step.mlir").read_text()


class LinearBN(nn.Module):
    """BatchNorm1d on [N, C] (after a Linear)."""

    def __init__(self, affine=True):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.bn = nn.BatchNorm1d(16, affine=affine)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class Conv1dBN(nn.Module):
    """BatchNorm1d on [N, C, L] without affine parameters, momentum 0.3."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 8, 3)
        self.bn = nn.BatchNorm1d(8, affine=False, momentum=0.3)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).mean(dim=2))


@pytest.mark.parametrize("case", ["bn1d", "bn1d_ncl_no_affine", "bn2d_bf16_autocast"])
def test_batchnorm_variants_match_pytorch(tmp_path, case):
    """stablehlo.batch_norm_training for BatchNorm1d on [N, C] and (affine=False) on [N, C, L],
    and for BatchNorm2d under bf16 autocast (the bf16 input normalised in float32, the output
    rounded to bf16): PyTorch's steps, running statistics included."""
    torch.manual_seed(2)
    autocast = None
    if case == "bn1d":
        model, batch, bns = LinearBN(), (torch.randn(8, 6) * 2 + 1, torch.randint(0, 4, (8,))), ["bn"]
    elif case == "bn1d_ncl_no_affine":
        model, batch, bns = Conv1dBN(), (torch.randn(4, 3, 10), torch.randint(0, 4, (4,))), ["bn"]
    else:
        model, batch, bns = ConvBN(), (torch.randn(4, 3, 16, 16), torch.randint(0, 5, (4,))), ["bn", "bn2"]
        # conv2's bias, right before bn2, gets a gradient that is exactly zero but for rounding:
        # bf16 rounding noise, which the per-tensor low-precision rule cannot judge
        model.conv2.bias = None
        autocast = torch.bfloat16
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    pkg = tmp_path / case
    warpforge.export_training(model, batch, ce_loss, pkg, opt, golden_steps=3, warpforge_binary=WARPFORGE,
                              autocast=autocast)
    loss_mlir = (pkg / "loss.mlir").read_text()
    assert loss_mlir.count('"stablehlo.batch_norm_training"') == len(bns)
    if autocast is not None:
        assert re.search(r'"stablehlo.batch_norm_training".*\(tensor<4x8x16x16xf32>', loss_mlir)
    assert '"stablehlo.batch_norm_grad"' in (pkg / "train_step.mlir").read_text()
    rc, report = _validate(pkg)
    assert rc == 0 and report["pass"], report.get("first_divergence")
    checked = {c["name"] for c in report["checks"] if c["kind"] == "weight"}
    for bn in bns:
        assert f"{bn}.running_mean" in checked and f"{bn}.running_var" in checked
    grads = [c for c in report["checks"] if c["kind"] == "gradient"]
    assert grads and all(c["pass"] for c in grads)


def _train(pkg, data, *extra):
    return subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), *extra], capture_output=True, text=True)


def _mlp_data(tmp_path, n=64):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(n, 6, generator=g)
    y = (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()
    path = tmp_path / "data.safetensors"
    save_file({"x": x, "y": y}, str(path))
    return path


def test_train_resume_reproduces_the_loss_curve(tmp_path):
    pkg = _export_mlp(tmp_path, steps=1)
    data = _mlp_data(tmp_path)
    full = tmp_path / "full"
    proc = _train(pkg, data, "--steps", "12", "--checkpoint-dir", str(full), "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    curve = json.loads((full / "loss_curve.json").read_text())
    assert [p["step"] for p in curve["steps"]] == list(range(1, 13))
    # Stop after 5 steps, then resume to 12: the same losses, bit for bit.
    part = tmp_path / "part"
    proc = _train(pkg, data, "--steps", "5", "--checkpoint-dir", str(part), "--seed", "7")
    assert proc.returncode == 0, proc.stderr
    proc = _train(pkg, data, "--steps", "12", "--checkpoint-dir", str(part), "--seed", "7", "--resume")
    assert proc.returncode == 0, proc.stderr
    resumed = json.loads((part / "loss_curve.json").read_text())
    assert [p["loss"] for p in resumed["steps"]] == [p["loss"] for p in curve["steps"]]
    a = load_file(str(full / "checkpoint.safetensors"))
    b = load_file(str(part / "checkpoint.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_train_resumes_from_a_pytorch_state(tmp_path):
    """warpforge.write_checkpoint: PyTorch trains 5 steps, WarpForge takes its state and trains on
    from there; steps 6 to 8 give PyTorch's losses and the weights after step 8 are PyTorch's."""
    pkg = _export_mlp(tmp_path, steps=1)
    data = _mlp_data(tmp_path)
    tensors = load_file(str(data))
    model, opt, sched, _ = _mlp_training()
    losses = []
    ckpt = tmp_path / "from-torch" / "checkpoint.safetensors"
    for step in range(8):  # --no-shuffle: the examples in order, 8 to a batch (one epoch)
        x, y = tensors["x"][8 * step:8 * step + 8], tensors["y"][8 * step:8 * step + 8]
        loss = ce_loss(model, x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if step + 1 == 5:
            warpforge.write_checkpoint(pkg, model, opt, 5, ckpt, batch=8, examples=64, seed=7)
    proc = _train(pkg, data, "--steps", "8", "--checkpoint-dir", str(ckpt.parent), "--seed", "7", "--no-shuffle",
                  "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "resumed MLP from" in proc.stderr and "at step 5" in proc.stderr
    curve = json.loads((ckpt.parent / "loss_curve.json").read_text())["steps"]
    assert [p["step"] for p in curve] == [6, 7, 8]
    assert [p["loss"] for p in curve] == pytest.approx(losses[5:], rel=1e-5)
    after = load_file(str(ckpt))
    assert int(after["trainer.step"]) == 8
    for name, p in model.named_parameters():
        torch.testing.assert_close(after[f"weight.{name}"], p.detach(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(after[f"state.exp_avg.{name}"], opt.state[p]["exp_avg"], rtol=1e-4, atol=1e-7)
    # A model that is not the package's: an error naming the missing parameter, nothing written.
    other = tmp_path / "other" / "checkpoint.safetensors"
    with pytest.raises(warpforge.TrainingExportError, match=r"fc1\."):
        warpforge.write_checkpoint(pkg, nn.Sequential(nn.Linear(6, 4)), opt, 5, other, batch=8, examples=64)
    assert not other.exists()


def test_train_bad_input(tmp_path):
    pkg = _export_mlp(tmp_path, steps=1)
    data = _mlp_data(tmp_path)
    # an inference package
    torch.manual_seed(0)
    inference = tmp_path / "inference"
    warpforge.export(MLP().eval(), (torch.randn(2, 6),), inference)
    proc = _train(inference, data, "--steps", "1")
    assert proc.returncode == 2 and "no training program" in proc.stderr
    # a data file whose tensor has the wrong per-example shape
    bad = tmp_path / "bad.safetensors"
    save_file({"x": torch.randn(16, 5), "y": torch.zeros(16, dtype=torch.int64)}, str(bad))
    proc = _train(pkg, bad, "--steps", "1")
    assert proc.returncode == 2 and "'x'" in proc.stderr and "bad.safetensors" in proc.stderr
    # a batch size the program was not exported for
    proc = _train(pkg, data, "--steps", "1", "--batch", "4")
    assert proc.returncode == 2 and "batch" in proc.stderr
    # resuming without a checkpoint
    proc = _train(pkg, data, "--steps", "1", "--checkpoint-dir", str(tmp_path / "none"), "--resume")
    assert proc.returncode == 2 and "checkpoint" in proc.stderr
    assert not (tmp_path / "none" / "checkpoint.safetensors").exists()


def test_train_exports_an_inference_package(tmp_path):
    pkg = _export_mlp(tmp_path, steps=1)
    data = _mlp_data(tmp_path)
    run = tmp_path / "run"
    exported = tmp_path / "trained"
    proc = _train(pkg, data, "--steps", "8", "--checkpoint-dir", str(run), "--export", str(exported))
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["name"] == "trained" and [o["name"] for o in manifest["outputs"]] == ["logits"]
    # The exported weights are the checkpoint's; the package runs and matches PyTorch with them.
    ckpt = load_file(str(run / "checkpoint.safetensors"))
    weights = load_file(str(exported / "weights.safetensors"))
    model = MLP()
    model.load_state_dict({k: weights[k] for k in model.state_dict()})
    for k, v in weights.items():
        assert torch.equal(v, ckpt["weight." + k]), k
    x = torch.randn(8, 6)
    save_file({"x": x}, str(tmp_path / "x.safetensors"))
    out = tmp_path / "out"
    proc = subprocess.run([WARPFORGE, "run", str(exported), "--input", str(tmp_path / "x.safetensors"), "--output-dir",
                           str(out), "--output-format", "safetensors"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = load_file(str(out / "outputs.safetensors"))["logits"]
    with torch.no_grad():
        torch.testing.assert_close(got, model.eval()(x), rtol=1e-5, atol=1e-6)
    # an existing directory is refused before training starts
    proc = _train(pkg, data, "--steps", "1", "--export", str(exported))
    assert proc.returncode == 2 and "already exists" in proc.stderr


def _train_check_model(name):
    """The small real models of bench/train_check.py."""
    import importlib.util
    from helpers import REPO
    spec = importlib.util.spec_from_file_location("train_check", REPO / "bench" / "train_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(name)


@pytest.mark.parametrize("name", ["gpt2", "bert", "resnet18"])
def test_real_models_match_pytorch_step_by_step(tmp_path, name):
    """GPT-2 (2 layers; lm_head tied to the token embedding), BERT QA (2 layers; padding_idx
    embeddings; softmax-invariant biases whose gradient is rounding noise) and ResNet-18
    (BatchNorm in train mode, SGD with momentum)."""
    spec = _train_check_model(name)
    pkg = tmp_path / name
    warpforge.export_training(spec.pop("model"), spec.pop("batch"), spec.pop("loss_fn"), pkg, spec.pop("optimizer"),
                              golden_steps=5, name=name, warpforge_binary=WARPFORGE, **spec)
    rc, report = _validate(pkg)
    assert rc == 0, report.get("first_divergence")
    grads = [c for c in report["checks"] if c["kind"] == "gradient"]
    assert grads and all(c["pass"] for c in grads)
    if name == "gpt2":
        manifest = json.loads((pkg / "manifest.json").read_text())["training"]["loss"]["arguments"]
        assert any(a.get("tied_to") == "transformer.wte.weight" for a in manifest)


def test_train_stops_at_a_non_finite_loss(tmp_path):
    """A learning rate that blows the weights up: the run stops at the first non-finite loss and
    names the step and the first tensor that is not finite."""
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=1e30)
    batch = (torch.randn(8, 6), torch.randint(0, 4, (8,)))
    pkg = tmp_path / "diverges"
    warpforge.export_training(model, batch, ce_loss, pkg, opt, golden_steps=1, batch_names=["x", "y"],
                              warpforge_binary=WARPFORGE)
    data = _mlp_data(tmp_path)
    run = tmp_path / "run"
    proc = _train(pkg, data, "--steps", "20", "--checkpoint-dir", str(run))
    assert proc.returncode == 1, proc.stderr
    assert "the loss is" in proc.stderr and "not finite: '" in proc.stderr
    curve = json.loads((run / "loss_curve.json").read_text())["steps"]
    assert curve and all(p["loss"] is not None for p in curve)  # the finite steps before it
    assert not (run / "checkpoint.safetensors").exists()


def test_train_profile_prints_op_times_and_the_memory_plan(tmp_path):
    pkg = _export_mlp(tmp_path, steps=1)
    data = _mlp_data(tmp_path)
    proc = _train(pkg, data, "--steps", "6", "--profile", "--log-every", "0", "--checkpoint-dir", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr
    # Steps 4..6 are profiled (the first three compile and warm up); the MLP's matrix products
    # are among the steps timed (alone, or fused with their bias on the CPU plan).
    assert "train step profile over 3 steps" in proc.stdout, proc.stdout
    assert "stablehlo.dot_general" in proc.stdout or "fused_matmul" in proc.stdout, proc.stdout
    assert "memory plan:" in proc.stdout
    proc = _train(pkg, data, "--steps", "2", "--profile", "--log-every", "0", "--checkpoint-dir", str(tmp_path / "b"))
    assert proc.returncode == 0 and "fewer than 4 steps ran" in proc.stdout, proc.stdout
