#!/usr/bin/env python3
"""End-to-end CPU latency: BERT-base (batch 1, sequence 128) and ResNet-50 (batch 1, 224x224),
fp32, PyTorch eager vs WarpForge's CPU backend, the same thread count (default 2), the same
inputs, in one run.

Each model (random weights, fixed seed) is exported with `warpforge.export` (python/) to a model
package, timed with `warpforge bench PKG --threads N --json` (which runs the package's golden
inputs, i.e. the exact inputs PyTorch is timed on here), and timed in PyTorch with
torch.set_num_threads(N) under torch.no_grad(). Prints a table of medians and their ratio.

    python3 bench/cpu_models.py --build build [--threads 2] [--iters 20] [--models bert,resnet50]
        [--baseline OTHER_WARPFORGE_BINARY]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_bert(seq):
    import torch
    from transformers import BertConfig, BertModel
    torch.manual_seed(0)
    cfg = BertConfig()  # bert-base: 12 layers, hidden 768, 12 heads, intermediate 3072
    model = BertModel(cfg).eval()
    ids = torch.randint(0, cfg.vocab_size, (1, seq), generator=torch.Generator().manual_seed(1))
    return model, (ids,)


def make_resnet50():
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet50().eval()
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    return model, (x,)


def time_torch(model, inputs, iters, warmup):
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            model(*inputs)
        ts = []
        for _ in range(iters):
            t0 = time.perf_counter()
            model(*inputs)
            ts.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(ts))


def time_warpforge(binary, pkg, threads, iters, warmup, harness=False):
    if harness:
        env = dict(os.environ, WARPFORGE_NUM_THREADS=str(threads))
        out = subprocess.run([binary, os.path.join(pkg, "model.mlir"), "--iters", str(iters), "--warmup",
                              str(warmup)], env=env, check=True, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])["median_ms"]
    out = subprocess.run([binary, "bench", pkg, "--threads", str(threads), "--iters", str(iters),
                          "--warmup", str(warmup), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["latency_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory holding warpforge")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--models", default="bert,resnet50")
    ap.add_argument("--seq", type=int, default=128, help="BERT sequence length")
    ap.add_argument("--packages", default="", help="keep the exported packages here (default: a temp dir)")
    ap.add_argument("--baseline", default="", help="another warpforge (or, with --harness, wf_bench) binary timed on the same packages")
    ap.add_argument("--harness", default="", help="time model.mlir with this bench/wf_bench binary instead of "
                    "`warpforge bench` (random weights and inputs; for builds without the package runtime)")
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(REPO, "python"))
    import torch
    import warpforge
    torch.set_num_threads(args.threads)
    binary = args.harness or os.path.join(args.build, "warpforge")
    if not os.path.exists(binary):
        sys.exit(f"no {binary}")

    makers = {"bert": ("BERT-base (b1, s%d)" % args.seq, lambda: make_bert(args.seq)),
              "resnet50": ("ResNet-50 (b1, 224)", make_resnet50)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.packages or tmp
        for key in args.models.split(","):
            label, make = makers[key]
            model, inputs = make()
            pkg = os.path.join(root, key)
            if not os.path.exists(os.path.join(pkg, "manifest.json")):
                warpforge.export(model, inputs, pkg)
            t_ms = time_torch(model, inputs, args.iters, args.warmup)
            # PyTorch's OpenMP workers spin for a while after its last op; let them go to sleep
            # so they do not compete with the WarpForge process for the same cores.
            time.sleep(1.0)
            w_ms = time_warpforge(binary, pkg, args.threads, args.iters, args.warmup, bool(args.harness))
            b_ms = (time_warpforge(args.baseline, pkg, args.threads, args.iters, args.warmup, bool(args.harness))
                    if args.baseline else None)
            rows.append((label, t_ms, w_ms, b_ms))
            extra = f", baseline {b_ms:.2f} ms" if b_ms is not None else ""
            print(f"{label}: torch {t_ms:.2f} ms, warpforge {w_ms:.2f} ms, ratio {w_ms / t_ms:.2f}{extra}",
                  flush=True)

    print()
    print(f"fp32, {args.threads} threads, median of {args.iters} runs after {args.warmup} warm-up runs; "
          f"torch {torch.__version__}")
    base = args.baseline != ""
    head = "| model | PyTorch median ms | WarpForge median ms | ratio |"
    rule = "|---|---:|---:|---:|"
    if base:
        head += " baseline WarpForge ms | baseline ratio |"
        rule += "---:|---:|"
    print(head)
    print(rule)
    for label, t_ms, w_ms, b_ms in rows:
        line = f"| {label} | {t_ms:.2f} | {w_ms:.2f} | {w_ms / t_ms:.2f} |"
        if base:
            line += f" {b_ms:.2f} | {b_ms / t_ms:.2f} |"
        print(line)


if __name__ == "__main__":
    main()
