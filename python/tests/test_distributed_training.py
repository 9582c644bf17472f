"""Data-parallel training (docs/distributed.md, "Data-parallel training") against PyTorch's
DistributedDataParallel: a small BERT QA model trained by 2 ranks on Gloo under `warpforge launch`
(and torchrun) for 20 steps, rank by rank against DDP (gloo, 2 processes, the same data order):
loss of every step (rtol 1e-4), each rank's gradients before the all-reduce (1e-3 / 1e-5), the
weights after 20 steps (1e-4 / 1e-6); gradient accumulation against DDP with no_sync; DDP's bucket
assignment; WORLD_SIZE=1 running the data-parallel step as the plain one; a rank killed
mid-training named by the other within the timeout."""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import nn

import warpforge
from helpers import MLP, WARPFORGE, by_rank

torch.set_num_threads(2)

NAMES = ["input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions"]
STEPS = 20


def qa_loss(model, input_ids, token_type_ids, attention_mask, start_positions, end_positions):
    return model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask,
                 start_positions=start_positions, end_positions=end_positions).loss


def ce_loss(model, x, y):
    return F.cross_entropy(model(x), y)


def _bert_features(n=60, s=32, seed=1):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 512, (n, s), generator=g)
    start = torch.randint(0, s - 4, (n,), generator=g)
    tt = (torch.arange(s) >= s // 2).to(torch.int64).expand(n, s).contiguous()
    mask = torch.ones(n, s, dtype=torch.int64)
    mask[::3, -5:] = 0  # padding at the end of every third example
    return dict(zip(NAMES, (ids, tt, mask, start, start + 3)))


@pytest.fixture(scope="module")
def bert_ddp(tmp_path_factory):
    return export_bert_ddp(tmp_path_factory.mktemp("bert_ddp"), WARPFORGE)


def export_bert_ddp(tmp, warpforge_binary):
    """The 2-layer BERT QA of the training tests (hidden 128, no dropout), AdamW with HF's
    weight-decay groups, linear warmup and clipping; 60 examples (30 per rank: 7 updates of 4 per
    epoch, so the 20 steps cross two epoch boundaries); DDP's golden run of 20 steps on 2 ranks.
    Written into `tmp` (bert/ and train.safetensors); scripts/multi-gpu-check.sh replays it on 2
    GPUs (bench/ddp_bert.py writes it)."""
    from transformers import BertConfig, BertForQuestionAnswering
    tmp = pathlib.Path(tmp)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=512, hidden_size=128, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=512, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                     max_position_embeddings=64)
    model = BertForQuestionAnswering(cfg)
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    rest = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=1e-3)
    sched = warpforge.linear_warmup_decay(opt, num_warmup_steps=3, num_training_steps=40)
    features = _bert_features()
    data = tmp / "train.safetensors"
    save_file(features, str(data))
    pkg = tmp / "bert"
    t0 = time.time()
    warpforge.export_training(model, tuple(v[:4] for v in features.values()), qa_loss, pkg, opt, lr_schedule=sched,
                              golden_steps=STEPS, grad_clip=1.0, batch_names=NAMES, warpforge_binary=warpforge_binary,
                              world_size=2, golden_data=data, golden_seed=7)
    print(f"export with the DDP golden run: {time.time() - t0:.1f} s")
    return pkg, data


def _launch(n, *command, env=None, timeout=600):
    proc = subprocess.run([WARPFORGE, "launch", "-n", str(n), "--", WARPFORGE, *command], capture_output=True,
                          text=True, timeout=timeout, env=env)
    return proc


def _golden(pkg, rank, key):
    return load_file(str(pkg / "golden" / "ddp" / f"rank{rank}" / f"{key}.safetensors"))


SLOW = pytest.mark.skipif(os.environ.get("WF_SKIP_SLOW") == "1", reason="WF_SKIP_SLOW=1")


