"""bf16 autocast with float32 master weights (docs/training.md): the loss traced under
torch.autocast carries its casts (matmuls in bf16, softmax, layer norm and the loss as autocast's
lists put them), gradients flow back to float32 parameters through the converts, and
`validate --training` judges WarpForge's run against the float64 reference by PyTorch's own bf16
error."""

import copy
import json
import os
import re
import subprocess

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file

import warpforge
from helpers import WARPFORGE
from test_trainer import MLP, _validate

torch.set_num_threads(2)


def _own_autocast_loss(m, x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return F.cross_entropy(m(x), y)


def _export_mlp(tmp_path, name, **kw):
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    g = torch.Generator().manual_seed(2)
    batch = (torch.randn(16, 6, generator=g), torch.randint(0, 4, (16,), generator=g))
    out = tmp_path / name
    warpforge.export_training(model, batch, kw.pop("loss_fn", lambda m, x, y: F.cross_entropy(m(x), y)), out, opt,
                              golden_steps=5, batch_names=["x", "y"], warpforge_binary=WARPFORGE, **kw)
    return out


def _check_low_precision_report(report):
    assert report["pass"], report.get("first_divergence")
    kinds = {c["kind"] for c in report["checks"]}
    assert kinds == {"loss", "gradient", "weight", "optimizer_state"}
    for c in report["checks"]:
        assert "rule" in c and c["rel_l2"] is not None
    # at least some rows are judged by the bf16 rule, not the float32 tolerance: this is bf16
    assert any(c["rule"].startswith("rel_l2") for c in report["checks"])
    return {c["step"]: c for c in report["checks"] if c["kind"] == "loss"}


@pytest.mark.parametrize("how", ["argument", "own_context"])
def test_mlp_bf16_autocast_passes_the_low_precision_rule(tmp_path, how):
    kw = {"autocast": torch.bfloat16} if how == "argument" else {"loss_fn": _own_autocast_loss}
    pkg = _export_mlp(tmp_path, "mlp", **kw)
    t = json.loads((pkg / "manifest.json").read_text())["training"]
    assert t["autocast"] == {"dtype": "bf16", "device_type": "cpu", "master_weights": "f32", "traced_under": "cpu",
                             "wider_than_golden": []}
    lp = t["golden"]["low_precision"]
    assert lp["reference"] == "float64" and len(lp["torch_error"]["loss"]) == 5
    # the programs: bf16 products, float32 parameters and state
    loss_mlir = (pkg / "loss.mlir").read_text()
    assert re.search(r"stablehlo.dot_general.*tensor<16x6xbf16>", loss_mlir)
    assert all(a["dtype"] == "f32" for a in t["loss"]["arguments"] if a["kind"] == "parameter")
    assert all(s["dtype"] == "f32" for s in t["optimizer"]["state"])
    # PyTorch's own bf16 error against float64 is real (this is no float32 run)
    assert max(lp["torch_error"]["loss"]) > 1e-5 and lp["torch_error"]["gradients"]["*"] > 1e-3
    rc, report = _validate(pkg)
    assert rc == 0
    losses = _check_low_precision_report(report)
    assert sorted(losses) == [1, 2, 3, 4, 5]


def test_low_precision_verdict_can_fail(tmp_path):
    """A reference whose weight updates are 10% larger is beyond twice PyTorch's own bf16 error:
    the report names the first weight."""
    pkg = _export_mlp(tmp_path, "mlp", autocast=torch.bfloat16)
    golden = tmp_path / "golden"
    golden.mkdir()
    for f in (pkg / "golden").iterdir():
        (golden / f.name).write_bytes(f.read_bytes())
    w0 = load_file(str(pkg / "weights.safetensors"))
    ref = load_file(str(golden / "reference_weights_final.safetensors"))
    save_file({k: w0[k].double() + 1.1 * (v - w0[k].double()) for k, v in ref.items()},
              str(golden / "reference_weights_final.safetensors"))
    rc, report = _validate(pkg, "--golden", str(golden))
    assert rc == 1 and not report["pass"]
    assert re.match(r"step 5: weight '[a-z0-9.]+' diverges: rel_l2 .* > .* x PyTorch's own", report["first_divergence"])


def _golden_with_reference_loss(pkg, tmp_path, move):
    """A copy of the package's golden folder whose float64 reference losses `move` (given them as a
    float64 tensor, one per step) changed in place: what `validate --golden` then judges against."""
    golden = tmp_path / "golden"
    golden.mkdir()
    for f in (pkg / "golden").iterdir():
        (golden / f.name).write_bytes(f.read_bytes())
    ref = load_file(str(golden / "reference_loss.safetensors"))
    loss = ref["loss"].double()
    move(loss)
    save_file({**ref, "loss": loss.to(ref["loss"].dtype)}, str(golden / "reference_loss.safetensors"))
    return golden


def test_low_precision_loss_is_held_to_the_distance_pytorch_reached(tmp_path):
    """A step's loss may be as far from float64 as twice the largest distance PyTorch's own run
    reached by that step, not further: a reference loss moved by three times that distance at
    step 3 fails there, and the report gives the distance as a fraction of the loss."""
    pkg = _export_mlp(tmp_path, "mlp", autocast=torch.bfloat16)
    torch_error = json.loads((pkg / "manifest.json").read_text())["training"]["golden"]["low_precision"][
        "torch_error"]
    torch_rel = torch_error["loss"]
    def move(loss):
        reached = max(torch_rel[s] * abs(loss[s].item()) for s in range(3))
        loss[2] += 3 * max(reached, torch_error["loss_noise"] * abs(loss[2].item())) + 1e-3 * abs(loss[2].item())

    golden = _golden_with_reference_loss(pkg, tmp_path, move)
    rc, report = _validate(pkg, "--golden", str(golden))
    assert rc == 1 and not report["pass"]
    assert re.match(r"step 3: loss 'loss' diverges: rel_l2 .* > .* x PyTorch's own \(.* at this step; the largest "
                    r"distance its run reached so far", report["first_divergence"]), report["first_divergence"]
    losses = {c["step"]: c for c in report["checks"] if c["kind"] == "loss"}
    assert losses[1]["pass"] and losses[2]["pass"] and not losses[3]["pass"]
    assert sorted(losses) == [1, 2, 3]  # it stops at the divergence
    # --keep-going judges the steps after it too; the verdict and the divergence named stay step 3's
    rc, kept = _validate(pkg, "--golden", str(golden), "--keep-going")
    assert rc == 1 and not kept["pass"] and kept["first_divergence"] == report["first_divergence"]
    losses = {c["step"]: c for c in kept["checks"] if c["kind"] == "loss"}
    assert sorted(losses) == [1, 2, 3, 4, 5] and losses[4]["pass"] and losses[5]["pass"]
    assert {c["kind"] for c in kept["checks"]} == {"loss", "gradient", "weight", "optimizer_state"}


def test_low_precision_step_one_loss_is_held_to_twice_the_typical_error(tmp_path):
    """Step 1's loss is one draw of the bf16 rounding, PyTorch's error on it another: the exporter
    records PyTorch's typical error at the initial weights (the RMS over 8 draws of the weights
    scaled by 1 + 1e-2 N(0, 1)), a bf16 error of the order of the steps' own, and a reference loss
    moved by three times the larger of that and PyTorch's step-1 error fails at step 1, the report
    naming it."""
    pkg = _export_mlp(tmp_path, "mlp", autocast=torch.bfloat16)
    torch_error = json.loads((pkg / "manifest.json").read_text())["training"]["golden"]["low_precision"][
        "torch_error"]
    noise, torch_rel = torch_error["loss_noise"], torch_error["loss"]
    assert torch_error["loss_noise_draws"] == 8
    # bf16's, not float32's (6e-8) nor a broken comparison's (order 1)
    assert 1e-6 < noise < 1e-2 and 0.02 < noise / max(torch_rel) < 50, (noise, torch_rel)
    def move(loss):
        loss[0] += 3 * max(noise, torch_rel[0]) * abs(loss[0].item()) + 1e-4 * abs(loss[0].item())

    golden = _golden_with_reference_loss(pkg, tmp_path, move)
    rc, report = _validate(pkg, "--golden", str(golden))
    assert rc == 1 and not report["pass"]
    assert re.match(r"step 1: loss 'loss' diverges: rel_l2 .* > .* x PyTorch's own \(.*; typical at the initial "
                    r"weights, ", report["first_divergence"]), report["first_divergence"]
    # a manifest whose typical error is no number is refused, naming the field
    manifest = json.loads((pkg / "manifest.json").read_text())
    manifest["training"]["golden"]["low_precision"]["torch_error"]["loss_noise"] = "small"
    (pkg / "manifest.json").write_text(json.dumps(manifest))
    proc = subprocess.run([WARPFORGE, "validate", str(pkg), "--training"], capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "torch_error.loss_noise must be a number" in proc.stderr, proc.stderr


def test_autocast_bad_input(tmp_path):
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = (torch.randn(4, 6), torch.randint(0, 4, (4,)))
    with pytest.raises(ValueError, match="torch.bfloat16 or torch.float16"):
        warpforge.export_training(model, batch, lambda m, x, y: F.cross_entropy(m(x), y), tmp_path / "a", opt,
                                  autocast=torch.float64)
    if not torch.cuda.is_available():
        with pytest.raises(warpforge.TrainingExportError, match="no CUDA device"):
            warpforge.export_training(model, batch, lambda m, x, y: F.cross_entropy(m(x), y), tmp_path / "a", opt,
                                      autocast=torch.bfloat16, golden_device="cuda")
    assert not (tmp_path / "a").exists()


def _plain_loss(m, x, y):
    return F.cross_entropy(m(x), y)


def test_autocast_casts_compared_between_devices():
    """A golden run on another device computes under that device's autocast while the programs
    are traced under the CPU's: export_training compares the result type of every matmul, norm,
    softmax and loss op of the two runs and names the first that differs. Here the "device" run
    has no autocast at all (as a loss_fn entering torch.autocast("cpu") itself would have on a GPU)."""
    from warpforge.training import _AutocastLoss, _check_autocast_casts
    torch.manual_seed(0)
    model = MLP()
    batch = (torch.randn(4, 6), torch.randint(0, 4, (4,)))
    traced = _AutocastLoss(_plain_loss, "cpu", torch.bfloat16)
    _check_autocast_casts(model, traced, _AutocastLoss(_plain_loss, "cpu", torch.bfloat16), batch, "cpu")
    assert _check_autocast_casts(model, traced, _AutocastLoss(_plain_loss, "cpu", torch.bfloat16), batch, "cpu") == []
    # the programs narrower than the golden run: an error
    with pytest.raises(warpforge.TrainingExportError, match=r"disagree at compared op #0: addmm computes in "
                                                            r"torch.float32 on cpu, in torch.bfloat16 on the CPU"):
        _check_autocast_casts(model, traced, _plain_loss, batch, "cpu")
    # wider: allowed, reported (the golden run in bf16 throughout, the programs in float32)
    narrow = copy.deepcopy(model).to(torch.bfloat16)
    with pytest.warns(UserWarning, match="narrower type than the programs"):
        wider = _check_autocast_casts(model, _plain_loss, lambda m, x, y: _plain_loss(narrow, x.bfloat16(), y), batch,
                                      "cpu")
    assert {w["op"] for w in wider} >= {"addmm"} and all(w["program"] == "f32" for w in wider)


@pytest.mark.skipif(os.environ.get("WF_SKIP_SLOW") == "1", reason="slow")
def test_bert_bf16_autocast_passes_the_low_precision_rule(tmp_path):
    """BERT QA, 2 layers, hidden 128, under bf16 autocast: loss per step, step-1 gradients,
    weights and Adam state after steps 1 and 5 pass the rule; the trained run's loss falls."""
    from transformers import BertConfig, BertForQuestionAnswering
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=512, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                     max_position_embeddings=128)
    model = BertForQuestionAnswering(cfg)
    b, s = 4, 64
    g = torch.Generator().manual_seed(1)
    names = ["input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions"]
    batch = (torch.randint(0, 512, (b, s), generator=g), torch.zeros(b, s, dtype=torch.int64),
             torch.ones(b, s, dtype=torch.int64), torch.randint(0, s, (b,), generator=g),
             torch.randint(0, s, (b,), generator=g))

    def loss_fn(m, ids, tt, am, sp, ep):
        return m(input_ids=ids, token_type_ids=tt, attention_mask=am, start_positions=sp, end_positions=ep).loss
    pkg = tmp_path / "bert"
    warpforge.export_training(model, batch, loss_fn, pkg, torch.optim.AdamW(model.parameters(), lr=1e-3),
                              golden_steps=5, batch_names=names, autocast=torch.bfloat16, warpforge_binary=WARPFORGE)
    assert "xbf16>" in (pkg / "train_step.mlir").read_text()
    rc, report = _validate(pkg)
    assert rc == 0
    _check_low_precision_report(report)
    data = tmp_path / "data.safetensors"
    save_file(dict(zip(names, batch)), str(data))
    run = tmp_path / "run"
    proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), "--steps", "20", "--checkpoint-dir",
                           str(run)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    losses = [p["loss"] for p in json.loads((run / "loss_curve.json").read_text())["steps"]]
    assert losses[-1] < 0.5 * losses[0], losses
    ckpt = load_file(str(run / "checkpoint.safetensors"))
    assert all(v.dtype == torch.float32 for k, v in ckpt.items() if k.startswith("state."))
