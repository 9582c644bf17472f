"""Data-parallel BERT-large QA fine-tuning on N GPUs of one host, bf16 autocast with float32 master
weights (b8 per GPU, s384, AdamW with BERT's weight-decay groups): WarpForge against PyTorch
DistributedDataParallel (nccl) on the same machine, in phases that can run in separate calls:

    python bench/ddp_bert_large.py OUT [--world-size 2] [--phase export,validate,throughput]
                                       [--layers 24] [--steps 20] [--warpforge build/warpforge]

export      export_training of the model (random weights from BertConfig, dropout off) with
            autocast=torch.bfloat16, golden_device='cuda' and a DDP golden run of --steps steps on
            --world-size ranks (each rank's losses, gradients of step 1 before the all-reduce,
            weights and AdamW state after steps 1 and --steps, beside its float64 DDP twin; the
            single-process golden run only its first step): OUT/package, OUT/data.safetensors.
validate    `warpforge launch -n N -- warpforge validate OUT/package --training --device cuda`:
            each rank replays its share of the steps and is judged rank by rank.
throughput  `warpforge train` on 1 GPU and under `warpforge launch -n N`, and PyTorch DDP on 1 and
            N GPUs (the same model, batch, precision and optimizer): median step time after
            warm-up, sequences per second, scaling efficiency (N-GPU throughput over N times the
            one-GPU throughput) and WarpForge over DDP.

Each phase adds its figures to OUT/results.json; the table printed at the end shows every figure
there.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "python"), str(REPO / "bench"), str(REPO / "python" / "tests")]
from helpers import by_rank  # noqa: E402
from train_gpu import NAMES, make_batch, make_model, make_optimizer, qa_loss, timed_steps  # noqa: E402

BATCH, SEQ, VOCAB = 8, 384, 30522


def export(out: Path, args) -> dict:
    import warpforge
    from safetensors.torch import save_file
    n = args.world_size
    examples = make_batch(BATCH * n * (args.steps + 3), SEQ, VOCAB, 1)
    data = out / "data.safetensors"
    save_file(dict(zip(NAMES, examples)), str(data))
    model = make_model(args.layers, SEQ)
    t0 = time.time()
    warpforge.export_training(model, tuple(x[:BATCH] for x in examples), qa_loss, out / "package",
                              make_optimizer(model), golden_steps=args.steps, grad_clip=None,
                              name="bert_qa_large", batch_names=NAMES, golden_device=args.device, golden_grads="first",
                              autocast=torch.bfloat16, world_size=n, golden_data=str(data), golden_seed=0,
                              single_golden_steps=1, warpforge_binary=args.warpforge)
    seconds = time.time() - t0
    print(f"exported {out / 'package'} in {seconds:.0f} s", flush=True)
    return {"export_seconds": seconds}


def export_light(out: Path, args) -> Path:
    """The same programs without the golden runs' weight (one single-process golden step, no DDP
    run): what the throughput phase trains when the export phase has not run here."""
    import warpforge
    from safetensors.torch import save_file
    examples = make_batch(BATCH * args.world_size * (args.steps + 3), SEQ, VOCAB, 1)
    save_file(dict(zip(NAMES, examples)), str(out / "data.safetensors"))
    model = make_model(args.layers, SEQ)
    t0 = time.time()
    warpforge.export_training(model, tuple(x[:BATCH] for x in examples), qa_loss, out / "package-light",
                              make_optimizer(model), golden_steps=1, grad_clip=None, name="bert_qa_large",
                              batch_names=NAMES, golden_device=args.device, golden_grads="first",
                              autocast=torch.bfloat16, warpforge_binary=args.warpforge)
    print(f"exported {out / 'package-light'} (no DDP golden run) in {time.time() - t0:.0f} s", flush=True)
    return out / "package-light"


def validate(out: Path, args) -> dict:
    t0 = time.time()
    proc = subprocess.run([args.warpforge, "launch", "-n", str(args.world_size), "--", args.warpforge, "validate",
                           str(out / "package"), "--training", "--device", args.device, "--json"],
                          capture_output=True, text=True)
    seconds = time.time() - t0
    (out / "validate.log").write_text(proc.stdout + proc.stderr)
    figures = {"validate_seconds": seconds, "validate_exit": proc.returncode, "ranks": {}}
    for rank, text in sorted(by_rank(proc.stdout).items()):
        try:
            report = json.loads(text)
        except json.JSONDecodeError:
            figures["ranks"][rank] = {"error": text[-500:]}
            continue
        rows = {}
        for kind in ("loss", "gradient", "weight", "optimizer_state"):
            checks = [c for c in report["checks"] if c["kind"] == kind]
            if not checks:
                continue
            # Rows pass by the bf16 rule (rel_l2 within 2x PyTorch's own) or by the float32 tolerance
            # against the float64 reference (a true value of about zero: a relative error means nothing)
            by_rule = [c for c in checks if str(c.get("rule", "")).startswith("rel_l2")]
            row = {"passed": sum(c["pass"] for c in checks), "total": len(checks), "by_bf16_rule": len(by_rule)}
            if by_rule:
                worst = max(by_rule, key=lambda c: (c.get("rel_l2") or 0) / max(c.get("rel_l2_limit") or 1e-30, 1e-30))
                row["worst"] = (f"step {worst['step']} '{worst['name']}': rel_l2 {worst['rel_l2']:.3g}, limit "
                                f"{worst['rel_l2_limit']:.3g} (PyTorch's own {worst['torch_rel_l2']:.3g})")
            rows[kind] = row
        figures["ranks"][rank] = {"pass": report["pass"], "checks": rows,
                                  "first_divergence": report.get("first_divergence")}
        print(f"rank {rank}: {'PASS' if report['pass'] else 'FAIL'} "
              + "; ".join(f"{k} {v['passed']}/{v['total']}" for k, v in rows.items()), flush=True)
    if proc.returncode != 0 and not figures["ranks"]:
        print(proc.stdout[-3000:], proc.stderr[-3000:], flush=True)
    return figures


def warpforge_train(out: Path, args, ranks: int, package: Path, env: dict | None = None, tag: str = "") -> dict:
    """`warpforge train` of `package` on `ranks` GPUs, with `env` added to the environment."""
    run = out / f"run-wf{ranks}{tag}"
    launch = [args.warpforge, "launch", "-n", str(ranks), "--"] if ranks > 1 else []
    t0 = time.time()
    proc = subprocess.run(launch + [args.warpforge, "train", str(package), "--data",
                                    str(out / "data.safetensors"), "--steps", str(args.steps + 3), "--device", "cuda",
                                    "--checkpoint-dir", str(run), "--log-every", "10"], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-3000:], flush=True)
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    curve = json.loads((run / "loss_curve.json").read_text())
    ms = statistics.median(s["ms"] for s in curve["steps"][3:])
    print(f"WarpForge, {ranks} GPU(s): {ms:.1f} ms/step ({time.time() - t0:.0f} s in all)", flush=True)
    return {"ms": ms, "device_bytes": curve.get("device_bytes_in_use", 0)}


def _torch_rank(rank, world, port, layers, steps, result):
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    torch.cuda.set_device(rank)
    if world > 1:
        dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    model = make_model(layers, SEQ).cuda().train()
    opt = make_optimizer(model)
    fwd = DistributedDataParallel(model, device_ids=[rank]) if world > 1 else model
    ms = timed_steps(fwd, opt, tuple(x.cuda() for x in make_batch(BATCH, SEQ, VOCAB, 10 + rank)), steps,
                     autocast=torch.bfloat16)
    if rank == 0:
        Path(result).write_text(json.dumps({"ms": ms,
                                            "peak_bytes": torch.cuda.max_memory_allocated()}))
    if world > 1:
        dist.destroy_process_group()


def torch_train(out: Path, args, ranks: int) -> dict:
    import torch.multiprocessing as mp
    from warpforge.training_ddp import _free_port
    result = out / f"torch{ranks}.json"
    mp.start_processes(_torch_rank, args=(ranks, _free_port(), args.layers, args.steps, str(result)), nprocs=ranks,
                       join=True, start_method="spawn")
    figures = json.loads(result.read_text())
    print(f"PyTorch {'DDP' if ranks > 1 else 'eager'}, {ranks} GPU(s): {figures['ms']:.1f} ms/step", flush=True)
    return figures


def print_table(results: dict, args) -> None:
    print()
    print(f"BERT-large QA fine-tuning, bf16 autocast, fp32 master weights, AdamW, b{BATCH} per GPU, s{SEQ}, "
          f"median of {args.steps} steps, "
          + (f"{torch.cuda.get_device_name()} x {torch.cuda.device_count()}" if torch.cuda.is_available() else "CPU"))
    print("| run | GPUs | ms/step | sequences/s | scaling efficiency | WarpForge / PyTorch |")
    print("|---|---|---|---|---|---|")
    tp = results.get("throughput", {})
    for who in ("WarpForge", "PyTorch"):
        one = tp.get(f"{who} 1", {}).get("ms")
        for n in (1, args.world_size):
            f = tp.get(f"{who} {n}", {})
            if "ms" not in f:
                continue
            seqs = n * BATCH * 1000 / f["ms"]
            eff = f"{one / f['ms']:.1%}" if one and n > 1 else ""
            theirs = tp.get(f"PyTorch {n}", {}).get("ms")
            ratio = f"{theirs / f['ms']:.2f}x" if who == "WarpForge" and theirs else ""
            print(f"| {who}{' DDP' if who == 'PyTorch' and n > 1 else ''} | {n} | {f['ms']:.1f} | {seqs:.1f} | {eff} | "
                  f"{ratio} |")
    v = results.get("validate")
    if v:
        print(f"\nvalidate --training, {args.world_size} ranks ({args.device}) against PyTorch DDP ({args.steps} steps), "
              f"exit {v['validate_exit']}:")
        for rank, r in sorted(v["ranks"].items(), key=lambda kv: int(kv[0])):
            if "error" in r:
                print(f"  rank {rank}: {r['error']}")
                continue
            print(f"  rank {rank}: {'PASS' if r['pass'] else 'FAIL: ' + str(r['first_divergence'])}")
            for kind, c in r["checks"].items():
                print(f"    {kind}: {c['passed']}/{c['total']} pass, {c['by_bf16_rule']} judged by the bf16 rule"
                      + (f"; closest to its limit: {c['worst']}" if "worst" in c else
                         " (the others within the float32 tolerance of the float64 reference)"))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--phase", default="export,validate,throughput")
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warpforge", default=os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge")))
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: the export (golden runs on gloo) and validation on the CPU, to try the script "
                        "without GPUs (no throughput)")
    args = p.parse_args(argv)
    phases = [x for x in args.phase.split(",") if x]
    unknown = set(phases) - {"export", "validate", "throughput"}
    if unknown:
        p.error(f"unknown phase(s) {sorted(unknown)}")
    if args.device == "cpu" and "throughput" in phases:
        p.error("--device cpu: the throughput phase runs on GPUs only")
    if args.device == "cuda" and torch.cuda.device_count() < args.world_size:
        p.error(f"--world-size {args.world_size}: PyTorch sees {torch.cuda.device_count()} GPU(s)")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    results = json.loads(path.read_text()) if path.exists() else {}

    def save():
        path.write_text(json.dumps(results, indent=1))

    if "export" in phases:
        results["export"] = export(args.out, args)
        save()
    if "validate" in phases:
        results["validate"] = validate(args.out, args)
        save()
    if "throughput" in phases:
        tp = results.setdefault("throughput", {})
        package = args.out / "package"
        if not (package / "manifest.json").exists():
            package = export_light(args.out, args)
        for n in (1, args.world_size):
            tp[f"WarpForge {n}"] = warpforge_train(args.out, args, n, package)
            save()
        for n in (1, args.world_size):
            tp[f"PyTorch {n}"] = torch_train(args.out, args, n)
            save()
    print_table(results, args)
    ok = all(r.get("pass") for r in results.get("validate", {}).get("ranks", {}).values()) \
        if "validate" in results else True
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