@SLOW
def test_bert_ddp_golden_validates_rank_by_rank(bert_ddp):
    pkg, _ = bert_ddp
    man = json.loads((pkg / "manifest.json").read_text())["training"]["golden_ddp"]
    assert man["world_size"] == 2 and man["steps"] == STEPS and man["backend"] == "gloo"
    # the two ranks saw different batches, and their gradients before the all-reduce differ
    b0, b1 = _golden(pkg, 0, "batches"), _golden(pkg, 1, "batches")
    assert not torch.equal(b0["1.input_ids"], b1["1.input_ids"])
    g0, g1 = _golden(pkg, 0, "grads"), _golden(pkg, 1, "grads")
    assert not torch.equal(g0["1.qa_outputs.weight"], g1["1.qa_outputs.weight"])
    t0 = time.time()
    proc = _launch(2, "validate", str(pkg), "--training", "--json")
    seconds = time.time() - t0
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    reports = {k: json.loads(v) for k, v in by_rank(proc.stdout).items()}
    assert sorted(reports) == [0, 1]
    for rank, report in reports.items():
        assert report["pass"] and report["rank"] == rank and report["world_size"] == 2, report.get("first_divergence")
        kinds = {c["kind"] for c in report["checks"]}
        assert kinds == {"loss", "gradient", "weight", "optimizer_state"}
        losses = [c for c in report["checks"] if c["kind"] == "loss"]
        grads = [c for c in report["checks"] if c["kind"] == "gradient"]
        assert len(losses) == STEPS and len({c["step"] for c in grads}) == STEPS
        finals = [c for c in report["checks"] if c["kind"] == "weight" and c["step"] == STEPS]
        assert finals
        plain = [c for c in finals if "arbitrated" not in c]
        print(f"rank {rank}: max rel loss error {max(c['max_rel_err'] for c in losses):.2e}; gradients before the "
              f"all-reduce max abs {max(c['max_abs_err'] for c in grads):.2e}, max rel "
              f"{max(c['max_rel_err'] for c in grads):.2e}; weights after {STEPS} steps max abs "
              f"{max(c['max_abs_err'] for c in plain):.2e} ({len(finals) - len(plain)} tensors with rounding-noise "
              f"gradients arbitrated; {len(grads)} gradient checks; validate {seconds:.1f} s)")


def _check_weights(pkg, ckpt):
    """The checkpoint's weights against DDP's after the last golden step (1e-4 / 1e-6), with
    `validate --training`'s rule for elements whose gradient was rounding noise at some step (an
    attention key bias has an exact gradient of 0: Adam's update of such an element is arbitrary, up
    to about lr a step). Returns the largest absolute error of the other elements."""
    man = json.loads((pkg / "manifest.json").read_text())["training"]
    lr_sum = _golden(pkg, 0, "lr")["lr"].max(dim=1).values.sum().item()
    b1, b2 = man["optimizer"]["param_groups"][0].get("betas", (0.9, 0.999))
    allowed = 1e-6 + 2 * lr_sum * max(1.0, (1 - b1) / (1 - b2) ** 0.5)
    averaged = _golden(pkg, 0, "averaged_grads")
    worst = 0.0
    for name, want in _golden(pkg, 0, "weights_final").items():
        have = ckpt[f"weight.{name}"]
        err = (have - want).abs()
        bad = err > 1e-6 + 1e-4 * want.abs()
        steps = [g for k, g in averaged.items() if k.split(".", 1)[1] == name]
        noise = torch.stack(steps).abs().amin(0) <= 1e-5 if steps else torch.zeros_like(bad)
        assert not (bad & ~noise).any(), f"{name}: {int((bad & ~noise).sum())} elements differ, max {err.max():.3g}"
        assert (err[bad] <= allowed).all(), f"{name}: noise-level elements differ by {err[bad].max():.3g} > {allowed:.3g}"
        worst = max(worst, err[~noise].max().item() if (~noise).any() else 0.0)
    return worst


def _compare_run(pkg, run_dir, steps):
    curve = json.loads((run_dir / "loss_curve.json").read_text())
    assert curve["world_size"] == 2 and len(curve["steps"]) == steps
    golden = [_golden(pkg, r, "loss")["loss"].double() for r in range(2)]
    worst = 0.0
    for row in curve["steps"]:
        s = row["step"]
        assert row["loss"] == row["rank_losses"][0]  # the loss reported is rank 0's
        for r in range(2):
            want = golden[r][s - 1].item()
            rel = abs(row["rank_losses"][r] - want) / abs(want)
            worst = max(worst, rel)
            assert rel <= 1e-4, f"step {s} rank {r}: {row['rank_losses'][r]} vs DDP {want}"
    ckpt = load_file(str(run_dir / "checkpoint.safetensors"))
    weight_err = _check_weights(pkg, ckpt) if steps == STEPS else 0.0
    return worst, weight_err


