"""Gradient accumulation (docs/training.md): K micro-batches per update, each adding grad / K to
an accumulator that stays on the device, then one optimizer update. Checked against PyTorch's
own loop (`(loss / K).backward()` K times, then `optimizer.step()`), step by step, and against one
batch of K times the size where the loss is a mean."""

import json
import subprocess

import pytest
import torch
from safetensors.torch import load_file, save_file

import warpforge
from helpers import WARPFORGE
from test_trainer import MLP, _validate, ce_loss

torch.set_num_threads(2)


def _export(tmp_path, name, batch, accumulation_steps, steps=4, clip=None, sgd=False):
    torch.manual_seed(0)
    model = MLP()
    if sgd:  # unlike Adam's, SGD's update is proportional to the gradient: a wrong scale shows
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = None
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
        sched = warpforge.linear_warmup_decay(opt, num_warmup_steps=2, num_training_steps=20)
    out = tmp_path / name
    warpforge.export_training(model, batch, ce_loss, out, opt, lr_schedule=sched, golden_steps=steps, grad_clip=clip,
                              batch_names=["x", "y"], accumulation_steps=accumulation_steps, warpforge_binary=WARPFORGE)
    return out


def _batch(n=32):
    g = torch.Generator().manual_seed(5)
    return torch.randn(n, 6, generator=g), torch.randint(0, 4, (n,), generator=g)


@pytest.mark.parametrize("clip", [None, 0.5])
def test_accumulation_matches_pytorch_step_by_step(tmp_path, clip):
    pkg = _export(tmp_path, "acc", _batch(), 4, clip=clip)
    manifest = json.loads((pkg / "manifest.json").read_text())["training"]
    assert manifest["accumulation_steps"] == 4
    x_arg = next(a for a in manifest["loss"]["arguments"] if a["name"] == "x")
    assert x_arg["shape"] == [8, 6]  # the programs take one micro-batch
    golden = load_file(str(pkg / "golden" / "loss.safetensors"))
    assert golden["micro_loss"].shape == (4, 4)
    # the step's loss is the mean of its micro-batches', as a loop adding (loss / K).item() has it
    torch.testing.assert_close(golden["loss"], golden["micro_loss"].double().mean(1).float(), rtol=1e-6, atol=0)
    rc, report = _validate(pkg)
    assert rc == 0 and report["pass"], report.get("first_divergence")
    micro = [c for c in report["checks"] if c["kind"] == "loss" and c["name"].startswith("micro-batch")]
    assert len(micro) == 16 and all(c["pass"] for c in micro)
    assert {c["kind"] for c in report["checks"]} == {"loss", "gradient", "weight", "optimizer_state"}


def test_validate_names_a_diverging_micro_batch(tmp_path):
    pkg = _export(tmp_path, "acc", _batch(), 4, steps=2)
    golden = tmp_path / "golden"
    golden.mkdir()
    for f in (pkg / "golden").iterdir():
        (golden / f.name).write_bytes(f.read_bytes())
    losses = load_file(str(golden / "loss.safetensors"))
    losses["micro_loss"] = losses["micro_loss"].clone()
    losses["micro_loss"][1, 2] *= 1.01
    save_file(losses, str(golden / "loss.safetensors"))
    rc, report = _validate(pkg, "--golden", str(golden))
    assert rc == 1 and report["first_divergence"].startswith("step 2: loss 'micro-batch 2'")


