"""The main job: export a real PyTorch model, run it on WarpForge, check it, print latency.

The model is Hugging Face transformers' GPT2LMHeadModel built from its config with random
weights (no hub access needed). `warpforge.export` writes a model package (StableHLO + safetensors
weights + manifest + PyTorch's golden outputs); `warpforge validate` runs it on WarpForge and checks
every output and every layer's activation against PyTorch under the project's tolerances;
`warpforge bench` times it, and PyTorch eager is timed on the same inputs with the same thread
count. The GPU is used when there is one (and this build has the CUDA backend), the CPU otherwise.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
import warpforge  # noqa: E402


def build_model(name: str, seq: int):
    torch.manual_seed(2026)
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        config = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
        model = GPT2LMHeadModel(config)
        inputs = (torch.randint(0, config.vocab_size, (1, seq)),)
        title = f"GPT2LMHeadModel (gpt2 config, 12 layers, random weights), tokens 1x{seq}"
    elif name == "bert":
        from transformers import BertConfig, BertModel
        config = BertConfig()
        model = BertModel(config)
        inputs = (torch.randint(0, config.vocab_size, (1, seq)),)
        title = f"BertModel (bert-base config, random weights), tokens 1x{seq}"
    elif name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50()
        inputs = (torch.randn(1, 3, 224, 224),)
        title = "torchvision resnet50 (random weights), 1x3x224x224"
    else:
        raise SystemExit(f"unknown model {name!r}: choose gpt2, bert or resnet50")
    if hasattr(model, "config"):
        model.config.use_cache = False  # export the plain forward, no KV cache outputs
    return model.eval(), inputs, title


def gpu_available(warpforge_bin: str) -> bool:
    if not torch.cuda.is_available():
        return False
    probe = subprocess.run([warpforge_bin, "validate", "--help"], capture_output=True, text=True)
    return probe.returncode == 0


def torch_latency(model, inputs, device: str, iters: int, warmup: int):
    model = model.to(device)
    inputs = tuple(x.to(device) for x in inputs)
    times = []
    with torch.no_grad():
        for i in range(warmup + iters):
            if device == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
            if i >= warmup:
                times.append(1e3 * (time.perf_counter() - t0))
    times.sort()
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]  # noqa: E731
    return {"median_ms": pick(0.5), "p10_ms": pick(0.1), "p90_ms": pick(0.9)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warpforge", default=str(REPO / "build" / "warpforge"))
    ap.add_argument("--model", default="gpt2", choices=["gpt2", "bert", "resnet50"])
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--device", default="auto", help="auto (cuda when present), cpu or cuda")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--keep", help="also keep the exported package in this directory")
    args = ap.parse_args()

    device = args.device
    if device == "auto":
        device = "cuda" if gpu_available(args.warpforge) else "cpu"
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)

    model, inputs, title = build_model(args.model, args.seq)
    with tempfile.TemporaryDirectory() as tmp:
        pkg = pathlib.Path(tmp) / args.model
        t0 = time.perf_counter()
        warpforge.export(model, inputs, pkg, name=args.model)
        export_s = time.perf_counter() - t0
        print(f"model: {title}, fp32")
        print(f"exported to a WarpForge package in {export_s:.1f} s; running on {device}")
        print()

        common = ["--device", device] + (["--threads", str(threads)] if device == "cpu" else [])
        validate = subprocess.run([args.warpforge, "validate", str(pkg), "--activations", "--device", device],
                                  text=True)
        bench = subprocess.run([args.warpforge, "bench", str(pkg), "--iters", str(args.iters),
                                "--warmup", str(args.warmup), "--json"] + common,
                               capture_output=True, text=True)
        if bench.returncode != 0:
            sys.exit(f"warpforge bench failed:\n{bench.stderr}")
        wf = json.loads(bench.stdout)["latency_ms"]
        if args.keep:
            shutil.copytree(pkg, args.keep, dirs_exist_ok=True)

    eager = torch_latency(model, inputs, device, args.iters, args.warmup)
    print()
    where = f"{device}, {threads} threads" if device == "cpu" else device
    print(f"latency ({where}, median of {args.iters} runs after {args.warmup} warm-up):")
    print("| runtime | median ms | p10 ms | p90 ms |")
    print("|---|---|---|---|")
    print(f"| WarpForge | {wf['median']:.2f} | {wf['p10']:.2f} | {wf['p90']:.2f} |")
    print(f"| PyTorch eager | {eager['median_ms']:.2f} | {eager['p10_ms']:.2f} | {eager['p90_ms']:.2f} |")
    print(f"WarpForge / PyTorch: {wf['median'] / eager['median_ms']:.2f}x")
    sys.exit(validate.returncode)


if __name__ == "__main__":
    main()