@SLOW
def test_bert_trains_on_two_ranks_like_ddp(bert_ddp, tmp_path):
    pkg, data = bert_ddp
    run = tmp_path / "run"
    t0 = time.time()
    proc = _launch(2, "train", str(pkg), "--data", str(data), "--steps", str(STEPS), "--seed", "7",
                   "--checkpoint-dir", str(run))
    seconds = time.time() - t0
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    worst, weight_err = _compare_run(pkg, run, STEPS)
    curve = json.loads((run / "loss_curve.json").read_text())
    assert len(curve["gradient_buckets"]) >= 1
    # only rank 0 wrote and printed
    assert "[rank 1] step" not in proc.stderr and "[rank 0] step 20/20" in proc.stderr
    print(f"warpforge launch -n 2 train: {STEPS} steps in {seconds:.1f} s; max rel loss error over both ranks "
          f"{worst:.2e}; weights after {STEPS} steps max abs error {weight_err:.2e}")


@SLOW
def test_bert_trains_under_torchrun(bert_ddp, tmp_path):
    torchrun = shutil.which("torchrun") or str(pathlib.Path(sys.executable).parent / "torchrun")
    if not os.path.exists(torchrun):
        pytest.skip("torchrun is not installed")
    pkg, data = bert_ddp
    run = tmp_path / "run"
    proc = subprocess.run([torchrun, "--standalone", "--nproc-per-node", "2", "--no-python", WARPFORGE, "train",
                           str(pkg), "--data", str(data), "--steps", "6", "--seed", "7", "--checkpoint-dir", str(run)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    _compare_run(pkg, run, 6)


def test_world_size_one_runs_the_data_parallel_step(tmp_path):
    """WORLD_SIZE=1 set explicitly: the data-parallel step at a world of one (an all_reduce over
    one rank, gradients divided by 1) trains exactly as the plain step does, and a resumed run
    continues it."""
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(3)
    data = {"x": torch.randn(40, 6, generator=g), "y": torch.randint(0, 4, (40,), generator=g)}
    pkg = tmp_path / "mlp"
    warpforge.export_training(model, (data["x"][:4], data["y"][:4]), ce_loss, pkg, opt, golden_steps=2,
                              batch_names=["x", "y"], warpforge_binary=WARPFORGE)
    save_file(data, str(tmp_path / "data.safetensors"))
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}

    def train(out, world, *extra):
        env = dict(clean, WORLD_SIZE="1") if world else clean
        proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(tmp_path / "data.safetensors"),
                               "--checkpoint-dir", str(tmp_path / out), *extra], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads((tmp_path / out / "loss_curve.json").read_text())

    plain = train("plain", False, "--steps", "15")
    dp = train("dp", True, "--steps", "15")
    assert "gradient_buckets" not in plain and dp["world_size"] == 1
    assert [s["loss"] for s in dp["steps"]] == [s["loss"] for s in plain["steps"]]
    assert dp["gradient_buckets"] == [["fc2.bias", "fc2.weight", "norm.bias", "norm.weight", "fc1.bias", "fc1.weight"]]
    train("dp_resumed", True, "--steps", "6")
    resumed = train("dp_resumed", True, "--steps", "15", "--resume")
    assert [s["loss"] for s in resumed["steps"]] == [s["loss"] for s in plain["steps"]]


