"""Dropout in training on WarpForge's RNG (docs/training.md): masks from rng_bit_generator
(THREE_FRY) on a state carried between steps and saved in checkpoints; the golden comparison with
dropout off; a BERT with dropout 0.1 trains while its golden validation passes."""

import json
import subprocess

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn

import warpforge
from helpers import WARPFORGE
from test_trainer import _validate

torch.set_num_threads(2)

N = 20000  # elements of the mask: the kept fraction is within 5 standard deviations of 1 - p at 0.015


class DropVector(nn.Module):
    """loss = sum(dropout(w) * x): the gradient of w is the mask times 1 / (1 - p), so one SGD step
    with lr 1 from w = 0 writes the mask into w."""

    def __init__(self, p):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(N))
        self.drop = nn.Dropout(p)


def _drop_loss(m, x):
    return (m.drop(m.w.unsqueeze(0)) * x).sum()


def _train(pkg, data, out, *extra):
    proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), "--checkpoint-dir", str(out),
                           "--no-shuffle", *extra], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return load_file(str(out / "checkpoint.safetensors"))


def test_masks_keep_one_minus_p_and_change_every_step(tmp_path):
    p = 0.25
    model = DropVector(p)
    pkg = tmp_path / "drop"
    warpforge.export_training(model, (torch.ones(1, N),), _drop_loss, pkg, torch.optim.SGD(model.parameters(), lr=1.0),
                              golden_steps=2, batch_names=["x"], warpforge_binary=WARPFORGE)
    # The golden run (dropout off) moves every element by 1 per step; so does the replay.
    rc, report = _validate(pkg)
    assert rc == 0, report.get("first_divergence")
    data = tmp_path / "ones.safetensors"
    save_file({"x": torch.ones(4, N)}, str(data))
    w1 = _train(pkg, data, tmp_path / "one", "--steps", "1")["weight.w"]
    after2 = _train(pkg, data, tmp_path / "two", "--steps", "2")
    w2 = after2["weight.w"]
    scale = torch.tensor(1 / (1 - p), dtype=torch.float32)
    mask1, mask2 = w1 != 0, (w2 - w1) != 0
    # kept elements move by exactly the inverted-dropout scale; dropped ones not at all
    assert torch.equal(w1[mask1], torch.full_like(w1[mask1], -scale))
    assert torch.equal((w2 - w1)[mask2], torch.full_like(w1[mask2], -scale))
    for mask in (mask1, mask2):
        assert abs(mask.double().mean().item() - (1 - p)) < 0.015
        for part in mask.chunk(4):  # no region of the tensor is left out or favoured
            assert abs(part.double().mean().item() - (1 - p)) < 0.03
    # two steps, two independent masks: they agree where both keep or both drop, p^2 + (1-p)^2
    assert not torch.equal(mask1, mask2)
    agree = (mask1 == mask2).double().mean().item()
    assert abs(agree - (p * p + (1 - p) ** 2)) < 0.02
    # the state advanced from the package's initial one (key 0, counter 0) and is checkpointed
    state = after2["weight.warpforge.rng_state"]
    assert state.dtype == torch.uint64 and state[0].item() == 0 and state[1].item() > 0
    # --no-dropout: every element kept, unscaled
    w_off = _train(pkg, data, tmp_path / "off", "--steps", "1", "--no-dropout")["weight.w"]
    assert torch.equal(w_off, torch.full_like(w_off, -1.0))


class DropMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 32)
        self.drop = nn.Dropout(0.2)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.norm(self.drop(torch.relu(self.fc1(x)))))


def test_resume_reproduces_the_dropout_run(tmp_path):
    torch.manual_seed(0)
    model = DropMLP()
    pkg = tmp_path / "mlp"
    batch = (torch.randn(8, 6), torch.randint(0, 4, (8,)))
    warpforge.export_training(model, batch, lambda m, x, y: F.cross_entropy(m(x), y), pkg,
                              torch.optim.AdamW(model.parameters(), lr=1e-2), golden_steps=3, batch_names=["x", "y"],
                              warpforge_binary=WARPFORGE)
    rc, report = _validate(pkg)
    assert rc == 0, report.get("first_divergence")
    g = torch.Generator().manual_seed(3)
    x = torch.randn(64, 6, generator=g)
    data = tmp_path / "data.safetensors"
    save_file({"x": x, "y": (x[:, 0] > 0).long() + 2 * (x[:, 1] > 0).long()}, str(data))

    def curve(out):
        return [s["loss"] for s in json.loads((out / "loss_curve.json").read_text())["steps"]]

    full = _train(pkg, data, tmp_path / "full", "--steps", "12")
    _train(pkg, data, tmp_path / "part", "--steps", "5")
    part = _train(pkg, data, tmp_path / "part", "--steps", "12", "--resume")
    assert curve(tmp_path / "part") == curve(tmp_path / "full")
    assert all(torch.equal(full[k], part[k]) for k in full)
    # dropout is on in those runs: without it the same steps give other losses
    _train(pkg, data, tmp_path / "off", "--steps", "12", "--no-dropout")
    assert curve(tmp_path / "off") != curve(tmp_path / "full")


@pytest.mark.skipif(__import__("os").environ.get("WF_SKIP_SLOW") == "1", reason="slow")
def test_bert_with_dropout_trains_and_validates_without_it(tmp_path):
    """BERT QA (2 layers, hidden 128) with hidden and attention dropout 0.1: the golden replay with
    dropout off passes the tolerance table, and training with dropout on lowers the loss."""
    from transformers import BertConfig, BertForQuestionAnswering
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=512, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                     max_position_embeddings=128)
    model = BertForQuestionAnswering(cfg)
    b, s, n = 4, 32, 16
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 512, (n, s), generator=g)
    start = torch.randint(0, s - 4, (n,), generator=g)
    names = ["input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions"]
    features = dict(zip(names, (ids, torch.zeros(n, s, dtype=torch.int64), torch.ones(n, s, dtype=torch.int64),
                                start, start + 3)))

    def loss_fn(m, ids, tt, am, sp, ep):
        return m(input_ids=ids, token_type_ids=tt, attention_mask=am, start_positions=sp, end_positions=ep).loss
    pkg = tmp_path / "bert"
    warpforge.export_training(model, tuple(v[:b] for v in features.values()), loss_fn, pkg,
                              torch.optim.AdamW(model.parameters(), lr=1e-3), golden_steps=3, batch_names=names,
                              warpforge_binary=WARPFORGE)
    assert (pkg / "train_step.mlir").read_text().count("rng_bit_generator") >= 7  # embeddings + 3 per layer
    rc, report = _validate(pkg)
    assert rc == 0, report.get("first_divergence")
    data = tmp_path / "data.safetensors"
    save_file(features, str(data))
    run = tmp_path / "run"
    proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(data), "--steps", "40", "--checkpoint-dir",
                           str(run)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    losses = [s["loss"] for s in json.loads((run / "loss_curve.json").read_text())["steps"]]
    first, last = sum(losses[:4]) / 4, sum(losses[-4:]) / 4
    assert last < 0.5 * first, (first, last)