def test_accumulation_equals_one_batch_of_k_times_the_size(tmp_path):
    """With a mean loss, K micro-batches of B accumulated make the gradient of one batch of K * B:
    PyTorch's golden runs agree, and so do WarpForge's trained runs over the same data order."""
    batch = _batch()
    acc = _export(tmp_path, "acc", batch, 4, sgd=True)
    whole = _export(tmp_path, "whole", batch, 1, sgd=True)
    g_acc = load_file(str(acc / "golden" / "weights_final.safetensors"))
    g_whole = load_file(str(whole / "golden" / "weights_final.safetensors"))
    for k in g_whole:
        torch.testing.assert_close(g_acc[k], g_whole[k], rtol=1e-4, atol=1e-6)

    g = torch.Generator().manual_seed(9)
    x = torch.randn(256, 6, generator=g)
    y = (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()
    data = tmp_path / "data.safetensors"
    save_file({"x": x, "y": y}, str(data))
    runs = {}
    for name, pkg in (("acc", acc), ("whole", whole)):
        out = tmp_path / f"run_{name}"
        proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), "--steps", "12", "--seed", "3",
                               "--checkpoint-dir", str(out)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        runs[name] = (json.loads((out / "loss_curve.json").read_text()), load_file(str(out / "checkpoint.safetensors")))
    curve_acc, ckpt_acc = runs["acc"]
    curve_whole, ckpt_whole = runs["whole"]
    assert curve_acc["accumulation"] == 4 and all(len(s["micro_losses"]) == 4 for s in curve_acc["steps"])
    losses_acc = torch.tensor([s["loss"] for s in curve_acc["steps"]])
    losses_whole = torch.tensor([s["loss"] for s in curve_whole["steps"]])
    assert not torch.equal(losses_acc[0], losses_acc[-1])  # it trains
    torch.testing.assert_close(losses_acc, losses_whole, rtol=1e-5, atol=1e-6)
    for k, v in ckpt_whole.items():
        if k.startswith("weight."):
            torch.testing.assert_close(ckpt_acc[k], v, rtol=1e-4, atol=1e-6)


def test_accumulate_flag_and_resume(tmp_path):
    """--accumulate overrides the package's K; resuming reproduces the run bit for bit; a
    checkpoint made with another K is refused."""
    pkg = _export(tmp_path, "acc", _batch(), 4, steps=1)
    g = torch.Generator().manual_seed(9)
    data = tmp_path / "data.safetensors"
    save_file({"x": torch.randn(128, 6, generator=g), "y": torch.randint(0, 4, (128,), generator=g)}, str(data))

    def train(out, *extra):
        return subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), "--seed", "1", "--checkpoint-dir",
                               str(out), *extra], capture_output=True, text=True)

    full = tmp_path / "full"
    proc = train(full, "--steps", "6", "--accumulate", "2")
    assert proc.returncode == 0, proc.stderr
    curve = json.loads((full / "loss_curve.json").read_text())
    assert curve["accumulation"] == 2 and all(len(s["micro_losses"]) == 2 for s in curve["steps"])
    part = tmp_path / "part"
    assert train(part, "--steps", "2", "--accumulate", "2").returncode == 0
    proc = train(part, "--steps", "6", "--accumulate", "2", "--resume")
    assert proc.returncode == 0, proc.stderr
    resumed = json.loads((part / "loss_curve.json").read_text())
    assert [s["loss"] for s in resumed["steps"]] == [s["loss"] for s in curve["steps"]]
    a, b = load_file(str(full / "checkpoint.safetensors")), load_file(str(part / "checkpoint.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)
    proc = train(part, "--steps", "8", "--resume")  # the package's K = 4
    assert proc.returncode == 2 and "--accumulate 2" in proc.stderr
    # 128 examples make 4 updates of 4 x 8: an epoch of --accumulate 4 is 4 steps
    proc = train(tmp_path / "epoch", "--epochs", "1")
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads((tmp_path / "epoch" / "loss_curve.json").read_text())["steps"]) == 4


def test_accumulation_bad_input(tmp_path):
    with pytest.raises(ValueError, match="does not split into 3 micro-batches"):
        _export(tmp_path, "bad", _batch(32), 3)
    with pytest.raises(ValueError, match="positive integer"):
        _export(tmp_path, "bad", _batch(32), 0)
    assert not (tmp_path / "bad").exists()