class Mixed(nn.Module):
    """Parameters of mixed sizes: an embedding (1.5 MB), large and small linear layers, a norm."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(3000, 128)
        self.up = nn.Linear(128, 2048)
        self.norm = nn.LayerNorm(2048)
        self.big = nn.Linear(2048, 2048)  # 16 MB
        self.mid = nn.Linear(2048, 1024)  # 8 MB
        self.big2 = nn.Linear(1024, 2048)  # 8 MB
        self.head = nn.Linear(2048, 8)

    def forward(self, ids):
        h = self.embed(ids).mean(1)
        h = torch.relu(self.norm(self.up(h)))
        return self.head(torch.relu(self.big2(torch.relu(self.mid(torch.relu(self.big(h)))))))


def mixed_loss(model, ids, y):
    return F.cross_entropy(model(ids), y)


def test_bucket_assignment_matches_ddp(tmp_path):
    """WarpForge's gradient buckets for a model of mixed parameter sizes (35 MB in all) are
    torch's compute_bucket_assignment_by_size over the parameters in reverse order of registration
    with DDP's limits (a first bucket of 1 MB, then 25 MB), and the buckets DDP itself all-reduced
    (its communication hook's, at world size 1) hold the same parameters."""
    import torch.distributed as dist
    torch.manual_seed(0)
    model = Mixed()
    g = torch.Generator().manual_seed(2)
    data = {"ids": torch.randint(0, 3000, (8, 6), generator=g), "y": torch.randint(0, 8, (8,), generator=g)}
    pkg = tmp_path / "mixed"
    warpforge.export_training(model, (data["ids"][:2], data["y"][:2]), mixed_loss, pkg,
                              torch.optim.SGD(model.parameters(), lr=0.01), golden_steps=2, batch_names=["ids", "y"],
                              warpforge_binary=WARPFORGE, world_size=1, golden_data=data)
    save_file(data, str(tmp_path / "data.safetensors"))
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "MASTER_ADDR", "MASTER_PORT")}
    proc = subprocess.run([WARPFORGE, "train", str(pkg), "--data", str(tmp_path / "data.safetensors"), "--steps", "1",
                           "--checkpoint-dir", str(tmp_path / "run")], env=dict(env, WORLD_SIZE="1"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    ours = json.loads((tmp_path / "run" / "loss_curve.json").read_text())["gradient_buckets"]

    names = [n for n, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    order = list(reversed(range(len(params))))
    buckets, _ = dist._compute_bucket_assignment_by_size([params[i] for i in order],
                                                        [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 1024 * 1024],
                                                        [False] * len(params), order)
    torchs = [[names[i] for i in b] for b in buckets]
    assert ours == torchs
    assert len(ours) >= 3 and ours[0] == ["head.bias", "head.weight", "big2.bias", "big2.weight"]
    ddp = json.loads((pkg / "manifest.json").read_text())["training"]["golden_ddp"]["buckets"]
    assert [sorted(b) for b in ddp] == [sorted(b) for b in ours]


def test_accumulation_matches_ddp_no_sync(tmp_path):
    """K = 2 micro-batches per update on 2 ranks: the data-parallel accumulating step against DDP
    with no_sync on the first micro-batch: each micro-batch's loss, each rank's accumulated
    gradient before the all-reduce, the weights; and `warpforge train --accumulate` likewise."""
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # a wrong gradient scale shows
    g = torch.Generator().manual_seed(4)
    data = {"x": torch.randn(48, 6, generator=g), "y": torch.randint(0, 4, (48,), generator=g)}
    save_file(data, str(tmp_path / "data.safetensors"))
    pkg = tmp_path / "acc"
    warpforge.export_training(model, (data["x"][:8], data["y"][:8]), ce_loss, pkg, opt, golden_steps=6,
                              batch_names=["x", "y"], accumulation_steps=2, warpforge_binary=WARPFORGE, world_size=2,
                              golden_data=data, golden_seed=3)
    assert "micro_loss" in _golden(pkg, 0, "loss")
    proc = _launch(2, "validate", str(pkg), "--training", "--json")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    for rank, text in by_rank(proc.stdout).items():
        report = json.loads(text)
        assert report["pass"], report.get("first_divergence")
        assert len([c for c in report["checks"] if c["name"].startswith("micro-batch")]) == 12
    run = tmp_path / "run"
    proc = _launch(2, "train", str(pkg), "--data", str(tmp_path / "data.safetensors"), "--steps", "6", "--seed", "3",
                   "--checkpoint-dir", str(run))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    curve = json.loads((run / "loss_curve.json").read_text())
    for r in range(2):
        want = _golden(pkg, r, "loss")["loss"].double()
        have = torch.tensor([row["rank_losses"][r] for row in curve["steps"]], dtype=torch.float64)
        torch.testing.assert_close(have, want, rtol=1e-4, atol=1e-6)
    _check_weights(pkg, load_file(str(run / "checkpoint.safetensors")))


def test_bf16_autocast_ddp_golden_validates_rank_by_rank(tmp_path):
    """bf16 autocast on 2 ranks: DDP's golden run in bf16 beside a float64 twin of itself (a second
    DDP model on the same process group); each rank's loss of every step, its step-1 gradients
    before the all-reduce, weights and AdamW state after steps 1 and 6 judged against its float64
    twin by PyTorch's own bf16 error (the mixed-precision rule, rank by rank)."""
    torch.manual_seed(0)
    model = MLP()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    g = torch.Generator().manual_seed(5)
    data = {"x": torch.randn(256, 6, generator=g), "y": torch.randint(0, 4, (256,), generator=g)}
    pkg = tmp_path / "bf16"
    warpforge.export_training(model, (data["x"][:32], data["y"][:32]), ce_loss, pkg, opt, golden_steps=6,
                              batch_names=["x", "y"], warpforge_binary=WARPFORGE, world_size=2, golden_data=data,
                              autocast=torch.bfloat16, single_golden_steps=1)
    training = json.loads((pkg / "manifest.json").read_text())["training"]
    # the single-process golden run kept to its first step (single_golden_steps), the DDP run whole
    assert training["golden"]["steps"] == 1 and training["golden_ddp"]["steps"] == 6
    single = subprocess.run([WARPFORGE, "validate", str(pkg), "--training"], capture_output=True, text=True)
    assert single.returncode == 0, single.stdout[-3000:] + single.stderr[-3000:]
    ranks = training["golden_ddp"]["ranks"]
    for r, entry in enumerate(ranks):
        lp = entry["low_precision"]
        assert lp["dtype"] == "bf16" and lp["reference"] == "float64" and len(lp["torch_error"]["loss"]) == 6
        # the twin ran in float64 (its losses kept so), and PyTorch's bf16 run is off it by bf16 rounding
        assert load_file(str(pkg / lp["reference_loss"]))["loss"].dtype == torch.float64
        ref = load_file(str(pkg / lp["reference_weights_final"]))
        assert lp["stored_as"] == "f32" and all(v.dtype == torch.float32 for v in ref.values())
        assert not torch.equal(ref["fc1.weight"], _golden(pkg, r, "weights_final")["fc1.weight"])
        assert 1e-5 < max(lp["torch_error"]["loss"]) < 5e-2
    proc = _launch(2, "validate", str(pkg), "--training", "--json")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    reports = {k: json.loads(v) for k, v in by_rank(proc.stdout).items()}
    assert sorted(reports) == [0, 1]
    for rank, report in reports.items():
        assert report["pass"] and report["rank"] == rank, report.get("first_divergence")
        assert {c["kind"] for c in report["checks"]} == {"loss", "gradient", "weight", "optimizer_state"}
        assert len([c for c in report["checks"] if c["kind"] == "loss"]) == 6
        assert all(c.get("rule") for c in report["checks"])
    # the ranks' reports differ: each is judged on its own share of the data
    l0 = [c["loss"] for c in reports[0]["checks"] if c["kind"] == "loss"]
    l1 = [c["loss"] for c in reports[1]["checks"] if c["kind"] == "loss"]
    assert l0 != l1


def test_killed_rank_is_named_by_the_other(tmp_path):
    """Two ranks started as separate processes train; rank 1 is killed after a few steps; rank 0
    exits non-zero naming rank 1, within the timeout (WARPFORGE_DIST_TIMEOUT=30)."""
    torch.manual_seed(0)
    model = MLP()
    g = torch.Generator().manual_seed(3)
    data = {"x": torch.randn(400, 6, generator=g), "y": torch.randint(0, 4, (400,), generator=g)}
    pkg = tmp_path / "mlp"
    warpforge.export_training(model, (data["x"][:4], data["y"][:4]), ce_loss, pkg,
                              torch.optim.AdamW(model.parameters(), lr=1e-3), golden_steps=1, batch_names=["x", "y"],
                              warpforge_binary=WARPFORGE)
    save_file(data, str(tmp_path / "data.safetensors"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(2):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), WARPFORGE_DIST_TIMEOUT="30")
        procs.append(subprocess.Popen([WARPFORGE, "train", str(pkg), "--data", str(tmp_path / "data.safetensors"),
                                       "--epochs", "1000", "--log-every", "1", "--checkpoint-dir",
                                       str(tmp_path / "run")], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    # wait until rank 0 reports a few steps
    deadline = time.time() + 120
    seen = ""
    while time.time() < deadline:
        line = procs[0].stderr.readline()
        seen += line
        if line.startswith("step 5/"):
            break
    assert "step 5/" in seen, seen
    killed_at = time.time()
    procs[1].send_signal(signal.SIGKILL)
    procs[1].wait()
    _, err = procs[0].communicate(timeout=60)
    elapsed = time.time() - killed_at
    assert procs[0].returncode != 0, f"rank 0 succeeded:\n{err[-2000:]}"
    assert "rank 1 has left the job" in err, err[-2000:]
    assert elapsed < 30, f"rank 0 took {elapsed:.1f} s to fail"
    print(f"rank 0 failed {elapsed:.2f} s after rank 1 was killed, naming it")


def test_ranks_start_from_rank_zeros_weights_and_resume_together(tmp_path):
    """Rank 1 reads a package whose weights differ: the broadcast from rank 0 makes the run the one
    where both read rank 0's. A run checkpointed at step 4 and resumed on both ranks reproduces the
    uninterrupted run's curve and checkpoint bit for bit."""
    torch.manual_seed(0)
    model = MLP()
    g = torch.Generator().manual_seed(5)
    data = {"x": torch.randn(40, 6, generator=g), "y": torch.randint(0, 4, (40,), generator=g)}
    save_file(data, str(tmp_path / "data.safetensors"))
    pkg0 = tmp_path / "pkg0"
    warpforge.export_training(model, (data["x"][:4], data["y"][:4]), ce_loss, pkg0,
                              torch.optim.AdamW(model.parameters(), lr=1e-2), golden_steps=1,
                              batch_names=["x", "y"], warpforge_binary=WARPFORGE)
    pkg1 = tmp_path / "pkg1"
    shutil.copytree(pkg0, pkg1)
    weights = load_file(str(pkg1 / "weights.safetensors"))
    save_file({k: torch.randn_like(v) for k, v in weights.items()}, str(pkg1 / "weights.safetensors"))

    def train(pkg_pattern, out, *extra):
        command = (f'exec "{WARPFORGE}" train "{tmp_path}/{pkg_pattern}" --data "{tmp_path}/data.safetensors" '
                   f'--checkpoint-dir "{tmp_path}/{out}" ' + " ".join(extra))
        proc = subprocess.run([WARPFORGE, "launch", "-n", "2", "--", "sh", "-c", command], capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        curve = json.loads((tmp_path / out / "loss_curve.json").read_text())
        return [s["rank_losses"] for s in curve["steps"]], load_file(str(tmp_path / out / "checkpoint.safetensors"))

    same, same_ckpt = train("pkg0", "same", "--steps", "8")
    mixed, mixed_ckpt = train("pkg$RANK", "mixed", "--steps", "8")
    assert mixed == same
    assert all(torch.equal(same_ckpt[k], mixed_ckpt[k]) for k in same_ckpt)
    train("pkg0", "resumed", "--steps", "4")
    resumed, resumed_ckpt = train("pkg0", "resumed", "--steps", "8", "--resume")
    assert resumed == same
    assert all(torch.equal(same_ckpt[k], resumed_ckpt[k]) for k in same_ckpt)


def test_a_non_finite_loss_on_one_rank_stops_every_rank(tmp_path):
    """Example 1 holds a NaN; without shuffling it is in rank 1's first batch (rank 1 takes the odd
    positions). The all-reduce would carry it into every rank's weights: both ranks stop at step 1,
    rank 0 naming rank 1."""
    torch.manual_seed(0)
    model = MLP()
    g = torch.Generator().manual_seed(5)
    data = {"x": torch.randn(40, 6, generator=g), "y": torch.randint(0, 4, (40,), generator=g)}
    warpforge.export_training(model, (data["x"][:4], data["y"][:4]), ce_loss, tmp_path / "pkg",
                              torch.optim.SGD(model.parameters(), lr=0.1), golden_steps=1, batch_names=["x", "y"],
                              warpforge_binary=WARPFORGE)
    data["x"][1, 2] = float("nan")
    save_file(data, str(tmp_path / "data.safetensors"))
    proc = _launch(2, "train", str(tmp_path / "pkg"), "--data", str(tmp_path / "data.safetensors"), "--steps", "5",
                   "--no-shuffle", "--checkpoint-dir", str(tmp_path / "run"))
    assert proc.returncode != 0
    ranks = by_rank(proc.stderr)
    assert re.search(r"step 1: the loss of rank 1 is -?nan", ranks[0]), proc.stderr[-3000:]
    assert re.search(r"step 1: the loss is -?nan", ranks[1]), proc.stderr[-3000:]
