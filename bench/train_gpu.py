"""Training-step benchmark on the GPU: BERT-large question answering (b8, s384, AdamW) or ResNet-50
classification (b32, 224x224, SGD with momentum, channels-last on the PyTorch side), WarpForge
beside PyTorch eager and torch.compile on the same model, batch and precision, in one run.

    python bench/train_gpu.py [--model bert-large|resnet50] [--layers 24] [--batch 8] [--seq 384] [--steps 30]
                              [--out /tmp/wf-train-gpu] [--profile] [--precision fp32|bf16] [--data-parallel 1,2]
                              [--compare-graphs]

1. PyTorch eager and torch.compile: forward + backward + AdamW step (foreach), true fp32 (TF32 off)
   or bf16 autocast with fp32 master weights (--precision bf16: torch.autocast on both sides),
   median step time after warm-up, peak memory (torch.cuda.max_memory_allocated);
2. WarpForge: export_training of the same model (random weights from BertConfig, dropout off) with 20
   golden PyTorch steps on the GPU; `warpforge validate --training --device cuda` (loss of every
   step, gradients of step 1, weights and optimizer state after steps 1 and 20); `warpforge train
   --device cuda` for --steps steps, median step time and the device memory the trainer holds.
Prints one table (markdown) and writes --json.
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
sys.path.insert(0, str(REPO / "python"))
import warpforge  # noqa: E402
from safetensors.torch import save_file  # noqa: E402

NAMES = ["input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions"]
IMAGE_NAMES = ["images", "labels"]


def qa_loss(model, ids, tt, am, sp, ep):
    return model(input_ids=ids, token_type_ids=tt, attention_mask=am, start_positions=sp, end_positions=ep).loss


def make_model(layers, seq):
    from transformers import BertConfig, BertForQuestionAnswering
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=1024, num_hidden_layers=layers, num_attention_heads=16, intermediate_size=4096,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, max_position_embeddings=max(512, seq))
    return BertForQuestionAnswering(cfg)


def classify_loss(model, images, labels):
    return torch.nn.functional.cross_entropy(model(images), labels)


def make_resnet50():
    import torchvision
    torch.manual_seed(0)
    return torchvision.models.resnet50(num_classes=1000)


def make_image_batch(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 224, 224, generator=g), torch.randint(0, 1000, (n,), generator=g)


def make_sgd(model, lr=0.1):
    """torchvision's reference recipe: SGD, momentum 0.9, weight decay 1e-4."""
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)


def make_optimizer(model, lr=3e-5):
    decay = [p for n, p in model.named_parameters() if not (n.endswith("bias") or "LayerNorm" in n)]
    rest = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}], lr=lr)


def make_batch(n, seq, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, vocab, (n, seq), generator=g), torch.zeros(n, seq, dtype=torch.int64),
            torch.ones(n, seq, dtype=torch.int64), torch.randint(0, seq, (n,), generator=g),
            torch.randint(0, seq, (n,), generator=g))


