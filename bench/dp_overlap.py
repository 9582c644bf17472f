"""How a data-parallel step's all-reduce shares the GPUs with the backward pass it overlaps:
WarpForge's BERT-large QA train step (b8 per GPU, s384, bf16 autocast, AdamW; the package of
bench/ddp_bert_large.py) on one GPU, then on N GPUs under each setting of the environment given,
in one table of median step times and scaling efficiency (one-GPU step time over N-GPU step time).

    python bench/dp_overlap.py OUT [--world-size 2] [--steps 20] [--layers 24]
                               [--setting 'LABEL=VAR=VALUE VAR=VALUE' ...]

A setting is a label and the variables its N-GPU run adds to the environment ('LABEL=' adds
none). By default: NCCL's own choices, then its thread blocks bounded (NCCL_MAX_CTAS: the SMs an
all-reduce holds while it runs beside the backward pass) to 8, 16 and 32. The package is exported
to OUT once (OUT/package-light, or OUT/package when there) and reused.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench")]
from ddp_bert_large import BATCH, export_light, warpforge_train  # noqa: E402

DEFAULT_SETTINGS = ["NCCL default="] + [f"{n} blocks=NCCL_MAX_CTAS={n}" for n in (8, 16, 32)]


def parse_setting(text: str) -> tuple[str, dict]:
    label, sep, assignments = text.partition("=")
    env = {}
    for item in assignments.split():
        name, eq, value = item.partition("=")
        if not eq or not name:
            raise ValueError(f"setting '{text}': '{item}' is not VAR=VALUE")
        env[name] = value
    if not sep or not label:
        raise ValueError(f"setting '{text}' has no label (LABEL=VAR=VALUE ...)")
    return label, env


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--layers", type=int, default=24)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--setting", action="append", help="LABEL=VAR=VALUE [VAR=VALUE ...] (repeatable)")
    p.add_argument("--warpforge", default=os.environ.get("WARPFORGE", str(REPO / "build" / "warpforge")))
    args = p.parse_args(argv)
    args.device = "cuda"
    try:
        settings = [parse_setting(s) for s in (args.setting or DEFAULT_SETTINGS)]
    except ValueError as e:
        p.error(str(e))
    args.out.mkdir(parents=True, exist_ok=True)
    package = args.out / "package"
    if not (package / "manifest.json").exists():
        package = args.out / "package-light"
        if not (package / "manifest.json").exists():
            package = export_light(args.out, args)

    one = warpforge_train(args.out, args, 1, package)
    if "error" in one:
        print(f"one GPU: {one['error']}")
        return 1
    rows = []
    for i, (label, env) in enumerate(settings):
        r = warpforge_train(args.out, args, args.world_size, package, env=env, tag=f"-setting{i}")
        rows.append((label, env, r))
    (args.out / "dp_overlap.json").write_text(json.dumps({"one_gpu": one, "settings": [
        {"label": label, "env": env, **r} for label, env, r in rows]}, indent=1))

    n = args.world_size
    print(f"\nBERT-large QA train step, b{BATCH} per GPU, bf16 autocast: 1 GPU {one['ms']:.2f} ms "
          f"({BATCH * 1000 / one['ms']:.1f} seq/s); {n} GPUs by setting (medians of {args.steps} steps)\n")
    print("| setting | environment | ms/step | sequences/s | scaling efficiency |")
    print("|---|---|---|---|---|")
    for label, env, r in rows:
        envs = " ".join(f"{k}={v}" for k, v in env.items()) or "(none)"
        if "error" in r:
            print(f"| {label} | {envs} | failed: {r['error'][:60]} | | |")
            continue
        print(f"| {label} | {envs} | {r['ms']:.2f} | {n * BATCH * 1000 / r['ms']:.1f} | "
              f"{100 * one['ms'] / r['ms']:.1f}% |")
    return 0 if all("error" not in r for _, _, r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
