"""PyTorch's own spread in low precision: how far correct bf16 runs of the same training steps land
from the float64 run, beside the golden run a training package holds. It calibrates the rules by
which `warpforge validate --training` judges a bf16 package (docs/training.md): a rule must pass
PyTorch itself run again, and torch.compile.

    python bench/train_noise.py PACKAGE [--steps 20] [--layers 24] [--seq 384] [--batch 8]

PACKAGE is the BERT-large QA package bench/train_gpu.py exports with `--precision bf16` (its
golden steps, its float64 reference). From the same initial weights (bench/train_gpu.py's model,
seed 0) and batch, the steps run again under CUDA autocast in PyTorch eager and under
torch.compile; the table gives each step's relative loss error against the float64 run, and the
largest relative error and largest distance of each run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_gpu  # noqa: E402


def run_steps(compiled: bool, steps: int, layers: int, seq: int, batch: tuple) -> torch.Tensor:
    model = train_gpu.make_model(layers, seq).cuda().train()
    opt = train_gpu.make_optimizer(model)
    fwd = torch.compile(model) if compiled else model
    losses = []
    for _ in range(steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = train_gpu.qa_loss(fwd, *batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    del model, opt
    torch.cuda.empty_cache()
    return torch.tensor(losses, dtype=torch.float64)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("package", type=Path)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--seq", type=int, default=384)
    p.add_argument("--batch", type=int, default=8)
    args = p.parse_args(argv)
    manifest = json.loads((args.package / "manifest.json").read_text())
    low = manifest["training"]["golden"].get("low_precision")
    if low is None:
        raise SystemExit(f"{args.package}: not a low-precision package (no training.golden.low_precision)")
    ref = load_file(str(args.package / "golden" / "reference_loss.safetensors"))["loss"].double()
    steps = min(args.steps, ref.numel())
    ref = ref[:steps]
    golden = load_file(str(args.package / "golden" / "loss.safetensors"))["loss"].double()[:steps]
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    batch = tuple(x.cuda() for x in train_gpu.make_batch(args.batch, args.seq, 30522, 0))
    runs = {"golden": golden,
            "eager again": run_steps(False, steps, args.layers, args.seq, batch),
            "torch.compile": run_steps(True, steps, args.layers, args.seq, batch)}
    print(f"relative loss error against float64, {steps} steps, {torch.cuda.get_device_name()}")
    print("| step | float64 loss | " + " | ".join(runs) + " |")
    print("|---" * (len(runs) + 2) + "|")
    for s in range(steps):
        errs = " | ".join(f"{(abs(r[s] - ref[s]) / abs(ref[s])).item():.3g}" for r in runs.values())
        print(f"| {s + 1} | {ref[s].item():.4g} | {errs} |")
    rel = {k: ((r - ref).abs() / ref.abs()).max().item() for k, r in runs.items()}
    dist = {k: (r - ref).abs().max().item() for k, r in runs.items()}
    print("| largest relative | | " + " | ".join(f"{v:.3g}" for v in rel.values()) + " |")
    print("| largest distance | | " + " | ".join(f"{v:.3g}" for v in dist.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