def timed_steps(fwd, opt, batch, steps, autocast=None, loss_fn=qa_loss) -> float:
    """Median ms of `steps` PyTorch training steps (forward and loss, optionally under CUDA
    autocast, backward, optimizer step) after 3 warm-up steps, each timed between synchronisations."""
    times = []
    for i in range(steps + 3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=autocast, enabled=autocast is not None):
            loss = loss_fn(fwd, *batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        if i >= 3:
            times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def torch_steps(model, batch, steps, compiled, autocast=None, images=False, channels_last=True,
                cudnn_benchmark=False):
    """PyTorch's median step and peak memory. ResNet-50 runs channels-last (model and images), the
    layout PyTorch's cuDNN convolutions are fastest in, unless `channels_last` is off;
    `cudnn_benchmark` times cuDNN's algorithms per shape instead of taking its heuristics' choice."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = cudnn_benchmark
    m = model.cuda().train()
    if images and channels_last:
        m = m.to(memory_format=torch.channels_last)
        batch = (batch[0].to(memory_format=torch.channels_last),) + tuple(batch[1:])
    opt = make_sgd(m) if images else make_optimizer(m)
    fwd = torch.compile(m) if compiled else m
    torch.cuda.reset_peak_memory_stats()
    ms = timed_steps(fwd, opt, tuple(x.cuda() for x in batch), steps, autocast=autocast,
                     loss_fn=classify_loss if images else qa_loss)
    peak = torch.cuda.max_memory_allocated()
    m.cpu()
    del opt
    torch.cuda.empty_cache()
    return ms, peak


KERNEL_KINDS = [  # (kind, substrings of a CUDA kernel's name), first match wins
    ("convolution filter gradient", ("wgrad", "convolve_bwd_filter", "bwd_filter")),
    ("convolution data gradient", ("dgrad", "convolve_bwd_data", "bwd_data")),
    ("convolution forward", ("fprop", "implicit_gemm", "conv2d", "convolve", "winograd", "xmma_fprop", "sm90_xmma")),
    ("batch norm", ("batch_norm", "bn_fw", "bn_bw", "batchnorm")),
    ("pooling", ("pool",)),
    ("matmul", ("gemm", "cutlass", "sm90_")),
    ("optimizer", ("multi_tensor", "foreach", "sgd", "adam")),
    ("reduction", ("reduce",)),
    ("elementwise", ("elementwise", "vectorized", "unrolled")),
]


def torch_kernel_profile(model, batch, autocast, images, steps=5):
    """PyTorch eager's GPU kernel time per step by kind and its 25 costliest kernels (torch.profiler
    over `steps` steps after warm-up), to set beside `warpforge train --profile`."""
    from torch.profiler import ProfilerActivity, profile
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = model.cuda().train()
    if images:
        m = m.to(memory_format=torch.channels_last)
        batch = (batch[0].to(memory_format=torch.channels_last),) + tuple(batch[1:])
    opt = make_sgd(m) if images else make_optimizer(m)
    batch = tuple(x.cuda() for x in batch)
    loss_fn = classify_loss if images else qa_loss
    timed_steps(m, opt, batch, 2, autocast=autocast, loss_fn=loss_fn)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        timed_steps(m, opt, batch, steps - 3, autocast=autocast, loss_fn=loss_fn)  # 3 warm-up + (steps - 3)
    kernels: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0:
            kernels.setdefault(e.name, []).append(e.device_time / 1000 / steps)
    kinds: dict[str, float] = {}
    for name, times in kernels.items():
        lower = name.lower()
        kind = next((k for k, keys in KERNEL_KINDS if any(key in lower for key in keys)), "other")
        kinds[kind] = kinds.get(kind, 0.0) + sum(times)
    total = sum(kinds.values())
    print(f"PyTorch eager kernel time per step: {total:.2f} ms")
    for kind, ms in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"  {kind:<32} {ms:8.3f} ms  {ms / total:6.1%}")
    print("  costliest kernels (ms per step, launches per step):")
    for name, times in sorted(kernels.items(), key=lambda kv: -sum(kv[1]))[:25]:
        print(f"    {sum(times):7.3f}  {len(times) / steps:5.0f}  {name[:150]}")
    m.cpu()
    del opt
    torch.cuda.empty_cache()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=["bert-large", "resnet50"], default="bert-large")
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--batch", type=int, default=None, help="default: 8 (BERT-large), 32 (ResNet-50)")
    p.add_argument("--seq", type=int, default=384)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--golden-steps", type=int, default=None,
                   help="PyTorch steps recorded and replayed by validate (default: 20 for BERT-large, 3 for ResNet-50)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="true fp32, or bf16 autocast with fp32 master weights (export_training(autocast=...))")
    p.add_argument("--out", default="/tmp/wf-train-gpu")
    p.add_argument("--warpforge", default=os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge")))
    p.add_argument("--skip-torch", action="store_true")
    p.add_argument("--torch-variants", action="store_true",
                   help="ResNet-50: also PyTorch eager in NCHW and with cudnn.benchmark, beside its channels-last "
                        "heuristic run")
    p.add_argument("--skip-validate", action="store_true")
    p.add_argument("--profile", action="store_true",
                   help="also run `warpforge train --profile` (per-op times, memory plan) and print it; "
                        "every op's time goes to OUT/profile/profile.json")
    p.add_argument("--torch-profile", action="store_true",
                   help="also profile PyTorch eager's step (torch.profiler): its GPU kernel time per step by kind "
                        "(convolution forward, data and filter gradients, batch norm, pooling, elementwise, ...)")
    p.add_argument("--data-parallel", default="",
                   help="comma-separated rank counts (e.g. 1,2): also run `warpforge train` as that many ranks "
                        "under `warpforge launch` (the data-parallel step: bucketed all-reduce over NCCL, one GPU "
                        "per rank, the batch per rank), beside the plain run")
    p.add_argument("--compare-graphs", action="store_true",
                   help="also run each WarpForge row step by step (--no-cuda-graphs), to see what the graphs save")
    p.add_argument("--compare-multi-tensor", action="store_true",
                   help="also run the WarpForge row with a launch per fused loop (--no-multi-tensor), to see what "
                        "running the optimizer's updates as multi-tensor launches saves")
    p.add_argument("--validate-with", action="append", default=[], metavar="FLAGS",
                   help="also run validate --training with these warpforge flags (space-separated, e.g. "
                        "'--no-matmul-epilogues'), to find which part of the plan moves a result; repeatable")
    p.add_argument("--json")
    args = p.parse_args(argv)
    images = args.model == "resnet50"
    if args.batch is None:
        args.batch = 32 if images else 8
    if args.golden_steps is None:
        args.golden_steps = 3 if images else 20
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = {}
    batch = make_image_batch(args.batch, 0) if images else make_batch(args.batch, args.seq, 30522, 0)
    autocast = torch.bfloat16 if args.precision == "bf16" else None

    def new_model():
        return make_resnet50() if images else make_model(args.layers, args.seq)

    if not args.skip_torch:
        for compiled in (False, True):
            ms, peak = torch_steps(new_model(), batch, args.steps, compiled, autocast, images)
            name = "torch.compile" if compiled else "PyTorch eager"
            figures[name] = {"ms": ms, "peak_bytes": peak}
            print(f"{name}: {ms:.1f} ms/step, peak {peak / 2**30:.2f} GiB", flush=True)
        if images and args.torch_variants:
            # Which of layout and algorithm choice sets eager's convolution time (WarpForge's
            # training step keeps activations NCHW and takes cuDNN's heuristic algorithms).
            for name, layout, tuned in (("PyTorch eager NCHW", False, False),
                                        ("PyTorch eager NCHW, cudnn.benchmark", False, True),
                                        ("PyTorch eager, cudnn.benchmark", True, True)):
                ms, peak = torch_steps(new_model(), batch, args.steps, False, autocast, images, layout, tuned)
                figures[name] = {"ms": ms, "peak_bytes": peak}
                print(f"{name}: {ms:.1f} ms/step, peak {peak / 2**30:.2f} GiB", flush=True)
            torch.backends.cudnn.benchmark = False
        if args.torch_profile:
            torch_kernel_profile(new_model(), batch, autocast, images)

    model = new_model()
    opt = make_sgd(model) if images else make_optimizer(model)
    pkg = out / "package"
    t0 = time.time()
    warpforge.export_training(model, batch, classify_loss if images else qa_loss, pkg, opt,
                              golden_steps=args.golden_steps, grad_clip=None,
                              name="resnet50" if images else "bert_qa_large", batch_names=IMAGE_NAMES if images else NAMES,
                              golden_device="cuda", golden_grads="first", autocast=autocast,
                              warpforge_binary=args.warpforge)
    print(f"exported {pkg} in {time.time() - t0:.0f}s", flush=True)
    validate_modes = [([], "")] + ([(["--no-multi-tensor"], ", a launch per loop")] if args.compare_multi_tensor else [])
    validate_modes += [(flags.split(), f" {flags}") for flags in args.validate_with]
    for extra, suffix in validate_modes if not args.skip_validate else []:
        t0 = time.time()
        # --keep-going: every step judged, so one run shows how far a divergence reaches.
        proc = subprocess.run([args.warpforge, "validate", str(pkg), "--training", "--device", "cuda", "--keep-going"] + extra,
                              capture_output=True, text=True)
        print(f"validate{suffix}:")
        print("\n".join(line for line in proc.stdout.splitlines() if "passes as" not in line)[-3000:],
              proc.stderr[-2000:], flush=True)
        figures["validate" + suffix] = {"pass": proc.returncode == 0, "seconds": time.time() - t0}

    data = out / "data.safetensors"
    examples = make_image_batch(4 * args.batch, 1) if images else make_batch(8 * args.batch, args.seq, 30522, 1)
    save_file(dict(zip(IMAGE_NAMES if images else NAMES, examples)), str(data))

    def train(name: str, run: Path, launch: list[str], extra: list[str], ranks: int = 0) -> None:
        """`warpforge train` (under `launch`, a job, when given): median step time into figures[name]."""
        t0 = time.time()
        proc = subprocess.run(launch + [args.warpforge, "train", str(pkg), "--data", str(data), "--steps",
                                        str(args.steps + 3), "--device", "cuda", "--checkpoint-dir", str(run),
                                        "--log-every", "10"] + extra, capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-3000:])
            figures[name] = {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"}
            return
        curve = json.loads((run / "loss_curve.json").read_text())
        ms = statistics.median(s["ms"] for s in curve["steps"][3:])
        figures[name] = {"ms": ms, "device_bytes": curve.get("device_bytes_in_use", 0), "seconds": time.time() - t0}
        line = f"{name}: {ms:.1f} ms/step, holds {figures[name]['device_bytes'] / 2**30:.2f} GiB"
        if ranks:
            figures[name].update(ranks=ranks, buckets=len(curve.get("gradient_buckets", [])))
            line += (f" ({ranks * args.batch * 1000 / ms:.1f} sequences/s), "
                     f"{figures[name]['buckets']} gradient buckets")
        print(line, flush=True)
        for text in proc.stderr.splitlines():
            if "compile:" in text:  # the compile time and its phases (warpforge train's first line)
                print(f"  {text.removeprefix('warpforge: ')}", flush=True)

    graph_modes = [([], "")] + ([(["--no-cuda-graphs"], ", step by step")] if args.compare_graphs else [])
    plain_modes = graph_modes + ([(["--no-multi-tensor"], ", a launch per loop")] if args.compare_multi_tensor else [])
    for extra, suffix in plain_modes:
        train("WarpForge" + suffix, out / f"run{suffix.replace(', ', '-').replace(' ', '-')}", [], extra)
    for n in [int(x) for x in args.data_parallel.split(",") if x]:
        # `launch -n 1` sets WORLD_SIZE=1: a job of one rank runs the data-parallel step too.
        for extra, suffix in graph_modes:
            train(f"WarpForge DP, {n} rank{'s' if n > 1 else ''}{suffix}",
                  out / f"run-dp{n}{suffix.replace(', ', '-').replace(' ', '-')}",
                  [args.warpforge, "launch", "-n", str(n), "--"], extra, ranks=n)

    if args.profile:
        proc = subprocess.run([args.warpforge, "train", str(pkg), "--data", str(data), "--steps", "8",
                               "--device", "cuda", "--profile", "--log-every", "0",
                               "--checkpoint-dir", str(out / "profile")], capture_output=True, text=True)
        print(proc.stdout, proc.stderr[-2000:] if proc.returncode else "", flush=True)

    print()
    precision = "true fp32" if autocast is None else "bf16 autocast, fp32 master weights"
    what = (f"ResNet-50 training step (b{args.batch}, 224x224, SGD momentum 0.9, PyTorch channels-last"
            if images else f"BERT-large QA training step (layers {args.layers}, b{args.batch}, s{args.seq}, AdamW")
    print(f"{what}, {precision}), median of {args.steps} steps, {torch.cuda.get_device_name()}")
    print("| run | ms/step | vs eager | vs compile | memory GiB |")
    print("|---|---|---|---|---|")
    eager = figures.get("PyTorch eager", {}).get("ms")
    comp = figures.get("torch.compile", {}).get("ms")
    variants = [k for k in figures if k.startswith("PyTorch eager") and k != "PyTorch eager"]
    for name in ["PyTorch eager", "torch.compile"] + variants + [k for k in figures if k.startswith("WarpForge")]:
        f = figures.get(name)
        if not f or "ms" not in f:
            continue
        mem = f.get("peak_bytes", f.get("device_bytes", 0)) / 2**30
        print(f"| {name} | {f['ms']:.1f} | {eager / f['ms'] if eager else float('nan'):.2f}x | "
              f"{comp / f['ms'] if comp else float('nan'):.2f}x | {mem:.2f} |")
    for name, f in figures.items():
        plain = figures.get("WarpForge" + (", step by step" if name.endswith("step by step") else ""), {}).get("ms")
        if name.startswith("WarpForge DP") and "ms" in f and plain:
            print(f"{name}: step {f['ms'] / plain:.3f}x the plain step; scaling efficiency "
                  f"{plain / f['ms']:.1%} ({f['ranks']} x {args.batch} sequences per step)")
    for name in [k for k in figures if k.startswith("validate")]:
        print(f"{name.replace('validate', 'validate --training on cuda', 1)} ({args.golden_steps} golden steps): "
              f"{'PASS' if figures[name]['pass'] else 'FAIL'}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
