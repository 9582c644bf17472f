"""Training packages (warpforge.export_training): layout and manifest, the loss program run by
`warpforge run` against PyTorch's golden loss, and the optimizer program applied to PyTorch's
gradients against PyTorch's weights and optimizer state (the loop closed without autodiff)."""

import json

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from torch import nn

import warpforge
from helpers import MLP, run_mlir

torch.set_num_threads(2)
WORST = {}


def ce_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def _mlp_setup(warmup=2):
    torch.manual_seed(0)
    model = MLP()
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and not n.startswith("norm")]
    no_decay = [p for n, p in model.named_parameters() if not (n.endswith("weight") and not n.startswith("norm"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-2)
    sched = warpforge.linear_warmup_decay(opt, num_warmup_steps=warmup, num_training_steps=10)
    batch = (torch.randn(8, 6), torch.randint(0, 4, (8,)))
    return model, opt, sched, batch


def _close(actual, expected, rtol, atol, what):
    a, e = actual.double(), expected.double()
    assert a.shape == e.shape, f"{what}: shape {tuple(a.shape)} != {tuple(e.shape)}"
    diff = (a - e).abs()
    assert (diff <= atol + rtol * e.abs()).all(), f"{what}: max abs {float(diff.max()):.3g}"
    return float(diff.max()) if diff.numel() else 0.0


def _replay_optimizer(pkg, tmp_path, steps):
    """Applies optimizer.mlir to PyTorch's gradients of each golden step; returns weights and state
    after `steps` steps, and the errors against the golden files after step 1."""
    man = json.loads((pkg / "manifest.json").read_text())["training"]
    weights = load_file(str(pkg / "weights.safetensors"))
    state = load_file(str(pkg / "optimizer_state.safetensors"))
    grads = load_file(str(pkg / man["golden"]["grads"]))
    params = {n: weights[n] for n in man["params"]}
    opt_state = {k: v for k, v in state.items() if k != "step"}
    assert int(state["step"]) == 0
    for step in range(1, steps + 1):
        lrs = warpforge.lr_at(man["lr_schedule"], step)
        inputs = {**params, **{f"grad.{n}": grads[f"{step}.{n}"] for n in man["params"]}, **opt_state,
                  "step": torch.tensor(step), "lr": torch.tensor(lrs, dtype=torch.float32)}
        res = run_mlir(pkg / "optimizer.mlir", inputs, tmp_path / f"opt{step}")
        names = [r["name"] for r in man["optimizer"]["results"]]
        out = dict(zip(names, res))
        params = {n: out[n] for n in man["params"]}
        opt_state = {s["name"]: out[s["name"]] for s in man["optimizer"]["state"]}
    return params, opt_state


def test_mlp_adamw_package(tmp_path):
    model, opt, sched, batch = _mlp_setup()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    man = warpforge.export_training(model, batch, ce_loss, tmp_path / "mlp", opt, lr_schedule=sched,
                                    golden_steps=5, grad_clip=1.0, name="mlp")
    pkg = tmp_path / "mlp"
    # the user's objects are untouched
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert sched.last_epoch == 0 and not opt.state
    assert json.loads((pkg / "manifest.json").read_text()) == man
    for f in ["loss.mlir", "optimizer.mlir", "weights.safetensors", "optimizer_state.safetensors",
              "golden/batch.safetensors", "golden/loss.safetensors", "golden/grads_step1.safetensors",
              "golden/weights_final.safetensors", "golden/optimizer_state_final.safetensors",
              "golden/lr.safetensors", "golden/summary.json"]:
        assert (pkg / f).is_file(), f
    assert man["format"] == "warpforge.training-package"
    t = man["training"]
    args = t["loss"]["arguments"]
    assert [(a["name"], a["kind"]) for a in args[:2]] == [("batch0", "batch"), ("batch1", "batch")]
    assert args[0]["shape"] == [8, 6] and args[1]["dtype"] == "i64"
    assert {a["name"] for a in args[2:]} == set(dict(model.named_parameters()))
    assert all(a["trainable"] for a in args[2:])
    assert t["loss"]["results"] == [{"name": "loss", "result": 0, "dtype": "f32", "shape": []}]
    o = t["optimizer"]
    assert o["kind"] == "adamw" and o["torch_class"] == "torch.optim.adamw.AdamW"
    assert [g["weight_decay"] for g in o["param_groups"]] == [0.01, 0.0]
    assert o["param_groups"][0]["params"] == ["fc1.weight", "fc2.weight"]
    assert t["params"] == ["fc1.weight", "fc2.weight", "fc1.bias", "norm.weight", "norm.bias", "fc2.bias"]
    assert [s["name"] for s in o["state"][:2]] == ["exp_avg.fc1.weight", "exp_avg_sq.fc1.weight"]
    assert t["lr_schedule"] == {"kind": "linear_warmup_decay", "base_lrs": [1e-2, 1e-2], "num_warmup_steps": 2,
                                "num_training_steps": 10}
    assert t["grad_clip"] == {"max_norm": 1.0, "norm_type": 2.0}
    summary = json.loads((pkg / "golden" / "summary.json").read_text())
    assert summary["lr"] == [warpforge.lr_at(t["lr_schedule"], s) for s in range(1, 6)]
    assert summary["lr"][0] == [0.0, 0.0] and summary["lr"][2] == [0.01 * 8 / 8, 0.01]

    # the loss program on the example batch and the initial weights gives PyTorch's step-1 loss
    weights = load_file(str(pkg / "weights.safetensors"))
    batch_t = load_file(str(pkg / "golden" / "batch.safetensors"))
    (loss,) = run_mlir(pkg / "loss.mlir", {**weights, **batch_t}, tmp_path / "loss")
    golden_loss = load_file(str(pkg / "golden" / "loss.safetensors"))["loss"]
    WORST["mlp loss (abs)"] = _close(loss, golden_loss[0], 1e-5, 0.0, "step-1 loss")

    # optimizer.mlir on PyTorch's gradients reproduces PyTorch's weights and state
    p1, s1 = _replay_optimizer(pkg, tmp_path, 1)
    w1 = load_file(str(pkg / "golden" / "weights_step1.safetensors"))
    st1 = load_file(str(pkg / "golden" / "optimizer_state_step1.safetensors"))
    for n in p1:
        WORST["mlp weights step 1"] = max(WORST.get("mlp weights step 1", 0), _close(p1[n], w1[n], 1e-6, 1e-7, n))
    for n in s1:
        WORST["mlp state step 1"] = max(WORST.get("mlp state step 1", 0), _close(s1[n], st1[n], 1e-6, 1e-7, n))
    p5, s5 = _replay_optimizer(pkg, tmp_path, 5)
    w5 = load_file(str(pkg / "golden" / "weights_final.safetensors"))
    st5 = load_file(str(pkg / "golden" / "optimizer_state_final.safetensors"))
    assert int(st5["step"]) == 5
    for n in p5:
        assert not torch.equal(w5[n], weights[n]), f"{n} did not move"
        WORST["mlp weights step 5"] = max(WORST.get("mlp weights step 5", 0), _close(p5[n], w5[n], 1e-6, 1e-7, n))
    for n in s5:
        WORST["mlp state step 5"] = max(WORST.get("mlp state step 5", 0), _close(s5[n], st5[n], 1e-6, 1e-7, n))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        return self.head(h.mean(dim=(2, 3)))


def test_convnet_sgd_nesterov_batchnorm(tmp_path):
    torch.manual_seed(1)
    model = ConvNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    batch = (torch.randn(4, 3, 6, 6), torch.randint(0, 3, (4,)))
    man = warpforge.export_training(model, batch, ce_loss, tmp_path / "conv", opt, lr_schedule=sched,
                                    golden_steps=4)
    pkg = tmp_path / "conv"
    t = man["training"]
    assert t["optimizer"]["kind"] == "sgd" and t["optimizer"]["state_slots"] == ["momentum_buffer"]
    assert t["buffer_updates"] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [r["name"] for r in t["loss"]["results"]] == ["loss"] + t["buffer_updates"]
    assert t["lr_schedule"] == {"kind": "step", "base_lrs": [0.1], "step_size": 2, "gamma": 0.5}
    weights = load_file(str(pkg / "weights.safetensors"))
    batch_t = load_file(str(pkg / "golden" / "batch.safetensors"))
    res = run_mlir(pkg / "loss.mlir", {**weights, **batch_t}, tmp_path / "loss")
    golden_loss = load_file(str(pkg / "golden" / "loss.safetensors"))["loss"]
    WORST["conv loss (abs)"] = _close(res[0], golden_loss[0], 1e-5, 0.0, "step-1 loss")
    w1 = load_file(str(pkg / "golden" / "weights_step1.safetensors"))
    for r in t["loss"]["results"][1:]:
        WORST["conv running stats"] = max(WORST.get("conv running stats", 0),
                                          _close(res[r["result"]], w1[r["buffer"]], 1e-5, 1e-7, r["name"]))
    p4, s4 = _replay_optimizer(pkg, tmp_path, 4)
    w4 = load_file(str(pkg / "golden" / "weights_final.safetensors"))
    st4 = load_file(str(pkg / "golden" / "optimizer_state_final.safetensors"))
    for n in p4:
        WORST["conv weights step 4"] = max(WORST.get("conv weights step 4", 0), _close(p4[n], w4[n], 1e-6, 1e-7, n))
    for n in s4:
        WORST["conv state step 4"] = max(WORST.get("conv state step 4", 0), _close(s4[n], st4[n], 1e-6, 1e-7, n))


def test_non_scalar_loss_is_refused(tmp_path):
    model, opt, _, batch = _mlp_setup()
    with pytest.raises(warpforge.TrainingExportError, match=r"scalar.*shape \[8\]"):
        warpforge.export_training(model, batch, lambda m, x, y: F.cross_entropy(m(x), y, reduction="none"),
                                  tmp_path / "bad", opt)
    assert not (tmp_path / "bad").exists()


def test_dropout_draws_from_the_rng_state(tmp_path):
    """Dropout (module or functional) is exported with WarpForge's RNG: the loss program takes the
    RNG state and the dropout switch after the weights and returns the next state; the golden run
    is PyTorch's with dropout off."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.1), nn.Linear(8, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = (torch.randn(2, 6), torch.tensor([0, 1]))
    for name, loss in (("module", ce_loss), ("functional", lambda m, x, y: F.cross_entropy(F.dropout(m(x), 0.2), y))):
        manifest = warpforge.export_training(model, batch, loss, tmp_path / name, opt, golden_steps=1, rng_seed=7)
        t = manifest["training"]
        assert t["dropout"] == {"rng_state": "warpforge.rng_state", "switch": "warpforge.dropout",
                                "algorithm": "THREE_FRY", "seed": 7, "golden": "off"}
        args = {a["name"]: a for a in t["loss"]["arguments"]}
        assert args["warpforge.rng_state"]["kind"] == "buffer" and args["warpforge.rng_state"]["dtype"] == "ui64"
        assert args["warpforge.dropout"]["kind"] == "constant" and args["warpforge.dropout"]["dtype"] == "i1"
        assert t["buffer_updates"] == ["warpforge.rng_state"]
        weights = load_file(str(tmp_path / name / "weights.safetensors"))
        assert weights["warpforge.rng_state"].tolist() == [7, 0] and bool(weights["warpforge.dropout"])
        assert "rng_bit_generator" in (tmp_path / name / "loss.mlir").read_text()
        assert "warpforge.rng_state" not in load_file(str(tmp_path / name / "golden" / "weights_final.safetensors"))
    # the golden run has dropout off: its loss is the model's without dropout
    model[1].p = 0.0
    with torch.no_grad():
        want = ce_loss(model, *batch)
    golden = load_file(str(tmp_path / "module" / "golden" / "loss.safetensors"))["loss"][0]
    torch.testing.assert_close(golden, want, rtol=0, atol=0)


def test_other_random_ops_are_refused(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(6, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(warpforge.TrainingExportError, match="random ops"):
        warpforge.export_training(model, (torch.randn(2, 6), torch.tensor([0, 1])),
                                  lambda m, x, y: F.cross_entropy(m(x) + torch.rand(2, 4), y), tmp_path / "d", opt)
    assert not (tmp_path / "d").exists()


def test_unsupported_optimizer_is_named(tmp_path):
    model, _, _, batch = _mlp_setup()
    with pytest.raises(warpforge.UnsupportedOptimizerError, match="torch.optim.rmsprop.RMSprop"):
        warpforge.export_training(model, batch, ce_loss, tmp_path / "r", torch.optim.RMSprop(model.parameters()))


def test_report_worst_errors():
    for k, v in sorted(WORST.items()):
        print(f"{k}: max abs {v:.3g}")


def test_frozen_and_gradless_parameters(tmp_path):
    model, _, _, batch = _mlp_setup()
    model.fc1.weight.requires_grad_(False)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3, weight_decay=0.1,
                           amsgrad=True)
    man = warpforge.export_training(model, batch, ce_loss, tmp_path / "f", opt, golden_steps=2)
    t = man["training"]
    assert t["frozen"] == ["fc1.weight"] and "fc1.weight" not in t["params"]
    assert t["optimizer"]["kind"] == "adam" and t["optimizer"]["param_groups"][0]["decoupled_weight_decay"] is False
    assert t["optimizer"]["state_slots"] == ["exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    p2, s2 = _replay_optimizer(tmp_path / "f", tmp_path, 2)
    w2 = load_file(str(tmp_path / "f" / "golden" / "weights_final.safetensors"))
    for n in p2:
        _close(p2[n], w2[n], 1e-6, 1e-7, n)
    # a parameter in the optimizer that the loss does not reach
    model.extra = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    msg = r"no gradient from the loss: \['fc1.weight', 'extra.weight', 'extra.bias'\]; torch.optim skips"
    with pytest.raises(warpforge.TrainingExportError, match=msg):
        warpforge.export_training(model, batch, ce_loss, tmp_path / "g", opt, golden_steps=1)
